"""Validation-engine figures: nvcc cold build vs cache hit, reference generation, sandbox
start-up, and validations per minute on 2 cores with warm caches.

    python benchmarks/bench_validate.py            # about 2 minutes
    python benchmarks/bench_validate.py --seconds 10 --backend cuda

Uses a private cache directory (removed at the end) so "cold" really is cold. Validations
per minute run on the cpu backend when it is available (kernels really execute), otherwise
on the cuda backend, which on a GPU-less machine measures the needs_gpu path (said so in
the output).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VECADD = r"""
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#ifndef N
#define N 100000
#endif
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
static void read_bin(const char* p, float* h, size_t n) {
  FILE* f = fopen(p, "rb");
  if (!f || fread(h, sizeof(float), n, f) != n) { fprintf(stderr, "read %s\n", p); exit(1); }
  fclose(f);
}
int main() {
  size_t bytes = N * sizeof(float);
  float *ha = (float*)malloc(bytes), *hb = (float*)malloc(bytes), *hc = (float*)malloc(bytes);
  read_bin("data/a.bin", ha, N); read_bin("data/b.bin", hb, N);
  float *da, *db, *dc;
  cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc, bytes);
  cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
  vecAdd<<<(N + 255) / 256, 256>>>(da, db, dc, N);
  cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/c.bin", "wb"); fwrite(hc, sizeof(float), N, o); fclose(o);
  return 0;
}
"""

REDUCE = r"""
#include <cstdio>
#include <cuda_runtime.h>
#ifndef N
#define N 65536
#endif
template <int B> __global__ void reduce(const float* x, float* out, int n) {
  __shared__ float s[B];
  int i = blockIdx.x * B + threadIdx.x;
  s[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int k = B / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) s[threadIdx.x] += s[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, s[0]);
}
int main() {
  static float h[N]; float r = 0;
  FILE* f = fopen("data/x.bin", "rb"); fread(h, 4, N, f); fclose(f);
  float *d, *o; cudaMalloc(&d, N * 4); cudaMalloc(&o, 4); cudaMemset(o, 0, 4);
  cudaMemcpy(d, h, N * 4, cudaMemcpyHostToDevice);
  reduce<256><<<(N + 255) / 256, 256>>>(d, o, N);
  cudaMemcpy(&r, o, 4, cudaMemcpyDeviceToHost);
  FILE* g = fopen("data/y.bin", "wb"); fwrite(&r, 4, 1, g); fclose(g);
  return 0;
}
"""

MATMUL = r"""
#include <cstdio>
#include <cuda_runtime.h>
#ifndef M
#define M 128
#endif
#define TILE 16
__global__ void matmul(const float* A, const float* B, float* C, int n) {
  __shared__ float As[TILE][TILE], Bs[TILE][TILE];
  int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0;
  for (int t = 0; t < (n + TILE - 1) / TILE; t++) {
    As[threadIdx.y][threadIdx.x] = (row < n && t * TILE + threadIdx.x < n) ? A[row * n + t * TILE + threadIdx.x] : 0;
    Bs[threadIdx.y][threadIdx.x] = (col < n && t * TILE + threadIdx.y < n) ? B[(t * TILE + threadIdx.y) * n + col] : 0;
    __syncthreads();
    for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < n && col < n) C[row * n + col] = acc;
}
int main() {
  static float a[M * M], b[M * M], c[M * M];
  FILE* f = fopen("data/A.bin", "rb"); fread(a, 4, M * M, f); fclose(f);
  f = fopen("data/B.bin", "rb"); fread(b, 4, M * M, f); fclose(f);
  float *da, *db, *dc; cudaMalloc(&da, sizeof a); cudaMalloc(&db, sizeof b); cudaMalloc(&dc, sizeof c);
  cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice); cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
  dim3 block(TILE, TILE), grid((M + TILE - 1) / TILE, (M + TILE - 1) / TILE);
  matmul<<<grid, block>>>(da, db, dc, M);
  cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
  f = fopen("data/C.bin", "wb"); fwrite(c, 4, M * M, f); fclose(f);
  return 0;
}
"""


def vecadd_task(n: int = 100000):
    from schemas import InputCase, Reference, Task, TensorSpec, ValueDistribution

    cases = [InputCase(name=f"c{i}", seed=i) for i in range(3)]
    cases.append(
        InputCase(name="edge", seed=9, distributions={"a": ValueDistribution(kind="edge")})
    )
    cases.append(InputCase(name="odd", seed=11, sizes={"N": n - 1}))
    return Task(
        name="vecadd",
        description="c = a + b",
        inputs=[
            TensorSpec(name="a", dtype="float32", shape=["N"]),
            TensorSpec(name="b", dtype="float32", shape=["N"]),
        ],
        outputs=[TensorSpec(name="c", dtype="float32", shape=["N"])],
        sizes={"N": n},
        cases=cases,
        reference=Reference(
            code="def reference(inputs, sizes):\n    return {'c': inputs['a'] + inputs['b']}\n"
        ),
    )


def matmul_task(m: int = 128):
    from schemas import InputCase, Reference, Task, TensorSpec

    return Task(
        name="matmul",
        description="C = A @ B",
        inputs=[
            TensorSpec(name="A", dtype="float32", shape=["M", "M"]),
            TensorSpec(name="B", dtype="float32", shape=["M", "M"]),
        ],
        outputs=[TensorSpec(name="C", dtype="float32", shape=["M", "M"])],
        sizes={"M": m},
        cases=[InputCase(name=f"c{i}", seed=i) for i in range(5)],
        reference=Reference(
            code="import numpy as np\ndef reference(inputs, sizes):\n"
            "    return {'C': inputs['A'] @ inputs['B']}\n"
        ),
    )


def row(label: str, *cols: str) -> None:
    print(f"  {label:<44}" + "".join(f"{c:>16}" for c in cols))


def bench_builds(repeats: int) -> None:
    from schemas import Program
    from validators.build_cache import BuildCache
    from validators.nvcc import compile_program

    print("\n== nvcc builds (-O3 -arch=sm_90 -Xptxas -v, in the sandbox) ==")
    row("program", "cold s", "hit ms", "cold/hit")
    cache = BuildCache(
        Path(tempfile.mkdtemp(prefix="bench-builds-", dir=os.environ["CKD_CACHE_DIR"]))
    )
    for name, src in (("vecadd", VECADD), ("reduce<256>", REDUCE), ("tiled matmul", MATMUL)):
        prog = Program(source=src)
        t0 = time.perf_counter()
        path, info = compile_program(prog, cache=cache)
        cold = time.perf_counter() - t0
        assert info.ok and not info.cached, info.diagnostics
        hits = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            _, hit = compile_program(prog, cache=cache)
            hits.append(time.perf_counter() - t0)
            assert hit.cached
        h = statistics.median(hits)
        row(name, f"{cold:.2f}", f"{h * 1000:.2f}", f"{cold / h:.0f}x")
    print("  (target: a cache hit at least 20x faster than a cold build)")


def bench_references() -> None:
    from validators.cases import materialize
    from validators.reference import ReferenceRunner

    print("\n== NumPy references (sandboxed Python process, cached by content hash) ==")
    row("reference", "cold s", "hit ms", "cold/hit")
    runner = ReferenceRunner(
        Path(tempfile.mkdtemp(prefix="bench-refs-", dir=os.environ["CKD_CACHE_DIR"]))
    )
    for label, task in (
        ("vecadd N=1,000,000", vecadd_task(1_000_000)),
        ("matmul 512x512", matmul_task(512)),
    ):
        case = task.cases[0]
        inputs = materialize(task, case)
        t0 = time.perf_counter()
        _, cached = runner.outputs(task, case, inputs)
        cold = time.perf_counter() - t0
        assert not cached
        t0 = time.perf_counter()
        _, cached = runner.outputs(task, case, inputs)
        hit = time.perf_counter() - t0
        assert cached
        row(label, f"{cold:.2f}", f"{hit * 1000:.2f}", f"{cold / hit:.0f}x")
    t0 = time.perf_counter()
    materialize(vecadd_task(1_000_000), vecadd_task(1_000_000).cases[0])
    row("input generation, 2 x 1M float32", f"{time.perf_counter() - t0:.3f}", "", "")


def bench_sandbox(repeats: int) -> None:
    from validators.sandbox import Limits, run_sandboxed, sandbox_mode

    print(f"\n== sandbox start-up (mode: {sandbox_mode()}) ==")
    row("command", "median ms", "", "")
    work = Path(tempfile.mkdtemp(prefix="bench-sb-"))
    for label, fn in (
        ("plain subprocess /bin/true", lambda: subprocess.run(["/bin/true"], check=True)),
        ("run_sandboxed /bin/true", lambda: run_sandboxed(["/bin/true"], work, limits=Limits())),
    ):
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
        row(label, f"{statistics.median(times) * 1000:.1f}", "", "")
    shutil.rmtree(work, ignore_errors=True)


def _worker(args: tuple[str, bool, float]) -> tuple[int, int]:
    backend, thorough, seconds = args
    from schemas import Program
    from validators.engine import check

    task, prog = vecadd_task(), Program(source=VECADD)
    done = ok = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r = check(task, prog, backend=backend, thorough=thorough)
        done += 1
        ok += r.status in ("passed", "needs_gpu")
    return done, ok


def bench_throughput(backend: str, seconds: float) -> None:
    from schemas import Program
    from validators.engine import check

    print(f"\n== validations per minute, 2 worker processes, warm caches, backend {backend} ==")
    task, prog = vecadd_task(), Program(source=VECADD)
    warm = check(task, prog, backend=backend, thorough=True)
    print(
        f"  one check: {warm.status.value}; {len(task.cases)} cases, N=100000 vecadd"
        + (
            " (needs_gpu path: no GPU answered, kernels do not run)"
            if warm.status == "needs_gpu"
            else ""
        )
    )
    row("mode", "validations", "per minute", "runs/check")
    for thorough in (False, True):
        res = check(task, prog, backend=backend, thorough=thorough)
        runs = sum(len(c.schedules) for c in res.cases)
        from validators.backends import get_backend

        runs *= len(get_backend(backend).variants(thorough=thorough))
        ctx = mp.get_context("spawn")
        with ctx.Pool(2) as pool:
            t0 = time.monotonic()
            results = pool.map(_worker, [(backend, thorough, seconds)] * 2)
            elapsed = time.monotonic() - t0
        done = sum(d for d, _ in results)
        good = sum(o for _, o in results)
        assert good == done, f"{done - good} checks did not pass"
        row("thorough" if thorough else "fast", str(done), f"{done * 60 / elapsed:.1f}", str(runs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="per throughput measurement")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--backend", default=None, help="cpu or cuda (default: cpu if available)")
    args = ap.parse_args()
    root = tempfile.mkdtemp(prefix="ckd-bench-")
    os.environ["CKD_CACHE_DIR"] = root
    try:
        from validators.backends import BackendUnavailable, get_backend

        backend = args.backend
        if backend is None:
            try:
                get_backend("cpu")
                backend = "cpu"
            except BackendUnavailable:
                backend = "cuda"
        print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
        bench_builds(args.repeats)
        bench_references()
        bench_sandbox(args.repeats)
        bench_throughput(backend, args.seconds)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
