"""Where `validators run`'s time goes on held-out-like compute programs (issue 27, target 3).

    python -m benchmarks.bench_run_split [--only matmul,colnorm,bench] [--repeats R] [--workers N]

Two standalone programs written like held-out ones (host-side inputs, one kernel, the host's own
check of every output), run through `validators.engine.run_program` exactly as
`python -m validators run PROG.cu --backend cpu` runs them (sandbox, plain build, forward
schedule, lockstep copies):

- `matmul`: an untiled C[512x2048] = A[512x4096] * B[4096x2048], one thread per element, then
  the host recomputes every element in double (a column walk of B per element);
- `colnorm`: column standardisation of 4096x1024 floats, one thread per element, each walking
  its column twice in double (mean, then variance), then the host checks every element.

Each runs as written and again with its host check compiled out (`-DSKIP_CHECK`), side by side:
"before" is the one figure `validators run` gave (the run's wall time), "after" its split
(start-up, host, kernels, copies, exit; `timing` in `--json`). `bench` runs
`benchmarks/bench_cpu_backend.py`'s own program (its `big` mode: the heavy kernel, the one-sum
column walk and the same product) through the same path, so its self-timed kernel figures
(steady_clock around launch + synchronise) stand beside the runtime's `kernels_s`. The last
lines set the kernels side by side: the held-out-like product against the benchmark's (the same
kernel), the two-walk column standardisation against the benchmark's one-walk column walk.

What it showed (2 shared cores, issue 27's gap of 5.9 s against 2.5 s and 20-23 s against
5.5 s): the sandbox's start-up and exit are hundredths of a second, copies a tenth; the worker
count, build variant (plain), lockstep copies and timing method are the benchmark's. The
product's extra time is its host code (recomputing every element on the host: most of the
run), and the column program's kernel walks each column twice where the benchmark's walks it
once. Kernel figures swing by 2x with the machine's load; compare rows of one run, with
`--repeats`.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import time

from benchmarks.bench_cpu_backend import PROGRAM as BENCH_PROGRAM
from schemas import Program
from validators.backends.cpu import MAX_WORKERS, CpuBackend, usable_cores
from validators.engine import DEFAULT_LIMITS, run_program

MATMUL = r"""
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
__global__ void matmul(const float* A, const float* B, float* C, int M, int N, int K) {
  int col = blockIdx.x * blockDim.x + threadIdx.x, row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row >= M || col >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += A[(size_t)row * K + k] * B[(size_t)k * N + col];
  C[(size_t)row * N + col] = acc;
}
int main() {
  const int M = 512, K = 4096, N = 2048;
  std::vector<float> a((size_t)M * K), b((size_t)K * N), c((size_t)M * N);
  srand(1234);
  for (auto& x : a) x = (float)(rand() % 13 - 6) / 8.0f;
  for (auto& x : b) x = (float)(rand() % 11 - 5) / 8.0f;
  float *dA, *dB, *dC;
  cudaMalloc(&dA, a.size() * 4); cudaMalloc(&dB, b.size() * 4); cudaMalloc(&dC, c.size() * 4);
  cudaMemcpy(dA, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  dim3 blk(16, 16), grd(N / 16, M / 16);
  matmul<<<grd, blk>>>(dA, dB, dC, M, N, K);
  cudaDeviceSynchronize();
  cudaMemcpy(c.data(), dC, c.size() * 4, cudaMemcpyDeviceToHost);
  long bad = 0;
#ifndef SKIP_CHECK
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += (double)a[(size_t)i * K + k] * b[(size_t)k * N + j];
      if (fabs(s - c[(size_t)i * N + j]) > 1e-3) ++bad;
    }
#endif
  printf("%s (%ld mismatches)\n", bad ? "FAIL" : "PASS", bad);
  return bad ? 1 : 0;
}
"""

COLNORM = r"""
#include <cuda_runtime.h>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>
__global__ void colnorm(const float* X, float* Y, int rows, int cols) {
  int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r >= rows || c >= cols) return;
  double s = 0.0;
  for (int k = 0; k < rows; ++k) s += X[(size_t)k * cols + c];
  double mean = s / rows, v = 0.0;
  for (int k = 0; k < rows; ++k) { double d = X[(size_t)k * cols + c] - mean; v += d * d; }
  Y[(size_t)r * cols + c] = (float)((X[(size_t)r * cols + c] - mean) / sqrt(v / rows + 1e-5));
}
int main() {
  const int rows = 4096, cols = 1024;
  std::vector<float> x((size_t)rows * cols), y(x.size());
  srand(42);
  for (auto& v : x) v = (float)rand() / RAND_MAX;
  float *dX, *dY;
  cudaMalloc(&dX, x.size() * 4); cudaMalloc(&dY, y.size() * 4);
  cudaMemcpy(dX, x.data(), x.size() * 4, cudaMemcpyHostToDevice);
  dim3 blk(16, 16), grd(cols / 16, rows / 16);
  colnorm<<<grd, blk>>>(dX, dY, rows, cols);
  cudaDeviceSynchronize();
  cudaMemcpy(y.data(), dY, y.size() * 4, cudaMemcpyDeviceToHost);
  long bad = 0;
#ifndef SKIP_CHECK
  for (int c = 0; c < cols; ++c) {
    double s = 0, v = 0;
    for (int k = 0; k < rows; ++k) s += x[(size_t)k * cols + c];
    double mean = s / rows;
    for (int k = 0; k < rows; ++k) { double d = x[(size_t)k * cols + c] - mean; v += d * d; }
    double sd = sqrt(v / rows + 1e-5);
    for (int r = 0; r < rows; ++r)
      if (fabs((x[(size_t)r * cols + c] - mean) / sd - y[(size_t)r * cols + c]) > 1e-4) ++bad;
  }
#endif
  printf("%s (%ld mismatches)\n", bad ? "FAIL" : "PASS", bad);
  return bad ? 1 : 0;
}
"""

PROGRAMS = {"matmul": MATMUL, "colnorm": COLNORM}


def _run(backend: CpuBackend, source: str, defines: dict[str, int], args: list[str],
         timeout: float) -> tuple[float, object, str]:
    limits = DEFAULT_LIMITS.with_overrides({"wall_seconds": timeout, "cpu_seconds": None,
                                            "memory_bytes": 16 << 30})
    run = run_program(Program(source=source, filename="main.cu"), backend, args, limits=limits,
                      defines=defines, variant="plain", schedule="forward")
    if run.status.value != "passed":
        raise SystemExit(f"run failed: {run.status.value} {run.reason}\n"
                         f"{run.outcome.stderr[-2000:] if run.outcome else ''}")
    return run.run_seconds, run.timing, run.outcome.stdout if run.outcome else ""


FIELDS = ("startup_s", "host_s", "kernels_s", "copies_s", "exit_s")


def _row(name: str, wall: float, t: dict[str, float] | None, extra: str = "") -> str:
    if t is None:
        return f"{name:28s} {wall:8.2f} {'(no split reported)':>40s}"
    return (f"{name:28s} {wall:8.2f} " + " ".join(f"{t[k]:8.2f}" for k in FIELDS) + f"  {extra}")


def _median_split(splits: list) -> dict[str, float] | None:
    if any(t is None for t in splits):
        return None
    return {k: statistics.median(getattr(t, k) for t in splits) for k in FIELDS}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default="matmul,colnorm,bench",
                    help="comma-separated: matmul, colnorm, bench")
    ap.add_argument("--repeats", type=int, default=1,
                    help="rounds of every run, interleaved (medians are printed): on a shared "
                         "machine the load moves between runs, and interleaving spreads it")
    ap.add_argument("--workers", type=int, help="block worker threads (default: usable cores)")
    ap.add_argument("--timeout", type=float, default=600.0, help="wall seconds per run")
    opts = ap.parse_args()
    only = opts.only.split(",")
    os.environ.setdefault("CKD_ALLOW_WEAK_SANDBOX", "1")
    backend = CpuBackend(workers=opts.workers)
    rows: list[tuple[str, str, dict[str, int], list[str]]] = []
    for name in (n for n in PROGRAMS if n in only):
        rows.append((f"{name}, as written", PROGRAMS[name], {}, []))
        rows.append((f"{name}, host check off", PROGRAMS[name], {"SKIP_CHECK": 1}, []))
    if "bench" in only:
        rows.append(("bench_cpu_backend big", BENCH_PROGRAM,
                     {"N": 1 << 20, "HEAVY_N": 1 << 22, "COL_ROWS": 4096}, ["big"]))
    print(f"cores usable: {len(os.sched_getaffinity(0))}, block workers: "
          f"{backend.workers or min(usable_cores(), MAX_WORKERS)}; load average at start: "
          f"{' '.join(f'{x:.1f}' for x in os.getloadavg())}; repeats: {opts.repeats}")
    t0 = time.perf_counter()
    results: dict[str, list[tuple[float, object, dict[str, float]]]] = {r[0]: [] for r in rows}
    for _ in range(opts.repeats):
        for label, source, defines, args in rows:
            wall, t, out = _run(backend, source, defines, args, opts.timeout)
            own = {k: float(v) / 1000 for k, v in re.findall(r"(\w+)_ms=([\d.]+)", out)}
            results[label].append((wall, t, own))
    print("\nbefore = the run's wall time, the one figure `validators run` reported; after = its "
          "split (medians)\n")
    print(f"{'program':28s} {'before':>8s} {'start-up':>8s} {'host':>8s} {'kernels':>8s} "
          f"{'copies':>8s} {'exit':>8s}  (seconds)")
    med: dict[str, dict[str, float] | None] = {}
    own: dict[str, float] = {}
    for label, runs in results.items():
        med[label] = _median_split([r[1] for r in runs])
        extra = ""
        if runs[0][2]:
            own = {k: statistics.median(r[2][k] for r in runs) for k in runs[0][2]}
            extra = ("its own kernel timing: " + ", ".join(f"{k} {v:.2f}" for k, v in own.items())
                     + f" (sum {sum(own.values()):.2f})")
        print(_row(label, statistics.median(r[0] for r in runs), med[label], extra))
    print()
    for name in (n for n in PROGRAMS if n in only):
        written, off = med.get(f"{name}, as written"), med.get(f"{name}, host check off")
        if written and off:
            print(f"{name}: host {written['host_s']:.2f} s of {sum(written.values()):.2f} s "
                  f"({written['host_s'] / sum(written.values()):.0%}) as written, "
                  f"{off['host_s']:.2f} s with its check off")
    pairs = (("matmul", "matmul", "the same untiled product"),
             ("colnorm", "colwalk", "two walks per thread (colnorm) against one (colwalk)"))
    for mine, theirs, what in pairs:
        m = med.get(f"{mine}, host check off")
        if m and theirs in own:
            print(f"kernel, {what}: {mine} {m['kernels_s']:.2f} s, bench_cpu_backend's "
                  f"{theirs} {own[theirs]:.2f} s ({m['kernels_s'] / own[theirs]:.2f}x)")
    print(f"\nbenchmark wall: {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
