"""Benchmark of kernel launches from several host threads at once on the CPU backend (cudashim).

    python benchmarks/bench_cpu_concurrent_launch.py [--threads 4] [--launches 200] [--repeats 3]

Each of T host threads (OpenMP) launches L small kernels (64 blocks of 256 threads, an
elementwise update with a __syncthreads) on its own buffer and stream. Prints, per worker count
(CUDASHIM_WORKERS), the median wall time of: the T chains one after another from one thread,
and the same T chains from T threads at once; and the time per launch. Before the per-launch
jobs of the runtime's pool, the concurrent form hung or computed wrong results.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

# Measure the shim of the checkout this script is in, not an installed copy of the package.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from validators.cpu import toolchain  # noqa: E402

PROGRAM = r"""
#include <chrono>
#include <cstdio>
#include <vector>
#include <omp.h>
__global__ void step(float* a, int n) {
  __shared__ float s[256];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] : 0.f;
  __syncthreads();
  if (i < n) a[i] = s[255 - threadIdx.x] * 0.5f + 1.f;
}
static void chain(float* a, int n, cudaStream_t st) {
  for (int l = 0; l < LAUNCHES; ++l) step<<<(n + 255) / 256, 256, 0, st>>>(a, n);
  cudaStreamSynchronize(st);
}
int main() {
  const int n = 64 * 256;
  std::vector<float*> buf(THREADS);
  std::vector<cudaStream_t> st(THREADS);
  for (int t = 0; t < THREADS; ++t) {
    cudaMalloc(&buf[t], n * sizeof(float));
    cudaMemset(buf[t], 0, n * sizeof(float));
    cudaStreamCreate(&st[t]);
  }
  auto t0 = std::chrono::steady_clock::now();
  for (int t = 0; t < THREADS; ++t) chain(buf[t], n, st[t]);
  auto t1 = std::chrono::steady_clock::now();
#pragma omp parallel num_threads(THREADS)
  chain(buf[omp_get_thread_num()], n, st[omp_get_thread_num()]);
  auto t2 = std::chrono::steady_clock::now();
  printf("serial_ms=%.2f\nconcurrent_ms=%.2f\n",
         std::chrono::duration<double, std::milli>(t1 - t0).count(),
         std::chrono::duration<double, std::milli>(t2 - t1).count());
}
"""


def run(exe: Path, workers: int) -> dict[str, float]:
    env = {**os.environ, "CUDASHIM_WORKERS": str(workers)}
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, timeout=600,
                         check=False)
    if out.returncode != 0:
        raise SystemExit(f"benchmark program failed (workers={workers}): {out.stderr}")
    times = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition("_ms=")
        if value:
            times[key] = float(value)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--launches", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        built = toolchain.compile_program(
            PROGRAM, Path(tmp), defines={"THREADS": opts.threads, "LAUNCHES": opts.launches},
            extra_flags=["-fopenmp"],
        )
        if not built.ok:
            raise SystemExit(built.diagnostics)
        exe = built.exe
        assert exe is not None
        launches = opts.threads * opts.launches
        print(f"cores: {len(os.sched_getaffinity(0))}, {opts.threads} host threads x "
              f"{opts.launches} launches of 64 blocks, repeats = {opts.repeats}")
        print(f"{'workers':>7} {'serial ms':>10} {'concurrent ms':>14} {'us/launch serial':>17} "
              f"{'us/launch concurrent':>21}")
        for workers in sorted({1, 2, len(os.sched_getaffinity(0))}):
            runs = [run(exe, workers) for _ in range(opts.repeats)]
            serial = statistics.median(r["serial"] for r in runs)
            concurrent = statistics.median(r["concurrent"] for r in runs)
            print(f"{workers:>7} {serial:>10.1f} {concurrent:>14.1f} "
                  f"{1000 * serial / launches:>17.1f} {1000 * concurrent / launches:>21.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
