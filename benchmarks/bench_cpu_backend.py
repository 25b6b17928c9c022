"""Benchmark of the CPU backend (cudashim): build times, kernel times, cost of the checks.

    python -m benchmarks.bench_cpu_backend [--n 1048576] [--repeats 3] [--heavy-n 4194304]
        [--big | --no-big] [--col-rows 4096] [--thread-loop | --no-thread-loop]

Prints, side by side:
- build time of one program: g++ without the precompiled header (cold) and with it;
- kernel times over N elements (median of --repeats runs, wall time around the launch):
  elementwise add, shared-memory tree reduction, warp-shuffle reduction, an empty kernel
  (per-thread overhead) and a compute-heavy kernel (256 FMAs per thread), against the targets
  (elementwise < 0.1 s, tree reduction < 0.5 s on 2 cores);
- the cost of the checks as ratios to one plain forward run of the whole program: the second
  schedule (`reverse`) and the AddressSanitizer build (its run, and its build);
- with `--big` (the default), one plain forward run of three compute-heavy kernels (issue 13),
  each checked against a host computation (the bench fails on a wrong result): the 256-FMA
  kernel over `--heavy-n` threads against the same loop on the host (`g++ -O3
  -march=x86-64-v3 -ffp-contract=fast -fopenmp`, `#pragma omp parallel for simd`, one thread
  per core), target within 3x; a column walk (4096 x 1024 floats, one thread per element, each
  summing its column over all 4096 rows in double: a naive column normalisation), target
  < 20 s; an untiled product C[512x2048] = A[512x4096] * B[4096x2048] (16x16 blocks, one
  thread per element, naive k loop), target < 5 s. `--col-rows R` computes only the first R
  output rows of the column walk (each thread still walks all 4096 rows) and scales the time up.
  The heavy, column-walk and product kernels run as warp-lockstep copies
  (validators/cpu/lockstep.py); `--thread-loop` (the default) times the same binary again with
  the copies off (`CUDASHIM_LOCKSTEP=0`, one thread at a time), the "before" of each figure, and
  the `loop ms` column does the same for the N-thread kernels.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from validators.backends.cpu import MAX_WORKERS, usable_cores
from validators.cpu import toolchain

PROGRAM = r"""
#include <cuda_runtime.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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
#ifndef HEAVY_N
#define HEAVY_N (1 << 22)
#endif
#ifndef COL_ROWS
#define COL_ROWS 4096
#endif
// Each thread walks its own column c over every row (stride `cols` floats), summing in double.
__global__ void colwalk(const float* A, float* out, int rows, int cols, int out_rows) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= out_rows || c >= cols) return;
  double s = 0.0;
  for (int k = 0; k < rows; ++k) s += A[(size_t)k * cols + c];
  out[(size_t)r * cols + c] = (float)(A[(size_t)r * cols + c] / s);
}
// C[m x n] = A[m x kk] * B[kk x n], one thread per element of C, no tiling.
__global__ void matmul(const float* A, const float* B, float* C, int m, int n, int kk) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= m || col >= n) return;
  float acc = 0.f;
  for (int k = 0; k < kk; ++k) acc += A[(size_t)row * kk + k] * B[(size_t)k * n + col];
  C[(size_t)row * n + col] = acc;
}
template <class F>
static double ms(F f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  cudaDeviceSynchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
static bool close(double got, double want, double tol) {
  return fabs(got - want) <= tol * (1.0 + fabs(want));
}
static int big() {
  int bad = 0;
  {  // 256 FMAs per thread over HEAVY_N threads
    const int n = HEAVY_N;
    float* h = (float*)malloc(n * sizeof(float));
    for (int i = 0; i < n; ++i) h[i] = (float)(i % 1000) / 1000.0f;
    float *a, *c;
    cudaMalloc(&a, n * sizeof(float)); cudaMalloc(&c, n * sizeof(float));
    cudaMemcpy(a, h, n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(c, 0, n * sizeof(float));
    printf("heavy_big_ms=%.2f\n", ms([&] { heavy<<<(n + 255) / 256, 256>>>(a, c, n); }));
    float* g = (float*)malloc(n * sizeof(float));
    cudaMemcpy(g, c, n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int i = 0; i < n; ++i) {
      float acc = 0.f;
      for (int k = 0; k < 256; ++k) acc = fmaf(acc, h[i], 0.5f);
      if (!close(g[i], acc, 1e-5)) { if (bad++ < 3) fprintf(stderr, "heavy[%d] = %g, want %g\n", i, g[i], acc); }
    }
    cudaFree(a); cudaFree(c); free(h); free(g);
  }
  {  // column walk
    const int rows = 4096, cols = 1024, out_rows = COL_ROWS;
    const size_t sz = (size_t)rows * cols;
    float* h = (float*)malloc(sz * sizeof(float));
    for (size_t i = 0; i < sz; ++i) h[i] = (float)((i * 2654435761u) % 1000 + 1) / 1000.0f;
    float *A, *out;
    cudaMalloc(&A, sz * sizeof(float)); cudaMalloc(&out, sz * sizeof(float));
    cudaMemcpy(A, h, sz * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(out, 0, sz * sizeof(float));
    dim3 blk(16, 16), grd(cols / 16, (out_rows + 15) / 16);
    printf("colwalk_ms=%.2f\n", ms([&] { colwalk<<<grd, blk>>>(A, out, rows, cols, out_rows); }));
    float* g = (float*)malloc(sz * sizeof(float));
    cudaMemcpy(g, out, sz * sizeof(float), cudaMemcpyDeviceToHost);
    double* sum = (double*)calloc(cols, sizeof(double));
    for (int k = 0; k < rows; ++k)
      for (int c = 0; c < cols; ++c) sum[c] += h[(size_t)k * cols + c];
    for (int r = 0; r < out_rows; ++r)
      for (int c = 0; c < cols; ++c) {
        double want = h[(size_t)r * cols + c] / sum[c];
        if (!close(g[(size_t)r * cols + c], want, 1e-6)) {
          if (bad++ < 6) fprintf(stderr, "colwalk[%d][%d] = %g, want %g\n", r, c, g[(size_t)r * cols + c], want);
        }
      }
    cudaFree(A); cudaFree(out); free(h); free(g); free(sum);
  }
  {  // untiled product; entries are multiples of 1/8 in [-0.75, 0.75]: every sum is exact
    const int m = 512, kk = 4096, n = 2048;
    float* ha = (float*)malloc((size_t)m * kk * sizeof(float));
    float* hb = (float*)malloc((size_t)kk * n * sizeof(float));
    for (size_t i = 0; i < (size_t)m * kk; ++i) ha[i] = (float)((int)((i * 7) % 13) - 6) / 8.0f;
    for (size_t i = 0; i < (size_t)kk * n; ++i) hb[i] = (float)((int)((i * 5) % 11) - 5) / 8.0f;
    float *A, *B, *C;
    cudaMalloc(&A, (size_t)m * kk * sizeof(float)); cudaMalloc(&B, (size_t)kk * n * sizeof(float));
    cudaMalloc(&C, (size_t)m * n * sizeof(float));
    cudaMemcpy(A, ha, (size_t)m * kk * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemcpy(B, hb, (size_t)kk * n * sizeof(float), cudaMemcpyHostToDevice);
    cudaMemset(C, 0, (size_t)m * n * sizeof(float));
    dim3 blk(16, 16), grd(n / 16, m / 16);
    printf("matmul_ms=%.2f\n", ms([&] { matmul<<<grd, blk>>>(A, B, C, m, n, kk); }));
    float* g = (float*)malloc((size_t)m * n * sizeof(float));
    cudaMemcpy(g, C, (size_t)m * n * sizeof(float), cudaMemcpyDeviceToHost);
    for (int row = 0; row < m; row += 7)
      for (int col = row % 5; col < n; col += 13) {
        double want = 0;
        for (int k = 0; k < kk; ++k) want += (double)ha[(size_t)row * kk + k] * hb[(size_t)k * n + col];
        if (!close(g[(size_t)row * n + col], want, 1e-6)) {
          if (bad++ < 9) fprintf(stderr, "matmul[%d][%d] = %g, want %g\n", row, col, g[(size_t)row * n + col], want);
        }
      }
    cudaFree(A); cudaFree(B); cudaFree(C); free(ha); free(hb); free(g);
  }
  if (bad) fprintf(stderr, "%d wrong results\n", bad);
  return bad ? 1 : 0;
}
int main(int argc, char** argv) {
  if (argc > 1 && strcmp(argv[1], "big") == 0) return big();
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

# The same computation as the heavy kernel, as a vectorised host loop (the yardstick).
HOST_HEAVY = r"""
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
int main(int argc, char** argv) {
  const int n = atoi(argv[1]);
  float* a = (float*)malloc(n * sizeof(float));
  float* c = (float*)malloc(n * sizeof(float));
  for (int i = 0; i < n; ++i) a[i] = (float)(i % 1000) / 1000.0f;
  memset(c, 0, n * sizeof(float));
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
#pragma omp parallel for simd
    for (int i = 0; i < n; ++i) {
      float x = a[i], acc = 0.f;
      for (int k = 0; k < 256; ++k) acc = acc * x + 0.5f;
      c[i] = acc;
    }
    double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (t < best) best = t;
  }
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += c[i];
  printf("host_heavy_ms=%.2f\nchecksum=%.6f\n", best, sum);
  return 0;
}
"""
HOST_HEAVY_FLAGS = ["-O3", "-march=x86-64-v3", "-ffp-contract=fast", "-fopenmp"]

KERNELS = ["elementwise", "tree_reduction", "shuffle_reduction", "empty_kernel", "heavy_kernel"]
TARGETS_MS = {"elementwise": 100.0, "tree_reduction": 500.0}


def run(exe: Path, schedule: str, *args: str, lockstep: bool = True) -> tuple[float, dict[str, float]]:
    # The block workers `validators run` and the engine give a run (the cores it may use,
    # cgroup quota included), not the runtime's own default: the figures are comparable.
    env = {**os.environ, "CUDASHIM_SCHEDULE": schedule, "ASAN_OPTIONS": "detect_leaks=0",
           "CUDASHIM_LOCKSTEP": "1" if lockstep else "0",
           "CUDASHIM_WORKERS": str(min(usable_cores(), MAX_WORKERS))}
    t0 = time.perf_counter()
    out = subprocess.run([str(exe), *args], capture_output=True, text=True, env=env, check=False)
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
    ap.add_argument("--heavy-n", type=int, default=1 << 22, help="threads of the big heavy run")
    ap.add_argument(
        "--big",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the heavy kernel over --heavy-n threads, the column walk and the product",
    )
    ap.add_argument(
        "--col-rows",
        type=int,
        default=4096,
        help="output rows of the column walk to compute (each thread still walks all 4096 rows); "
        "fewer rows are timed and scaled up to the whole matrix",
    )
    ap.add_argument(
        "--thread-loop",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the big kernels with the lockstep copies off (CUDASHIM_LOCKSTEP=0), "
        "one thread at a time as before them (the column walk alone takes about a minute)",
    )
    opts = ap.parse_args()
    defines = {"N": opts.n, "HEAVY_N": opts.heavy_n, "COL_ROWS": opts.col_rows}
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
        race = toolchain.compile_program(PROGRAM, root / "race", defines=defines, variant="race")
        for o in (cold, warm, asan, race):
            if not o.ok:
                raise SystemExit(o.diagnostics)
        print(f"cores: {len(os.sched_getaffinity(0))}, N = {opts.n}, repeats = {opts.repeats}")
        print(
            f"shim runtime + PCH (plain, asan, race), once per shim version: {shim_s:.2f} s (0 when cached)"
        )
        print(f"build, plain, no PCH (cold): {cold.seconds:.2f} s")
        print(
            f"build, plain, with PCH:      {warm.seconds:.2f} s   ({cold.seconds / warm.seconds:.1f}x faster)"
        )
        print(
            f"build, asan, with PCH:       {asan.seconds:.2f} s   ({asan.seconds / warm.seconds:.2f}x plain)"
        )
        print(
            f"build, race, with PCH:       {race.seconds:.2f} s   ({race.seconds / warm.seconds:.2f}x plain)"
        )
        results: dict[str, list[tuple[float, dict[str, float]]]] = {
            "forward": [],
            "reverse": [],
            "asan": [],
            "asan_reverse": [],
            "race_reverse": [],
            "thread_loop": [],
        }
        for _ in range(opts.repeats):
            results["forward"].append(run(warm.exe, "forward"))
            results["reverse"].append(run(warm.exe, "reverse"))
            results["asan"].append(run(asan.exe, "forward"))
            results["asan_reverse"].append(run(asan.exe, "reverse"))
            results["race_reverse"].append(run(race.exe, "reverse"))
            results["thread_loop"].append(run(warm.exe, "forward", lockstep=False))
        print(
            f"\n{'kernel':20s} {'forward ms':>11s} {'reverse ms':>11s} {'asan ms':>9s} {'race ms':>9s} "
            f"{'ns/thread':>10s} {'loop ms':>8s} target"
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
                f"{med['race_reverse']:9.1f} {med['forward'] * 1e6 / opts.n:10.1f} "
                f"{med['thread_loop']:8.1f} {verdict}"
            )
        walls = {s: statistics.median(r[0] for r in results[s]) for s in results}
        print(
            f"\nwhole program, wall (median): plain forward {walls['forward']:.3f} s, "
            f"reverse {walls['reverse']:.3f} s, asan {walls['asan']:.3f} s, "
            f"race (reverse) {walls['race_reverse']:.3f} s"
        )
        two = (walls["forward"] + walls["reverse"]) / walls["forward"]
        print(f"two-schedule check (forward + reverse) / one plain run: {two:.2f}x")
        print(
            f"ASan run / plain run: {walls['asan'] / walls['forward']:.2f}x; "
            f"ASan build / plain build: {asan.seconds / warm.seconds:.2f}x"
        )
        print(f"race run / plain run: {walls['race_reverse'] / walls['reverse']:.2f}x; "
              f"race build / plain build: {race.seconds / warm.seconds:.2f}x")
        # The race build runs the reverse schedule in the plain build's stead.
        thorough = (walls["asan"] + walls["asan_reverse"] + walls["forward"] + walls["race_reverse"]) / walls["forward"]
        print(
            f"default thorough check (asan forward + reverse, plain forward, race reverse) / one "
            f"plain run: {thorough:.2f}x"
        )
        if opts.big:
            big(warm.exe, root, opts)
    return 0


def big(exe: Path, root: Path, opts: argparse.Namespace) -> None:
    """One plain forward run of the compute-heavy kernels (issue 13), against their targets."""
    host_src = root / "host_heavy.cpp"
    host_src.write_text(HOST_HEAVY)
    cmd = [toolchain.gxx(), *HOST_HEAVY_FLAGS, str(host_src), "-o", str(root / "host_heavy")]
    subprocess.run(cmd, check=True)
    host = subprocess.run(
        [str(root / "host_heavy"), str(opts.heavy_n)], capture_output=True, text=True, check=True
    )
    host_ms = float(host.stdout.split("host_heavy_ms=")[1].split()[0])
    _, t = run(exe, "forward", "big")
    # The same binary with the lockstep copies switched off: one thread at a time, as before.
    loop = run(exe, "forward", "big", lockstep=False)[1] if opts.thread_loop else None

    def before(key: str, scale: float = 1.0, unit: str = "ms") -> str:
        if loop is None:
            return ""
        return f" (thread loop: {loop[key] * scale:.2f} {unit}, {loop[key] / t[key]:.1f}x slower)"

    print(
        f"\nbig kernels, plain forward, one run ({' '.join(HOST_HEAVY_FLAGS)} for the host loop):"
    )
    ratio = t["heavy_big"] / host_ms
    print(
        f"heavy, {opts.heavy_n} threads: {t['heavy_big']:.1f} ms{before('heavy_big')}; host loop "
        f"(omp parallel for simd, best of 5) {host_ms:.1f} ms; ratio {ratio:.2f}x; within 3x: "
        f"{'met' if ratio <= 3 else 'MISSED'}"
    )
    col_scale = 4096 / opts.col_rows / 1000
    col_s = t["colwalk"] * col_scale
    scaled = "" if opts.col_rows == 4096 else f" ({opts.col_rows} of 4096 rows timed, scaled up)"
    print(
        f"column walk 4096x1024, double sums: {col_s:.2f} s{before('colwalk', col_scale, 's')}{scaled}; "
        f"< 20 s: {'met' if col_s < 20 else 'MISSED'}"
    )
    mm_s = t["matmul"] / 1000
    print(
        f"untiled product 512x4096 * 4096x2048: {mm_s:.2f} s{before('matmul', 1 / 1000, 's')}; "
        f"< 5 s: {'met' if mm_s < 5 else 'MISSED'}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
