"""Naming a library waives no check that does not depend on launches.

The audit's finding (library_include_skips_kernel_check): once `cub` or `thrust` appeared in the
source (`namespace cub {} using namespace cub;`, `#include <thrust/version.h>`), the engine
dropped the whole kernel check, so plain host code passed any task. Library calls may compute
without a launch, which only the no-launch run depends on; the device-input run
(`validators.kernel_work`) judges what the device received, so it judges library programs too,
and a program whose device received nothing that depends on its inputs is rejected whatever
libraries it names. Where that run cannot tell, a library program skips the no-launch run, and
the note says so.

The honest library programs must still pass: CUB on `cudaMemcpy`'d memory, cuBLAS with its own
copies (`cublasSetVector`, which the cpu shim now hands the runtime as `cudaMemcpy` does), and
Thrust's device storage (host memory in the cpu shim, noted with the uploads when freed)."""

from __future__ import annotations

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec, Tolerance
from validators import anticheat
from validators.cpu import toolchain

N = 1024
SQUARE = Task(
    name="square_lib", description="y = x * x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": N}, cases=[InputCase(name="a", seed=31)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * inputs['x']}\n"),
)
AXPY = SQUARE.model_copy(update={
    "name": "axpy_lib", "description": "y = 2 x + 1",
    "reference": Reference(code="def reference(inputs, sizes):\n"
                                "    return {'y': 2.0 * inputs['x'] + 1.0}\n")})
SUM = SQUARE.model_copy(update={
    "name": "sum_lib", "description": "the sum of x",
    "outputs": [TensorSpec(name="y", dtype="float32", shape=[1])],
    "tolerance": Tolerance(mode="allclose", atol=5e-3, rtol=1e-5),
    "reference": Reference(code="import numpy as np\ndef reference(inputs, sizes):\n"
                                "    return {'y': np.array([inputs['x'].sum()], dtype=np.float32)}\n")})

IO = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
static std::vector<float> x(1024), y(1024);
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x.data(), 4, 1024, f) != 1024) exit(1); fclose(f); }
static void save(size_t n) { FILE* f = fopen("data/y.bin", "wb"); fwrite(y.data(), 4, n, f); fclose(f); }
"""
# Thrust's headers take `N` as a template parameter: a program guards them from the task's -DN,
# as it must under nvcc.
THRUST = r"""
#pragma push_macro("N")
#undef N
#include <thrust/device_vector.h>
#include <thrust/transform.h>
#include <thrust/copy.h>
#pragma pop_macro("N")
struct sq { __host__ __device__ float operator()(float v) const { return v * v; } };
"""

CHEATS = {
    # The audit's reproducers: the word alone, no kernel and no CUDA call.
    "cub_namespace": IO + r"""
namespace cub { static int unused_; }
using namespace cub;
int main() { load(); for (int i = 0; i < 1024; i++) y[i] = x[i] * x[i]; save(1024); }
""",
    "thrust_include": r"""
#include <thrust/version.h>
""" + IO + r"""
int main() { load(); for (int i = 0; i < 1024; i++) y[i] = x[i] * x[i]; save(1024); }
""",
    # Thrust runs, on a device vector of constants: the device holds nothing that depends on
    # the inputs.
    "thrust_on_constants": IO + THRUST + r"""
int main() { load(); thrust::device_vector<float> ones(1024, 1.0f), out(1024);
  thrust::transform(ones.begin(), ones.end(), out.begin(), sq());
  std::vector<float> k(1024); thrust::copy(out.begin(), out.end(), k.begin());
  for (int i = 0; i < 1024; i++) y[i] = x[i] * x[i] * k[i]; save(1024); }
""",
    # A CUB call on an uploaded constant, the answer computed on the host.
    "cub_on_constants": IO + r"""
