"""Poisoned memory: device allocations and shared memory start filled with a different byte in
each checking variant, so a program that reads memory nobody wrote fails, naming the buffer."""

from __future__ import annotations

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec
from validators.backends import get_backend
from validators.engine import Engine

pytestmark = pytest.mark.skipif(get_backend("cpu").available() is not None, reason="no cpu backend")

TASK = Task(
    name="blur", description="y[i] = x[i-1] + x[i] + x[i+1] (zero outside)",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": 512}, cases=[InputCase(name="a", seed=3)],
    reference=Reference(code=(
        "import numpy as np\n"
        "def reference(inputs, sizes):\n"
        "    x = inputs['x']; p = np.pad(x, 1)\n"
        "    return {'y': (p[:-2] + p[1:-1] + p[2:]).astype(np.float32)}\n")),
)
HEAD = r"""
#include <cstdio>
#include <cstdlib>
#define N 512
#define B 64
static float x[N], y[N];
"""
MAIN = r"""
int main() {
  FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) return 1; fclose(f);
  float *dx, *dy; cudaMalloc(&dx, N * 4); cudaMalloc(&dy, N * 4);
  cudaMemcpy(dx, x, N * 4, cudaMemcpyHostToDevice);
  LAUNCH;
  cudaMemcpy(y, dy, N * 4, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/y.bin", "wb"); fwrite(y, 4, N, o); fclose(o); return 0; }
"""
GOOD = HEAD + r"""
__global__ void blur(const float* in, float* out, int n) {
  __shared__ float tile[B + 2];
  int i = blockIdx.x * B + threadIdx.x, t = threadIdx.x + 1;
  tile[t] = in[i];
  if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : 0.f;
  if (threadIdx.x == B - 1) tile[B + 1] = i + 1 < n ? in[i + 1] : 0.f;
  __syncthreads();
  out[i] = tile[t - 1] + tile[t] + tile[t + 1];
}
""" + MAIN.replace("LAUNCH", "blur<<<N / B, B>>>(dx, dy, N)")
MUTANTS = {
    # the apron one column short: the right halo is never loaded
    "shared_apron_short": (GOOD.replace(
        "  if (threadIdx.x == B - 1) tile[B + 1] = i + 1 < n ? in[i + 1] : 0.f;\n", ""),
        "__shared__ tile"),
    # accumulates into an output nobody cleared (cudaMemset forgotten)
    "output_not_cleared": (HEAD + r"""
__global__ void blur(const float* in, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { out[i] += in[i]; if (i > 0) out[i] += in[i - 1]; if (i + 1 < n) out[i] += in[i + 1]; }
}
""" + MAIN.replace("LAUNCH", "blur<<<N / B, B>>>(dx, dy, N)"), "device allocation #2"),
    # dynamic shared memory: the last element of each block's tile is never written
    "dynamic_shared_short": (HEAD + r"""
__global__ void blur(const float* in, float* out, int n) {
  extern __shared__ float tile[];
  int i = blockIdx.x * B + threadIdx.x, t = threadIdx.x + 1;
  tile[t] = in[i];
  if (threadIdx.x == 0) tile[0] = i > 0 ? in[i - 1] : 0.f;
  __syncthreads();
  out[i] = tile[t - 1] + tile[t] + tile[t + 1];
}
""" + MAIN.replace("LAUNCH", "blur<<<N / B, B, (B + 2) * sizeof(float)>>>(dx, dy, N)"),
        "dynamic shared memory"),
}


@pytest.fixture(scope="module")
def engine() -> Engine:
    backend = get_backend("cpu")
    backend._schedules = ["forward"]  # variants asan+plain carry the two poison bytes
    return Engine(backend)


def test_correct_stencil_passes(engine):
    res = engine.check(TASK, Program(source=GOOD), thorough=True)
    assert res.status == Status.PASSED, res.reason


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_uninitialised_reads_fail_naming_the_buffer(engine, name):
    source, buffer = MUTANTS[name]
    res = engine.check(TASK, Program(source=source), thorough=True)
    assert res.status == Status.FAILED, res.reason
    assert "reads uninitialised memory" in res.reason and buffer in res.reason, res.reason


def test_fast_check_does_not_poison(engine):
    # one variant: nothing to compare, and the memory starts as the allocator leaves it
    res = engine.check(TASK, Program(source=MUTANTS["shared_apron_short"][0]), thorough=False)
    assert "uninitialised" not in res.reason
