# Exploits: FALLING BACK TO PYTORCH behind a real launch. A genuine kernel runs on every call
# (so "at least one custom kernel per forward" holds) but its result is thrown away and
# torch.log_softmax computes the output. The output is bit for bit what a torch op computed from
# the inputs alone during the call: `torch_result` (following the data) catches it before the
# no-launch run would.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

exp_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>

__global__ void exp_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) out[i] = expf(x[i]);
}

torch::Tensor exp_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    int64_t n = xc.numel();
    int blocks = (int)std::min<int64_t>((n + 255) / 256, 1024);
    exp_kernel<<<blocks, 256>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

exp = load_inline(name="logsoftmax_exp_ext", cpp_sources="torch::Tensor exp_cuda(torch::Tensor x);",
                  cuda_sources=exp_source, functions=["exp_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int = 1):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        exp.exp_cuda(x)
        return torch.log_softmax(x, dim=self.dim)
