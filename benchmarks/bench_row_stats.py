"""Benchmark: kernels where each thread recomputes its row's or column's statistics (issue 27).

    python -m benchmarks.bench_row_stats [--rows-fraction 8] [--workers 2] [--only NAME,...]

CUDABench writes batch norm, softmax and softmin one thread per output element, each thread
walking its whole column (batch norm, 4096 x 1024, a stride of 4 KiB) or row (softmax and
softmin, 2048 x 2048, with an `expf` per element) again; at the benchmark's smallest scale they
hit `cuset eval`'s 60 s CPU limit on the cpu backend. This program has the same three kernels at
those sizes, in the same shape (32 x 32 blocks), and checks every output against the host.

Prints, side by side, for each kernel, its CPU seconds (all threads together: what the sandbox's
CPU limit counts) and wall seconds, in one process:
- `before`: the lockstep copy as it was (one warp per chunk, per-lane tests in every loop, every
  lane computing its own math): `validators.cpu.lockstep.SPEEDUPS` all off;
- `after`: the copy now (a full warp's loop without per-lane tests, math shared by a warp whose
  inputs are equal, 4 warps per chunk in blocks of a multiple of 128 threads);
- `thread loop`: the `after` binary with the copies off (`CUDASHIM_LOCKSTEP=0`).
`--rows-fraction F` computes only 1/F of the output rows (each thread still walks its whole
column or row) and scales the figures up by F; 1 runs the full size.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from validators.cpu import lockstep, toolchain

PROGRAM = r"""
#include <cuda_runtime.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
static double cpu_s() {  // the process's CPU time: every worker thread's
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}
// batch norm: each thread sums its column over every row (double), then normalises its element
__global__ void batchnorm(const float* A, const float* B, float* C, int M, int N) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    double sum = 0.0, sumsq = 0.0;
    for (int i = 0; i < M; ++i) {
      float v = A[i * N + col];
      sum += (double)v; sumsq += (double)v * (double)v;
    }
    double mean = sum / (double)M, var = sumsq / (double)M - mean * mean;
    C[row * N + col] = (A[row * N + col] - (float)mean) * rsqrtf((float)var + 1e-5f) * B[col] + B[N + col];
  }
}
// softmax (sign 1) and softmin (sign -1): each thread finds its row's maximum and sum again
__global__ void softmax(const float* A, float* C, int M, int N, float sign) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float mx = -INFINITY;
    for (int j = 0; j < N; ++j) { float v = sign * A[row * N + j]; if (v > mx) mx = v; }
    float s = 0.0f, num = 0.0f;
    for (int j = 0; j < N; ++j) {
      float v = sign * A[row * N + j];
      float e = expf(v - mx);
      if (j == col) num = e;
      s += e;
    }
    C[row * N + col] = num / s;
  }
}
int main(int argc, char** argv) {
  const char* which = argv[1];
  const int frac = atoi(argv[2]);
  const bool bn = !strcmp(which, "batchnorm");
  const int M = bn ? 4096 : 2048, N = bn ? 1024 : 2048, out_rows = M / frac;
  const size_t sz = (size_t)M * N;
  float* h = (float*)malloc(sz * sizeof(float));
  float* hb = (float*)malloc(2 * N * sizeof(float));
  float* got = (float*)malloc(sz * sizeof(float));
  for (size_t i = 0; i < sz; ++i) h[i] = (float)((i * 2654435761u) % 2001) / 500.0f - 2.0f;
  for (int i = 0; i < 2 * N; ++i) hb[i] = 0.5f + (float)(i % 7) / 8.0f;
  float *A, *B, *C;
  cudaMalloc(&A, sz * sizeof(float)); cudaMalloc(&B, 2 * N * sizeof(float)); cudaMalloc(&C, sz * sizeof(float));
  cudaMemcpy(A, h, sz * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(B, hb, 2 * N * sizeof(float), cudaMemcpyHostToDevice);
  dim3 blk(32, 32), grd(N / 32, out_rows / 32);
  auto t0 = std::chrono::steady_clock::now();
  const double c0 = cpu_s();
  if (bn) batchnorm<<<grd, blk>>>(A, B, C, M, N);
  else softmax<<<grd, blk>>>(A, C, M, N, strcmp(which, "softmin") ? 1.0f : -1.0f);
  cudaDeviceSynchronize();
  double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_s() - c0;
  cudaMemcpy(got, C, (size_t)out_rows * N * sizeof(float), cudaMemcpyDeviceToHost);
  long bad = 0;
  if (bn) {
    for (int c = 0; c < N; ++c) {
      double sum = 0.0, sumsq = 0.0;
      for (int i = 0; i < M; ++i) { float v = h[(size_t)i * N + c]; sum += (double)v; sumsq += (double)v * (double)v; }
      double mean = sum / (double)M, var = sumsq / (double)M - mean * mean;
      for (int r = 0; r < out_rows; ++r) {
        float want = (h[(size_t)r * N + c] - (float)mean) / sqrtf((float)var + 1e-5f) * hb[c] + hb[N + c];
        bad += !(fabsf(got[(size_t)r * N + c] - want) <= 1e-5f * (1.0f + fabsf(want)));
      }
    }
  } else {
    const float sign = strcmp(which, "softmin") ? 1.0f : -1.0f;
    float* e = (float*)malloc(N * sizeof(float));
    for (int r = 0; r < out_rows; ++r) {
      float mx = -INFINITY, s = 0.0f;
      for (int j = 0; j < N; ++j) { float v = sign * h[(size_t)r * N + j]; if (v > mx) mx = v; }
      for (int j = 0; j < N; ++j) { e[j] = expf(sign * h[(size_t)r * N + j] - mx); s += e[j]; }
      for (int c = 0; c < N; ++c) bad += got[(size_t)r * N + c] != e[c] / s;  // the same operations: the same bits
    }
    free(e);
  }
  printf("kernel_ms=%.1f kernel_cpu_s=%.3f bad=%ld\n", ms, cpu, bad);
  return bad != 0;
}
"""

KERNELS = ("batchnorm", "softmax", "softmin")


def build(out: Path, speedups: bool) -> Path:
    saved = dict(lockstep.SPEEDUPS)
    lockstep.SPEEDUPS.update({k: speedups for k in saved})
    try:
        made = toolchain.compile_program(PROGRAM, out, variant="plain")
    finally:
        lockstep.SPEEDUPS.update(saved)
    if not made.ok or made.exe is None:
        raise SystemExit(f"build failed:\n{made.diagnostics[-3000:]}")
    if sorted(made.rewrite.lockstep) != ["batchnorm", "softmax"]:
        raise SystemExit(f"expected lockstep copies of both kernels: {made.rewrite.lockstep_skipped}")
    return made.exe


def run(exe: Path, kernel: str, frac: int, workers: int, copies: bool) -> tuple[float, float, float]:
    """(the kernel's CPU seconds, all threads; its wall seconds; CPU seconds of the whole run);
    exits on a wrong result."""
    env = {**os.environ, "CUDASHIM_WORKERS": str(workers), "CUDASHIM_LOCKSTEP": "1" if copies else "0"}
    proc = subprocess.Popen([str(exe), kernel, str(frac)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, cwd=exe.parent)
    _, status, usage = os.wait4(proc.pid, 0)
    out, err = proc.stdout.read(), proc.stderr.read()  # type: ignore[union-attr]
    proc.stdout.close(), proc.stderr.close()  # type: ignore[union-attr]
    m = re.search(r"kernel_ms=([\d.]+) kernel_cpu_s=([\d.]+) bad=(\d+)", out)
    if status != 0 or m is None:
        raise SystemExit(f"{kernel}: wrong result or crash (status {status}): {out}{err[-2000:]}")
    return float(m.group(2)), float(m.group(1)) / 1000, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows-fraction", type=int, default=8, help="compute 1/F of the output rows, scale up by F")
    ap.add_argument("--workers", type=int, default=min(os.cpu_count() or 1, 2))
    ap.add_argument("--only", default=",".join(KERNELS), help="comma-separated kernels")
    args = ap.parse_args(argv)
    if args.rows_fraction < 1 or 2048 % (32 * args.rows_fraction):
        raise SystemExit("--rows-fraction must divide 64 (whole 32-row blocks)")
    only = [k for k in args.only.split(",") if k]
    unknown = sorted(set(only) - set(KERNELS))
    if unknown:
        raise SystemExit(f"--only: unknown kernel(s) {', '.join(unknown)} (known: {', '.join(KERNELS)})")
    f = args.rows_fraction
    with tempfile.TemporaryDirectory(prefix="bench-rowstats-") as tmp:
        t0 = time.monotonic()
        before, after = build(Path(tmp) / "before", False), build(Path(tmp) / "after", True)
        print(f"built both in {time.monotonic() - t0:.1f} s; {args.workers} workers; "
              f"1/{f} of the output rows, figures scaled to the full size (x{f})")
        print(f"{'kernel':<10} {'before: cpu s / kernel s':>26} {'after: cpu s / kernel s':>25} "
              f"{'thread loop: cpu s / kernel s':>31} {'cpu before/after':>17}")
        for k in only:
            rows = [run(before, k, f, args.workers, True), run(after, k, f, args.workers, True),
                    run(after, k, f, args.workers, False)]
            cells = [f"{c * f:7.1f} / {w * f:6.1f}" for c, w, _ in rows]
            print(f"{k:<10} {cells[0]:>26} {cells[1]:>25} {cells[2]:>31} {rows[0][0] / rows[1][0]:>16.1f}x")
    print("(cpu s: the kernel's CPU time, all threads, clock_gettime(CLOCK_PROCESS_CPUTIME_ID) around the "
          "launch; `cuset eval` allows a whole run 60 CPU seconds)")


if __name__ == "__main__":
    main()
