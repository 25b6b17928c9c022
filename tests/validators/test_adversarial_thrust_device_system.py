"""Thrust's device system is told apart from host code on the cpu backend.

The red team's findings: (thrust_mode_host_reads_device) Thrust builds left device memory open
to host code, because Thrust's device algorithms run as host code over device pointers on the
shim, so a program that merely included <thrust/version.h> could upload its inputs and read the
device's copy (the kernel-work check's second draw) in a plain host loop, where a GPU faults; and
(library_name_skips_fallback) a program naming a library skipped the no-launch run whenever the
device-input run could not tell, whether or not it ever called the library.

Now the device system is one of the shim's own (thrust::system::cuda, deriving from the CPP
system; validators/cpu/include/thrust/system/cuda/), each of its calls holds device memory open
while it runs and notes library work (cudashim/thrust_device.h), as the shim's cuBLAS, cuSPARSE,
CUB and cuRAND calls do, and the engine leaves out the no-launch run only when the run did
library work (`Engine._library_fallback`).

The honest Thrust programs must pass a thorough check: device_vector algorithms, thrust::device
over cudaMalloc'd memory (raw and through device_ptr), host_vector algorithms, device_vector and
device_ptr element access from host code (a copy on a GPU)."""

from __future__ import annotations

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec, Tolerance
from validators.cpu import toolchain

pytestmark = pytest.mark.skipif(toolchain.cccl_dir() is None, reason="no CCCL (Thrust) headers")

N = 1024
SQUARE = Task(
    name="square_thrust", description="y = x * x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": N}, cases=[InputCase(name="a", seed=41)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * inputs['x']}\n"),
)
SUM = SQUARE.model_copy(update={
    "name": "sum_thrust", "description": "the sum of x, and x sorted",
    "outputs": [TensorSpec(name="y", dtype="float32", shape=["N"]),
                TensorSpec(name="s", dtype="float32", shape=[1])],
    "tolerance": Tolerance(mode="allclose", atol=5e-3, rtol=1e-5),
    "reference": Reference(code="import numpy as np\ndef reference(inputs, sizes):\n"
                                "    x = inputs['x']\n"
                                "    return {'y': np.sort(x), 's': np.array([x.sum()], dtype=np.float32)}\n")})

IO = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
static std::vector<float> x(1024), y(1024);
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x.data(), 4, 1024, f) != 1024) exit(1); fclose(f); }
static void save(size_t n) { FILE* f = fopen("data/y.bin", "wb"); fwrite(y.data(), 4, n, f); fclose(f); }
"""
IO_S = IO + r"""
static void save_s(float s) { FILE* f = fopen("data/s.bin", "wb"); fwrite(&s, 4, 1, f); fclose(f); }
"""
THRUST = r"""
#pragma push_macro("N")
#undef N
#include <thrust/device_vector.h>
#include <thrust/host_vector.h>
#include <thrust/device_ptr.h>
#include <thrust/execution_policy.h>
#include <thrust/transform.h>
#include <thrust/reduce.h>
#include <thrust/sort.h>
#include <thrust/copy.h>
#pragma pop_macro("N")
struct sq { __host__ __device__ float operator()(float v) const { return v * v; } };
"""

CHEATS = {
    # thrust_mode_host_reads_device: the device's copy of the inputs (its second draw in the
    # kernel-work run) read by a host loop, which a GPU faults on.
    "thrust_include_host_reads_device": (r"""
#include <thrust/version.h>
""" + IO + r"""
int main() { load(); float* d; cudaMalloc(&d, 4096);
  cudaMemcpy(d, x.data(), 4096, cudaMemcpyHostToDevice); cudaDeviceSynchronize();
  const float* v = d; for (int i = 0; i < 1024; i++) y[i] = v[i] * v[i]; cudaFree(d); save(1024); }
""", Status.RUNTIME_ERROR, "host code accessed device memory"),
    # The same read after a real Thrust call on that memory: open only while the call runs.
    "thrust_call_then_host_reads_device": (IO + THRUST + r"""
int main() { load(); float* d; cudaMalloc(&d, 4096);
  cudaMemcpy(d, x.data(), 4096, cudaMemcpyHostToDevice);
  float s = thrust::reduce(thrust::device, d, d + 1024, 0.0f); (void)s;
  for (int i = 0; i < 1024; i++) y[i] = d[i] * d[i]; cudaFree(d); save(1024); }
""", Status.RUNTIME_ERROR, "host code accessed device memory"),
    # library_name_skips_fallback: the inputs uploaded as doubles (so the device-input run cannot
    # tell), a library named and never called, the answer computed on the host.
    "cub_named_never_called": (IO + r"""
#include <cub/cub.cuh>
int main() { load(); std::vector<double> xd(x.begin(), x.end()); double* d; cudaMalloc(&d, 8192);
  cudaMemcpy(d, xd.data(), 8192, cudaMemcpyHostToDevice);
  for (int i = 0; i < 1024; i++) y[i] = x[i] * x[i]; cudaFree(d); save(1024); }
""", Status.REJECTED, "outputs do not depend on the kernels"),
    # The same with Thrust: the inputs only moved into a device_vector (no algorithm computes).
    "thrust_device_vector_only_moved": (IO + THRUST + r"""
