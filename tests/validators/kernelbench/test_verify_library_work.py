"""Library work in a KernelBench answer: a cuBLAS GEMM followed by a copy kernel passed with
nothing said (the red team's finding), though the library did the computing and the answer's
kernel only copied. The emulator's runtime now counts computing library calls per forward
call; a result names them in a note, and `allow_library=False` (`--no-library-calls`) refuses
them as `library_work`."""

from __future__ import annotations

import pytest

from schemas import Status, ValidationResult
from validators.kernelbench import verify
from validators.kernelbench.answer import AnswerRun, Call, emulation_available
from validators.kernelbench.defences import library_rule

PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, A, B):
        return torch.matmul(A, B)

def get_inputs():
    return [torch.rand(16, 24), torch.rand(24, 20)]

def get_init_inputs():
    return []
"""

ANSWER = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cublas_v2.h>

__global__ void copy_kernel(const float* src, float* dst, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) dst[i] = src[i];
}

torch::Tensor mm(torch::Tensor A, torch::Tensor B) {
    int M = A.size(0), K = A.size(1), N = B.size(1);
    auto tmp = torch::empty({M, N}, A.options());
    cublasHandle_t h;
    cublasCreate(&h);
    float alpha = 1.f, beta = 0.f;
    cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B.data_ptr<float>(), N,
                A.data_ptr<float>(), K, &beta, tmp.data_ptr<float>(), N);
    cublasDestroy(h);
    auto out = torch::empty({M, N}, A.options());
    int n = M * N;
    copy_kernel<<<(n + 255) / 256, 256>>>(tmp.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""
ext = load_inline(name="lib_work_gemm", cpp_sources="torch::Tensor mm(torch::Tensor A, torch::Tensor B);",
                  cuda_sources=SRC, functions=["mm"], extra_ldflags=["-lcublas"])


class ModelNew(nn.Module):
    def forward(self, A, B):
        return ext.mm(A.contiguous(), B.contiguous())
'''


def _run(calls: list[Call]) -> AnswerRun:
    run = AnswerRun(variant="plain", schedule="forward", poison=None, no_launch=False, status="ok")
    run.calls = calls
    return run


def _call(name: str, library: dict[str, int]) -> Call:
    return Call(name=name, launches=1, error="", form=[], seconds=0.0, library=library)


def test_library_rule_notes_or_refuses_and_ignores_runs_without_library_work():
    runs = [_run([_call("a", {"cublas": 2}), _call("b", {})]),
            _run([_call("a", {"cublas": 1, "thrust": 1})])]
    allowed = ValidationResult(task="t", backend="cpu", status=Status.PASSED)
    assert library_rule(runs, allowed, allow=True) is None
    assert any("cuBLAS (3 calls)" in n and "Thrust (1 call)" in n and "1 forward call" in n
               for n in allowed.notes), allowed.notes
    refused = library_rule(runs, ValidationResult(task="t", backend="cpu", status=Status.PASSED), allow=False)
    assert refused is not None and refused[:2] == (Status.REJECTED, "library_work")
    assert "cuBLAS" in refused[2]
    plain = ValidationResult(task="t", backend="cpu", status=Status.PASSED)
    assert library_rule([_run([_call("a", {})])], plain, allow=False) is None
    assert not plain.notes


@pytest.mark.skipif(not emulation_available(), reason="CUDA extensions on the CPU unavailable")
def test_a_cublas_gemm_behind_a_copy_kernel_is_counted_per_forward_call():
    result = verify(PROBLEM, ANSWER, backend="cpu", fast=True, allow_library=False)
    assert result.status == Status.REJECTED and result.rule == "library_work", result.reason
    assert "cuBLAS" in result.reason


RELU_PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x)

def get_inputs():
    return [torch.randn(64, 96)]

def get_init_inputs():
    return []
"""

# ReLU by a Thrust transform alone: on a GPU Thrust launches its own kernel; here it computes
# in host code, so the forward call launches nothing of the answer's. The library, not PyTorch,
# did the work. The unit also uses libcu++ and guards its functor's body by __CUDA_ARCH__, as
# nvcc's device pass sees it (a library-mode build; the precompiled torch prelude is not one).
THRUST_ANSWER = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
#include <torch/extension.h>
#include <cuda/std/limits>
#include <thrust/device_ptr.h>
#include <thrust/transform.h>
#include <thrust/execution_policy.h>

struct relu_op {
  __host__ __device__ float operator()(float v) const {
#ifdef __CUDA_ARCH__
    return v > 0.f ? v : 0.f;
#else
    return cuda::std::numeric_limits<float>::quiet_NaN();  // the host pass: never used on a GPU
#endif
  }
};

torch::Tensor relu(torch::Tensor x) {
  auto xc = x.contiguous();
  auto out = torch::empty_like(xc);
  auto in = thrust::device_pointer_cast(xc.data_ptr<float>());
  thrust::transform(thrust::device, in, in + xc.numel(), thrust::device_pointer_cast(out.data_ptr<float>()),
                    relu_op());
  return out;
}
"""
ext = load_inline(name="thrust_relu", cpp_sources="torch::Tensor relu(torch::Tensor x);",
                  cuda_sources=SRC, functions=["relu"])


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.relu(x)
'''


@pytest.mark.skipif(not emulation_available(), reason="CUDA extensions on the CPU unavailable")
def test_a_thrust_answer_builds_in_library_mode_and_its_work_is_the_librarys_not_torchs():
    """It was `needs_gpu` (Thrust's headers are not in the extension's include path), and with
    them, `torch_fallback` ("PyTorch did the work") for want of a launch."""
    result = verify(RELU_PROBLEM, THRUST_ANSWER, backend="cpu", fast=True)
    assert result.status == Status.PASSED, (result.status, result.rule, result.reason)
    assert any("library work" in n and "Thrust" in n for n in result.notes), result.notes
    refused = verify(RELU_PROBLEM, THRUST_ANSWER, backend="cpu", fast=True, allow_library=False)
    assert refused.status == Status.REJECTED and refused.rule == "library_work", refused.reason


def test_a_call_without_launches_falls_back_to_torch_only_when_no_library_computed():
    from validators.kernelbench.defences import call_rule
    from validators.kernelbench.reference import RefCase

    x = __import__("torch").ones(3)
    ref = RefCase(name="c", label="get_inputs", seed=0, args=[], inputs={"0": x}, outputs=[x])
    bare = Call(name="c", launches=0, error="", form=[], seconds=0.0, outputs=[x], inputs_after={"0": x})
    assert call_rule(bare, ref, count_launches=True)[0] == "torch_fallback"
    bare.library = {"thrust": 1}
    assert call_rule(bare, ref, count_launches=True) is None
