"""cuFFT on the CPU shim (include/cufft.h, include/cudashim/cufft_host.h, include/cufftXt.h).

Before, `#include <cufft.h>` failed (no such header) and every program using cuFFT was
`needs_gpu`: NVIDIA's simpleCUFFT and convolutionFFT2D samples, HeCBench's slit. The program
tests/validators/cpu_programs/cufft_calls.cu checks itself: every transform type, ranks 1 to 3,
batched cufftPlanMany with strides and embeds, power-of-two, mixed-radix and prime sizes
(Bluestein), in place and out of place, against a direct DFT; round trips scaled by 1/n; callbacks;
the error codes of bad handles, sizes and types. Here it runs in the plain and ASan builds; a
program of two translation units built from an nvcc line with -lcufft runs; each execution is
noted as cuFFT library work (the engine's no-launch run, KernelBench's library counts)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from schemas import Program, Status, ValidationResult
from validators.analysis import analyze
from validators.backends.cpu import CpuBackend, _host_flags
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.cpu.diagnostics import gpu_feature_from_errors
from validators.engine import run_program
from validators.project import load_project, parse_nvcc_line
from validators.sandbox import Limits

PROGRAM = Path(__file__).resolve().parent / "cpu_programs" / "cufft_calls.cu"
CASES = [
    "c2c_1d_1", "c2c_1d_17", "c2c_1d_64_inplace", "c2c_1d_1000", "c2c_1d_1009_prime",
    "z2z_1d_1000_inplace", "z2z_1d_1009_prime", "c2c_1d_12288", "c2c_2d_30x17",
    "z2z_2d_30x17_inplace", "c2c_3d_6x5x7_inplace", "z2z_3d_4x8x2", "r2c_1d_17",
    "r2c_1d_1000_inplace", "d2z_1d_131_prime_batch4", "d2z_1d_1000_inplace_batch3", "r2c_2d_12x10",
    "d2z_2d_7x9_inplace", "r2c_3d_4x6x5_inplace", "d2z_3d_4x6x5", "r2c_1d_12288", "many_c2c_2d",
    "many_z2z_interleaved", "many_r2c_2d", "work_area_and_stream", "callbacks", "errors",
]
LONG = ["c2c_1d_2^20", "z2z_1d_2x524287"]

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def _run(backend: CpuBackend, variant: str, args: list[str]):
    return run_program(Program(source=PROGRAM.read_text()), backend, args, variant=variant,
                       limits=Limits(cpu_seconds=300, wall_seconds=300))


@pytest.mark.parametrize("variant, args, cases", [
    ("plain", [], CASES + LONG),
    # ASan: cudaMalloc returns exact sizes, so a read or write past an array through a layout
    # would be reported. The long transforms are left out to keep the run short.
    ("asan", ["small"], CASES),
])
def test_every_transform_matches_a_direct_dft(backend, variant, args, cases):
    res = _run(backend, variant, args)
    assert res.status == Status.PASSED, (res.reason, res.outcome and res.outcome.stderr[-3000:],
                                         res.compile and res.compile.diagnostics[-3000:])
    lines = res.outcome.stdout.splitlines()
    assert lines[-1] == "ALL OK", lines
    assert sorted(lines[:-1]) == sorted(f"{c} ok" for c in cases), lines


# Two translation units, as convolutionFFT2D (a .cpp that plans, a .cu with kernels): the plan
# made in one is executed in the other, and the build comes from an nvcc line with -lcufft.
_HOST_CPP = r"""#include <cufft.h>
#include <cuda_runtime.h>
cufftHandle make_plan(int n) {
  cufftHandle p;
  if (cufftPlan1d(&p, n, CUFFT_R2C, 2) != CUFFT_SUCCESS) return -1;
  return p;
}
"""
_MAIN_CU = r"""#include <cufft.h>
#include <cstdio>
#include <cmath>
cufftHandle make_plan(int n);
__global__ void ramp(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 2 * n) x[i] = (float)((i % n) * (i < n ? 1 : 2));
}
int main() {
  const int n = 12;
  float* x; cufftComplex* y;
  cudaMalloc(&x, 2 * n * sizeof(float));
  cudaMalloc(&y, 2 * (n / 2 + 1) * sizeof(cufftComplex));
  ramp<<<1, 64>>>(x, n);
  cufftHandle p = make_plan(n);
  if (p < 0 || cufftExecR2C(p, x, y) != CUFFT_SUCCESS) return 2;
  cufftComplex h[2 * (n / 2 + 1)];
  cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost);
  // X_0 = sum of the ramp; X_k = -n/2 + i (n/2) cot(pi k / n) for k > 0; batch 1 doubled.
  double err = 0;
  for (int b = 0; b < 2; ++b)
    for (int k = 0; k <= n / 2; ++k) {
      double re = k == 0 ? n * (n - 1) / 2.0 : -n / 2.0;
      double im = k == 0 || 2 * k == n ? 0.0 : n / 2.0 / tan(M_PI * k / n);
      err = fmax(err, fabs(h[b * (n / 2 + 1) + k].x - (b + 1) * re) + fabs(h[b * (n / 2 + 1) + k].y - (b + 1) * im));
    }
  cufftDestroy(p);
  printf(err < 1e-4 ? "PASS\n" : "FAIL %g\n", err);
  return 0;
}
"""


def test_a_two_unit_program_built_from_an_nvcc_line_with_lcufft_runs(backend, tmp_path):
    (tmp_path / "fft.cpp").write_text(_HOST_CPP)
    (tmp_path / "main.cu").write_text(_MAIN_CU)
    line = parse_nvcc_line("nvcc -std=c++17 -O2 -arch=sm_80 main.cu fft.cpp -o app -lcufft", tmp_path)
    assert "-lcufft" in line.flags
    program = load_project(tmp_path, line.sources, line.flags)
    res = run_program(program, backend)
    assert res.status == Status.PASSED, (res.reason, res.compile and res.compile.diagnostics[-3000:])
    assert res.outcome.stdout.strip() == "PASS"
    notes = res.compile.diagnostics
    assert "cudashim: -lcufft not needed (the CPU shim provides that library in its headers)" in notes
    # -lcufft_static (callback samples) too; cufftw (the FFTW interface) is not provided.
    kept, dropped = _host_flags(["-lcufft", "-lcufft_static", "-lcufftw"])
    assert kept == [] and "not needed" in dropped[1] and "-lcufftw not linked" in dropped[2]


def test_cufft_is_a_supported_feature_and_outside_the_subset_is_needs_gpu():
    flags = analyze("#include <cufft.h>\nint main() { cufftHandle p; cufftPlan1d(&p, 8, CUFFT_C2C, 1); }\n").features
    assert "cufft" in flags and CpuBackend().unsupported_features(flags) == []
    # The multi-GPU API and the FFTW interface are not declared: a build that needs them is a GPU's.
    diag = "main.cu:9:3: error: ‘cufftXtMalloc’ was not declared in this scope"
    assert gpu_feature_from_errors(diag) == "cufft (cufftXtMalloc is not in the CPU shim's cuFFT subset)"
    missing = "main.cu:2:10: fatal error: cufftw.h: No such file or directory"
    assert (gpu_feature_from_errors(missing) or "").startswith("cufft")


_HALF = r"""#include <cufftXt.h>
int main() {
  cufftHandle p; size_t ws; long long n[1] = {64};
  cufftCreate(&p);
  cufftXtMakePlanMany(p, 1, n, NULL, 1, 1, CUDA_C_16F, NULL, 1, 1, CUDA_C_16F, 1, &ws, CUDA_C_16F);
  return 0;
}
"""


def test_a_half_precision_plan_stops_the_run_as_needs_gpu(backend):
    res = run_program(Program(source=_HALF), backend)
    assert res.status == Status.NEEDS_GPU, (res.status, res.reason)
    assert "cufftXtMakePlanMany with half or bfloat16 data" in res.reason


_NOTED = r"""#include <cufft.h>
#include <cstdio>
int main(int argc, char** argv) {
  cufftHandle p; size_t ws;
  cufftComplex* d;
  cudaMalloc(&d, 32 * sizeof(cufftComplex));
  cudaMemset(d, 0, 32 * sizeof(cufftComplex));
  if (cufftCreate(&p) || cufftMakePlan1d(p, 32, CUFFT_C2C, 1, &ws) || cufftEstimate1d(32, CUFFT_C2C, 1, &ws)) return 1;
  if (argc > 1 && (cufftExecC2C(p, d, d, CUFFT_FORWARD) || cufftExecC2C(p, d, d, CUFFT_INVERSE))) return 1;
  printf("%d\n", (int)cufftDestroy(p));
  return 0;
}
"""


def test_executions_are_noted_as_library_work_and_planning_is_not(tmp_path):
    built = toolchain.compile_program(_NOTED, tmp_path / "b")
    assert built.ok, built.diagnostics[-2000:]

    def noted(args: list[str]) -> list[str]:
        log = tmp_path / f"uploads{len(args)}.log"
        proc = subprocess.run([str(built.exe), *args], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "CUDASHIM_UPLOAD_LOG": str(log)})
        assert proc.returncode == 0 and proc.stdout.strip() == "0", proc.stderr[-2000:]
        text = log.read_text() if log.exists() else ""
        return [ln for ln in text.splitlines() if ln.startswith("library ")]

    assert noted([]) == []
    assert noted(["exec"]) == ["library cufft cufftExecC2C"]


def test_kernelbench_counts_cufft_in_its_own_column():
    # The runtime's counter order (`cudashim_library_calls`: thrust, cub, cublas, cusparse, curand,
    # cufft, other) is the harness's and the answer's; a result names cuFFT.
    from validators.kernelbench import answer, harness
    from validators.kernelbench.answer import AnswerRun, Call
    from validators.kernelbench.defences import library_rule

    assert answer.LIBRARIES == ("thrust", "cub", "cublas", "cusparse", "curand", "cufft", "other")
    assert f"LIBRARIES = {tuple(answer.LIBRARIES)}".replace("'", '"') in harness.ANSWER_HARNESS
    runtime = (Path(toolchain.__file__).resolve().parent / "runtime" / "cudashim_runtime.cpp").read_text()
    assert '{"thrust", "cub", "cublas", "cusparse", "curand", "cufft"}' in runtime
    run = AnswerRun(variant="plain", schedule="forward", poison=None, no_launch=False, status="ok")
    run.calls = [Call(name="a", launches=1, error="", form=[], seconds=0.0, library={"cufft": 2})]
    result = ValidationResult(task="t", backend="cpu", status=Status.PASSED)
    assert library_rule([run], result, allow=True) is None
    assert any("cuFFT (2 calls)" in n for n in result.notes), result.notes


_KB_PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return x * 2.0

def get_inputs():
    return [torch.rand(4, 48)]

def get_init_inputs():
    return []
"""

