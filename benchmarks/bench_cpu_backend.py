"""Benchmark of the CPU backend (cudashim): build times, kernel times, cost of the checks.

    python benchmarks/bench_cpu_backend.py [--n 1048576] [--repeats 3]

Prints, side by side:
- build time of one program: g++ without the precompiled header (cold) and with it;
- kernel times over N elements (median of --repeats runs, wall time around the launch):
  elementwise add, shared-memory tree reduction, warp-shuffle reduction, an empty kernel
  (per-thread overhead) and a compute-heavy kernel (256 FMAs per thread), against the targets
  (elementwise < 0.1 s, tree reduction < 0.5 s on 2 cores);
- the cost of the checks as ratios to one plain forward run of the whole program: the second
  schedule (`reverse`) and the AddressSanitizer build (its run, and its build).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from validators.cpu import toolchain

PROGRAM = r"""
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#ifndef N
#define N (1 << 20)
#endif
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
__global__ void empty(int n) {}
__global__ void heavy(const float* a, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i], acc = 0.f;
  for (int k = 0; k < 256; ++k) acc = fmaf(acc, x, 0.5f);
  c[i] = acc;
}
__global__ void reduce_tree(const float* in, float* out, int n) {
  __shared__ float s[256];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  s[t] = i < n ? in[i] : 0.f;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (t < k) s[t] += s[t + k];
    __syncthreads();
  }
  if (t == 0) out[blockIdx.x] = s[0];
}
__global__ void reduce_shfl(const float* in, float* out, int n) {
  __shared__ float w[8];
  int t = threadIdx.x, i = blockIdx.x * blockDim.x + t;
  float v = i < n ? in[i] : 0.f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
  if ((t & 31) == 0) w[t >> 5] = v;
  __syncthreads();
  if (t < 32) {
    v = t < 8 ? w[t] : 0.f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffff, v, o);
    if (t == 0) out[blockIdx.x] = v;
  }
}
template <class F>
static double ms(F f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
int main() {
  const int n = N, blocks = (n + 255) / 256;
  float *a, *b, *c, *r;
  cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&b, n * sizeof(float));
  cudaMalloc(&c, n * sizeof(float)); cudaMalloc(&r, blocks * sizeof(float));
  float* h = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) h[i] = 1.0f;
  cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(b, h, n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemset(c, 0, n * sizeof(float));
  printf("elementwise_ms=%.2f\n", ms([&] { add<<<blocks, 256>>>(a, b, c, n); }));
  printf("tree_reduction_ms=%.2f\n", ms([&] { reduce_tree<<<blocks, 256>>>(a, r, n); }));
  printf("shuffle_reduction_ms=%.2f\n", ms([&] { reduce_shfl<<<blocks, 256>>>(a, r, n); }));
  printf("empty_kernel_ms=%.2f\n", ms([&] { empty<<<blocks, 256>>>(n); }));
  printf("heavy_kernel_ms=%.2f\n", ms([&] { heavy<<<blocks, 256>>>(a, c, n); }));
  float got = 0;
  cudaMemcpy(&got, r, sizeof(float), cudaMemcpyDeviceToHost);
  return got == 256.0f ? 0 : 1;
}
"""

KERNELS = ["elementwise", "tree_reduction", "shuffle_reduction", "empty_kernel", "heavy_kernel"]
TARGETS_MS = {"elementwise": 100.0, "tree_reduction": 500.0}


def run(exe: Path, schedule: str) -> tuple[float, dict[str, float]]:
    env = {**os.environ, "CUDASHIM_SCHEDULE": schedule, "ASAN_OPTIONS": "detect_leaks=0"}
    t0 = time.perf_counter()
    out = subprocess.run([str(exe)], capture_output=True, text=True, env=env, check=False)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"benchmark program failed ({schedule}): {out.stdout}{out.stderr}")
    times = {}
    for line in out.stdout.splitlines():
        key, _, value = line.partition("_ms=")
        if value:
            times[key] = float(value)
    return wall, times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=1 << 20)
    ap.add_argument("--repeats", type=int, default=3)
    opts = ap.parse_args()
    defines = {"N": opts.n}
    # The shared pieces (runtime object, PCH) are built once per shim version, not per program.
    t0 = time.perf_counter()
    for variant in toolchain.VARIANTS:
        toolchain.runtime_object(variant)
        toolchain.pch_header(variant)
    shim_s = time.perf_counter() - t0
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        cold = toolchain.compile_program(PROGRAM, root / "cold", defines=defines, use_pch=False)
        warm = toolchain.compile_program(PROGRAM, root / "pch", defines=defines)
        asan = toolchain.compile_program(PROGRAM, root / "asan", defines=defines, variant="asan")
        for o in (cold, warm, asan):
            if not o.ok:
                raise SystemExit(o.diagnostics)
        print(f"cores: {len(os.sched_getaffinity(0))}, N = {opts.n}, repeats = {opts.repeats}")
        print(
            f"shim runtime + PCH (plain, asan), once per shim version: {shim_s:.2f} s (0 when cached)"
        )
        print(f"build, plain, no PCH (cold): {cold.seconds:.2f} s")
        print(
            f"build, plain, with PCH:      {warm.seconds:.2f} s   ({cold.seconds / warm.seconds:.1f}x faster)"
        )
        print(
            f"build, asan, with PCH:       {asan.seconds:.2f} s   ({asan.seconds / warm.seconds:.2f}x plain)"
        )
        results: dict[str, list[tuple[float, dict[str, float]]]] = {
            "forward": [],
            "reverse": [],
            "asan": [],
            "asan_reverse": [],
        }
        for _ in range(opts.repeats):
            results["forward"].append(run(warm.exe, "forward"))
            results["reverse"].append(run(warm.exe, "reverse"))
            results["asan"].append(run(asan.exe, "forward"))
            results["asan_reverse"].append(run(asan.exe, "reverse"))
        print(
            f"\n{'kernel':20s} {'forward ms':>11s} {'reverse ms':>11s} {'asan ms':>9s} {'ns/thread':>10s} target"
        )
        for k in KERNELS:
            med = {s: statistics.median(r[1][k] for r in results[s]) for s in results}
            target = TARGETS_MS.get(k)
            verdict = (
                f"< {target:.0f} ms: {'met' if med['forward'] < target else 'MISSED'}"
                if target
                else ""
            )
            print(
                f"{k:20s} {med['forward']:11.1f} {med['reverse']:11.1f} {med['asan']:9.1f} "
                f"{med['forward'] * 1e6 / opts.n:10.1f} {verdict}"
            )
        walls = {s: statistics.median(r[0] for r in results[s]) for s in results}
        print(
            f"\nwhole program, wall (median): plain forward {walls['forward']:.3f} s, "
            f"reverse {walls['reverse']:.3f} s, asan {walls['asan']:.3f} s"
        )
        two = (walls["forward"] + walls["reverse"]) / walls["forward"]
        print(f"two-schedule check (forward + reverse) / one plain run: {two:.2f}x")
        print(
            f"ASan run / plain run: {walls['asan'] / walls['forward']:.2f}x; "
            f"ASan build / plain build: {asan.seconds / warm.seconds:.2f}x"
        )
        thorough = sum(walls.values()) / walls["forward"]
        print(
            f"default thorough check (plain + asan, each forward + reverse) / one plain run: "
            f"{thorough:.2f}x"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
