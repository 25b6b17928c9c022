"""An answer whose operator is registered with TORCH_LIBRARY and built with
`load_inline(..., is_python_module=False)`: torch loads such an extension through ctypes
(`torch.ops.load_library`), which the answer's guard refused as a foreign native library, so an
honest answer was `runtime_error` ("importing the answer failed"). The guard now lets exactly
the libraries the verifier built through; any other ctypes load stays refused. Operators
registered for CUDA only (in C++ or from Python) run on the emulated device tensors, which are
CPU tensors to torch's dispatcher."""

from __future__ import annotations

import pytest

from schemas import Status
from validators.kernelbench import verify
from validators.kernelbench.answer import emulation_available

pytestmark = pytest.mark.skipif(not emulation_available(),
                                reason="validators.cpu.torch_cuda (CUDA extensions on the CPU) "
                                       "is not available")

PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, self.slope)

batch_size = 8
dim = 96

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return [0.1]
"""

ANSWER = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
#include <torch/extension.h>
#include <torch/library.h>

__global__ void leaky_kernel(const float* __restrict__ x, float* __restrict__ y, float slope,
                             int64_t n) {
    int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v > 0.f ? v : v * slope; }
}

at::Tensor leaky_cuda(const at::Tensor& x, double slope) {
    TORCH_CHECK(x.is_cuda());
    auto xc = x.contiguous();
    auto y = at::empty_like(xc);
    int64_t n = xc.numel();
    leaky_kernel<<<(n + 255) / 256, 256>>>(xc.data_ptr<float>(), y.data_ptr<float>(),
                                           (float)slope, n);
    return y;
}

TORCH_LIBRARY(ckd_leaky_ops, m) { m.def("leaky(Tensor x, float slope) -> Tensor"); }
TORCH_LIBRARY_IMPL(ckd_leaky_ops, CUDA, m) { m.impl("leaky", &leaky_cuda); }
"""

path = load_inline(name="ckd_leaky_lib", cpp_sources="", cuda_sources=cuda_src,
                   is_python_module=False, verbose=False)
LOAD_OTHER

class ModelNew(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return torch.ops.ckd_leaky_ops.leaky(x, self.slope)
'''


def test_an_operator_library_answer_passes():
    result = verify(PROBLEM, ANSWER.replace("LOAD_OTHER", ""), fast=True)
    assert result.status == Status.PASSED, result.reason


def test_other_native_libraries_stay_refused():
    # The same answer, then a library the verifier did not build: the guard's exception is
    # for the answer's own extensions only.
    other = ("import ctypes, ctypes.util\n"
             "ctypes.CDLL(ctypes.util.find_library('m') or 'libm.so.6')")
    result = verify(PROBLEM, ANSWER.replace("LOAD_OTHER", other), fast=True)
    assert result.status == Status.RUNTIME_ERROR, result.reason
    assert "ctypes.dlopen" in result.reason


PYTHON_REGISTERED = r'''import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_src = """
__global__ void leaky_kernel(const float* x, float* y, float slope, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) { float v = x[i]; y[i] = v > 0.f ? v : v * slope; }
}
torch::Tensor leaky(torch::Tensor x, double slope) {
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    int n = xc.numel();
    leaky_kernel<<<(n + 127) / 128, 128>>>(xc.data_ptr<float>(), y.data_ptr<float>(), (float)slope, n);
    return y;
}
"""
ext = load_inline(name="ckd_leaky_py", cpp_sources="torch::Tensor leaky(torch::Tensor x, double slope);",
                  cuda_sources=cuda_src, functions=["leaky"], verbose=False)

lib = torch.library.Library("ckd_leaky_py_ops", "DEF")
lib.define("leaky(Tensor x, float slope) -> Tensor")
lib.impl("leaky", ext.leaky, "CUDA")

class ModelNew(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope

    def forward(self, x):
        return torch.ops.ckd_leaky_py_ops.leaky(x, self.slope)
'''


def test_an_operator_registered_for_cuda_from_python_passes():
    result = verify(PROBLEM, PYTHON_REGISTERED, fast=True)
    assert result.status == Status.PASSED, result.reason