# A forward and an inverse cuFFT transform of each row, then a kernel that takes the real part
# scaled by 2/n: the answer's output is right, and the FFTs are library work.
_KB_ANSWER = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cufft.h>

__global__ void to_complex(const float* x, cufftComplex* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = make_float2(x[i], 0.f);
}
__global__ void real_scaled(const cufftComplex* c, float* y, int n, float s) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = c[i].x * s;
}

torch::Tensor twice(torch::Tensor x) {
    int rows = x.size(0), cols = x.size(1), n = rows * cols;
    auto c = torch::empty({n * 2}, x.options());
    auto y = torch::empty_like(x);
    cufftComplex* cp = reinterpret_cast<cufftComplex*>(c.data_ptr<float>());
    to_complex<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), cp, n);
    cufftHandle plan;
    cufftPlan1d(&plan, cols, CUFFT_C2C, rows);
    cufftExecC2C(plan, cp, cp, CUFFT_FORWARD);
    cufftExecC2C(plan, cp, cp, CUFFT_INVERSE);
    cufftDestroy(plan);
    real_scaled<<<(n + 255) / 256, 256>>>(cp, y.data_ptr<float>(), n, 2.f / cols);
    return y;
}
"""
ext = load_inline(name="lib_work_cufft", cpp_sources="torch::Tensor twice(torch::Tensor x);",
                  cuda_sources=SRC, functions=["twice"], extra_ldflags=["-lcufft"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.twice(x.contiguous())
'''


def test_a_kernelbench_answer_s_cufft_calls_are_library_work():
    from validators.kernelbench import verify
    from validators.kernelbench.answer import emulation_available

    if not emulation_available():
        pytest.skip("CUDA extensions on the CPU unavailable")
    result = verify(_KB_PROBLEM, _KB_ANSWER, backend="cpu", fast=True, allow_library=False)
    assert result.status == Status.REJECTED and result.rule == "library_work", result.reason
    assert "cuFFT" in result.reason
