"""Generator tasks (outputs only: fill, iota, patterns) validate end to end on the cpu backend:
the right program passes, a wrong one fails, and one that computes on the host is caught by the
kernel-dependence check even though no input is random."""

from __future__ import annotations

import shutil

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec
from validators.build_cache import BuildCache
from validators.engine import Engine
from validators.reference import ReferenceRunner
from validators.sandbox import Limits

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

LIMITS = Limits(cpu_seconds=10, wall_seconds=60, memory_bytes=2 << 30, file_size_bytes=16 << 20,
                max_processes=32, output_bytes=256 << 10)

# out[i] = 0.5 i - 3 (exact in float32), a ramp of N values.
RAMP = r"""
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#ifndef N
#define N 1000
#endif
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
  fprintf(stderr, "%s\n", cudaGetErrorString(e)); return 1; } } while (0)
__global__ void ramp(float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 0.5f * (float)i - 3.0f;
}
int main() {
  size_t bytes = (size_t)N * sizeof(float);
  float* h = (float*)malloc(bytes);
  float* d;
  CHECK(cudaMalloc(&d, bytes));
  ramp<<<(N + 255) / 256, 256>>>(d, N);
  CHECK(cudaGetLastError());
  CHECK(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
  FILE* o = fopen("data/out.bin", "wb");
  if (!o || fwrite(h, sizeof(float), N, o) != (size_t)N) return 1;
  fclose(o);
  return 0;
}
"""

# Computes the ramp on the host and uploads it; the kernel it launches does nothing useful.
HOST_RAMP = RAMP.replace(
    "  ramp<<<(N + 255) / 256, 256>>>(d, N);",
    "  for (int i = 0; i < N; ++i) h[i] = 0.5f * (float)i - 3.0f;\n"
    "  CHECK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));\n"
    "  ramp<<<1, 1>>>(d, 0);")

REFERENCE = ("import numpy as np\n\ndef reference(inputs, sizes):\n"
             "    return {'out': np.arange(sizes['N'], dtype=np.float32) * 0.5 - 3}\n")


def ramp_task() -> Task:
    return Task(
        name="ramp", description="Write out[i] = 0.5 i - 3 for i in [0, N) (float32, [N]).",
        inputs=[], outputs=[TensorSpec(name="out", dtype="float32", shape=["N"], read_only=False)],
        sizes={"N": 1000},
        cases=[InputCase(name="default", seed=1), InputCase(name="odd", seed=2, sizes={"N": 37}),
               InputCase(name="big", seed=3, sizes={"N": 4099})],
        reference=Reference(code=REFERENCE),
    )


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    from validators.backends.cpu import CpuBackend

    root = tmp_path_factory.mktemp("generator")
    cache = BuildCache(root / "builds")
    backend = CpuBackend(cache=cache)
    why = backend.available()
    if why:
        pytest.skip(f"cpu backend not available: {why}")
    return Engine(backend, limits=LIMITS, cache=cache, references=ReferenceRunner(root / "refs"))


def test_generator_task_passes_with_the_kernel_check_run(engine):
    res = engine.check(ramp_task(), Program(source=RAMP), thorough=False)
    assert res.status == Status.PASSED, res.reason
    assert [c.status for c in res.cases] == [Status.PASSED] * 3
    assert res.cases[2].outputs[0].elements == 4099
    # No input is random, so no case is re-seeded; the no-launch check still ran.
    assert res.fresh_seed is None
    assert res.kernel_check.startswith("outputs depend on the kernels (case default), by the "
                                       "no-launch run"), res.kernel_check


def test_wrong_generator_fails(engine):
    wrong = RAMP.replace("0.5f * (float)i - 3.0f", "0.5f * (float)i - 3.0f + (i == 17)")
    res = engine.check(ramp_task(), Program(source=wrong), thorough=False)
    assert res.status == Status.FAILED, res.reason
    assert "first at index 17" in res.reason


def test_generator_computed_on_the_host_is_rejected(engine):
    res = engine.check(ramp_task(), Program(source=HOST_RAMP), thorough=False)
    assert res.status == Status.REJECTED, res.reason
    assert "outputs do not depend on the kernels" in res.reason