int main() { load(); std::vector<double> xd(x.begin(), x.end());
  thrust::device_vector<double> d(xd.begin(), xd.end()); double first = d[0]; (void)first;
  for (int i = 0; i < 1024; i++) y[i] = x[i] * x[i]; save(1024); }
""", Status.REJECTED, "outputs do not depend on the kernels"),
}

HONEST = {
    # (task, program)
    "device_vector_transform_and_element_access": (SQUARE, IO + THRUST + r"""
int main() { load(); thrust::host_vector<float> h(x.begin(), x.end());
  thrust::device_vector<float> d = h, out(1024);
  thrust::transform(d.begin(), d.end(), out.begin(), sq());
  for (int i = 0; i < 1024; i++) y[i] = out[i];   // element access from host code
  save(1024); }
"""),
    "device_ptr_over_cudamalloc": (SQUARE, IO + THRUST + r"""
int main() { load(); float *d, *o; cudaMalloc(&d, 4096); cudaMalloc(&o, 4096);
  cudaMemcpy(d, x.data(), 4096, cudaMemcpyHostToDevice);
  thrust::device_ptr<float> dp(d), op(o);
  thrust::transform(thrust::device, dp, dp + 1024, op, sq());
  float first = op[0]; (void)first;               // a device reference read from host code
  cudaMemcpy(y.data(), o, 4096, cudaMemcpyDeviceToHost); cudaFree(d); cudaFree(o); save(1024); }
"""),
    "raw_pointers_with_device_policy": (SUM, IO_S + THRUST + r"""
int main() { load(); float* d; cudaMalloc(&d, 4096);
  cudaMemcpy(d, x.data(), 4096, cudaMemcpyHostToDevice);
  float s = thrust::reduce(thrust::device, d, d + 1024, 0.0f);
  thrust::sort(thrust::device, d, d + 1024);
  cudaMemcpy(y.data(), d, 4096, cudaMemcpyDeviceToHost); cudaFree(d); save(1024); save_s(s); }
"""),
    "host_vector_algorithms_beside_device_ones": (SUM, IO_S + THRUST + r"""
int main() { load(); thrust::host_vector<float> h(x.begin(), x.end());
  thrust::host_vector<float> hs = h; thrust::sort(hs.begin(), hs.end());   // host work, unaffected
  float hsum = thrust::reduce(thrust::host, hs.begin(), hs.end(), 0.0f); (void)hsum;
  thrust::device_vector<float> d = h;
  thrust::device_ptr<float> p = d.data();
  float s = thrust::reduce(d.begin(), d.end(), 0.0f);
  thrust::sort(thrust::device, p, p + 1024);
  thrust::host_vector<float> back = d;
  for (int i = 0; i < 1024; i++) y[i] = back[i];
  save(1024); save_s(s); }
"""),
}


@pytest.fixture(scope="module")
def engine():
    from validators.backends import get_backend
    from validators.engine import Engine

    return Engine(get_backend("cpu"))


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_host_code_in_thrust_builds_is_caught(engine, name):
    source, status, why = CHEATS[name]
    res = engine.check(SQUARE, Program(source=source), thorough=False)
    assert res.status == status, (res.status, res.reason, res.kernel_check)
    assert why in res.reason, res.reason


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_thrust_programs_pass_a_thorough_check(engine, name):
    task, source = HONEST[name]
    res = engine.check(task, Program(source=source), thorough=True)
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)


def test_library_work_is_noted_only_for_device_calls_that_compute(tmp_path):
    """The runtime's "library <name> <call>" lines: a Thrust device algorithm and a CUB call are
    noted; moving data into a device_vector, reading its elements and host_vector algorithms are
    not."""
    import os
    import subprocess

    def lines(source: str) -> list[str]:
        out = tmp_path / f"b{len(list(tmp_path.iterdir()))}"
        built = toolchain.compile_program(source, out, thrust="thrust" in source)
        assert built.ok, built.diagnostics[-2000:]
        log = out / "uploads.log"
        subprocess.run([str(built.exe)], cwd=out, check=True, capture_output=True,
                       env={**os.environ, "CUDASHIM_UPLOAD_LOG": str(log)})
        text = log.read_text() if log.exists() else ""  # written when something was noted
        return [ln for ln in text.splitlines() if ln.startswith("library ")]

    moved = lines(THRUST + r"""
int main() { thrust::host_vector<float> h(64, 2.0f); thrust::sort(h.begin(), h.end());
  thrust::device_vector<float> d = h; float v = d[3]; d[4] = v; thrust::host_vector<float> b = d;
  return b[4] == 2.0f ? 0 : 1; }
""")
    assert moved == [], moved
    computed = lines(THRUST + r"""
#include <cub/cub.cuh>
int main() { thrust::device_vector<float> d(64, 2.0f); float s = thrust::reduce(d.begin(), d.end());
  float *p, *o; cudaMalloc(&p, 256); cudaMalloc(&o, 4); void* t = nullptr; size_t b = 0;
  cub::DeviceReduce::Sum(t, b, p, o, 64);
  return s == 128.0f ? 0 : 1; }
""")
    assert sorted(ln.split()[1] for ln in computed) == ["cub", "thrust"], computed
