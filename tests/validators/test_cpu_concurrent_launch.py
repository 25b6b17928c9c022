"""Kernel launches from several host threads at once on the `cpu` backend.

Four OpenMP threads (`#pragma omp parallel`, built with `-fopenmp` through the backend's flag
filter) and then four `std::thread`s each run a chain of 40 rounds of two kernels and a copy on
their own buffers and stream, all at the same time. The runtime used to share one worker pool
between every launching thread, so concurrent launches overwrote each other's jobs (wrong
results) or waited for each other forever. Each thread's final buffer is hashed by the program
and compared with a NumPy model of the same chain. Last, thread 0 of a team makes an invalid
launch: only its own cudaGetLastError reports it (the last error is per host thread).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import DEFAULT_LIMITS, run_program

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

THREADS, ROUNDS, BLOCKS, BLOCK = 4, 40, 16, 128

PROGRAM = r"""
#include <cstdio>
#include <thread>
#include <vector>
#include <omp.h>
__global__ void reverse_scale(const unsigned* in, unsigned* out, int n, unsigned k) {
  __shared__ unsigned s[BLOCK];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0u;
  __syncthreads();
  int j = blockIdx.x * blockDim.x + (blockDim.x - 1 - threadIdx.x);
  if (j < n) out[j] = s[threadIdx.x] * k + blockIdx.x;
}
__global__ void bump(unsigned* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1u;
}
static unsigned long long chain(int id) {
  const int n = BLOCK * BLOCKS;
  cudaStream_t st;
  cudaStreamCreate(&st);
  unsigned *in, *out;
  cudaMalloc(&in, n * sizeof(unsigned));
  cudaMalloc(&out, n * sizeof(unsigned));
  std::vector<unsigned> h(n);
  for (int i = 0; i < n; ++i) h[i] = (unsigned)i * (id + 1);
  cudaMemcpyAsync(in, h.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice, st);
  for (int r = 0; r < ROUNDS; ++r) {
    reverse_scale<<<BLOCKS, BLOCK, 0, st>>>(in, out, n, id + 2);
    bump<<<BLOCKS, BLOCK, 0, st>>>(out, n);
    cudaMemcpyAsync(in, out, n * sizeof(unsigned), cudaMemcpyDeviceToDevice, st);
  }
  cudaStreamSynchronize(st);
  cudaMemcpy(h.data(), in, n * sizeof(unsigned), cudaMemcpyDeviceToHost);
  unsigned long long hash = 0;
  for (int i = 0; i < n; ++i) hash = hash * 31u + h[i];
  cudaFree(in);
  cudaFree(out);
  cudaStreamDestroy(st);
  return hash;
}
int main() {
  std::vector<unsigned long long> omp(THREADS), std_threads(THREADS);
  int team = 0;
#pragma omp parallel num_threads(THREADS)
  {
#pragma omp single
    team = omp_get_num_threads();
    omp[omp_get_thread_num()] = chain(omp_get_thread_num());
  }
  std::vector<std::thread> ts;
  for (int t = 0; t < THREADS; ++t) ts.emplace_back([&, t] { std_threads[t] = chain(t); });
  for (auto& t : ts) t.join();
  // The last error is per host thread: thread 0's invalid launch is its own.
  std::vector<int> errors(THREADS);
#pragma omp parallel num_threads(THREADS)
  {
    const int t = omp_get_thread_num();
    if (t == 0) bump<<<1, 2048>>>(nullptr, 0);
#pragma omp barrier
    errors[t] = (int)cudaGetLastError();
  }
  printf("team %d\n", team);
  for (int t = 0; t < THREADS; ++t) printf("%d %llu %llu\n", t, omp[t], std_threads[t]);
  printf("errors");
  for (int t = 0; t < THREADS; ++t) printf(" %d", errors[t]);
  printf("\nstatus %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
"""


def expected_hash(thread: int) -> int:
    n = BLOCK * BLOCKS
    a = (np.arange(n, dtype=np.uint32) * np.uint32(thread + 1)).astype(np.uint32)
    block_index = np.repeat(np.arange(BLOCKS, dtype=np.uint32), BLOCK)
    for _ in range(ROUNDS):
        reversed_in_block = a.reshape(BLOCKS, BLOCK)[:, ::-1].reshape(-1)
        a = reversed_in_block * np.uint32(thread + 2) + block_index + np.uint32(1)
    h = 0
    for v in a.tolist():
        h = (h * 31 + v) % (1 << 64)
    return h


@pytest.fixture(scope="module")
def build_cache(tmp_path_factory) -> BuildCache:
    return BuildCache(tmp_path_factory.mktemp("concurrent") / "builds")


@pytest.mark.parametrize(
    ("workers", "schedule", "variant"),
    [(4, "forward", "plain"), (2, "reverse", "plain"), (3, "random:11", "plain"),
     (1, "forward", "asan"), (2, "reverse", "race")],
)
def test_host_threads_launch_kernels_at_once(build_cache, workers, schedule, variant):
    program = Program(source=PROGRAM, filename="main.cu", extra_flags=["-fopenmp"])
    defines = {"THREADS": THREADS, "ROUNDS": ROUNDS, "BLOCKS": BLOCKS, "BLOCK": BLOCK}
    run = run_program(
        program,
        CpuBackend(cache=build_cache, workers=workers),
        limits=DEFAULT_LIMITS.with_overrides(wall_seconds=60),
        defines=defines,
        schedule=schedule,
        variant=variant,
    )
    assert run.status == Status.PASSED, (run.reason, run.outcome and run.outcome.stderr)
    lines = run.outcome.stdout.split("\n")
    assert lines[0] == f"team {THREADS}"  # OpenMP really ran a team (-fopenmp was kept)
    for t in range(THREADS):
        want = expected_hash(t)
        assert lines[1 + t] == f"{t} {want} {want}"
    # cudaErrorInvalidConfiguration (9) for the thread that launched 2048 threads per block.
    assert lines[1 + THREADS] == "errors 9" + " 0" * (THREADS - 1)
    assert lines[2 + THREADS] == "status no error"


def test_the_model_depends_on_every_round():
    # The hashes the test compares are of chains that differ per thread and per round count.
    assert len({expected_hash(t) for t in range(THREADS)}) == THREADS