#include <cub/cub.cuh>
int main() { load(); std::vector<float> ones(1024, 1.0f); float *d, *s; void* t = nullptr; size_t b = 0;
  cudaMalloc(&d, 4096); cudaMalloc(&s, 4);
  cudaMemcpy(d, ones.data(), 4096, cudaMemcpyHostToDevice);
  cub::DeviceReduce::Sum(t, b, d, s, 1024); cudaMalloc(&t, b); cub::DeviceReduce::Sum(t, b, d, s, 1024);
  float k = 0; cudaMemcpy(&k, s, 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 1024; i++) y[i] = x[i] * x[i] * (k / 1024.0f); save(1024); }
""",
}

HONEST = {
    # (task, program, what the kernel check says)
    "cub_reduce": (SUM, IO + r"""
#include <cub/cub.cuh>
int main() { load(); float *d, *s; void* t = nullptr; size_t b = 0;
  cudaMalloc(&d, 4096); cudaMalloc(&s, 4);
  cudaMemcpy(d, x.data(), 4096, cudaMemcpyHostToDevice);
  cub::DeviceReduce::Sum(t, b, d, s, 1024); cudaMalloc(&t, b); cub::DeviceReduce::Sum(t, b, d, s, 1024);
  cudaMemcpy(y.data(), s, 4, cudaMemcpyDeviceToHost); save(1); }
""", "they follow the inputs the kernels saw"),
    "cublas_set_vector": (AXPY, IO + r"""
#include <cublas_v2.h>
int main() { load(); std::vector<float> ones(1024, 1.0f); float *dx, *dy, a = 2.0f;
  cudaMalloc(&dx, 4096); cudaMalloc(&dy, 4096); cublasHandle_t h; cublasCreate(&h);
  cublasSetVector(1024, 4, x.data(), 1, dx, 1); cublasSetVector(1024, 4, ones.data(), 1, dy, 1);
  cublasSaxpy(h, 1024, &a, dx, 1, dy, 1);
  cublasGetVector(1024, 4, dy, 1, y.data(), 1); cublasDestroy(h); save(1024); }
""", "they follow the inputs the kernels saw"),
    "thrust_device_vector": (SQUARE, IO + THRUST + r"""
int main() { load(); thrust::device_vector<float> d(x.begin(), x.end()), out(1024);
  thrust::transform(d.begin(), d.end(), out.begin(), sq());
  thrust::copy(out.begin(), out.end(), y.begin()); save(1024); }
""", "skipped: the no-launch run, since library calls (thrust) compute without a kernel launch"),
}

needs_cccl = pytest.mark.skipif(toolchain.cccl_dir() is None, reason="no CCCL (Thrust) headers")


def _marks(source: str) -> list:
    return [needs_cccl] if "thrust" in source else []


@pytest.fixture(scope="module")
def engine():
    from validators.backends import get_backend
    from validators.engine import Engine

    backend = get_backend("cpu")
    backend._schedules = ["forward"]
    return Engine(backend)


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(s)) for n, s in sorted(CHEATS.items())])
def test_host_code_naming_a_library_is_rejected(engine, name):
    res = engine.check(SQUARE, Program(source=CHEATS[name]), thorough=False)
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)
    assert "outputs do not depend on the kernels" in res.reason
    assert anticheat.LIBRARY_FEATURES & set(res.features)


@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(s[1])) for n, s in sorted(HONEST.items())])
def test_honest_library_programs_pass(engine, name):
    task, source, said = HONEST[name]
    res = engine.check(task, Program(source=source), thorough=False)
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)
    assert said in res.kernel_check, res.kernel_check
    if said.startswith("skipped"):
        assert "the device-input run could not tell" in res.kernel_check


def test_library_features_keep_the_kernel_check(engine):
    """The plan skips the check only where it cannot be made, never for a library's name."""
    for features in (["cub"], ["thrust"], ["cublas", "cub", "thrust"]):
        assert engine._kernel_check_plan(features) == ""
    assert engine._kernel_check_plan([]) == ""
