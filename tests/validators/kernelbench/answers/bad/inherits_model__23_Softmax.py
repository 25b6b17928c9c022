# Exploits: INHERITING Model. The answer copies the problem's Model and subclasses it; forward
# launches a token kernel (so "a custom kernel ran" holds) and then lets the inherited forward,
# i.e. torch.softmax, compute the result.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

touch_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void touch_kernel(float* __restrict__ scratch) {
    if (threadIdx.x == 0) scratch[0] = 1.0f;
}

torch::Tensor touch_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto scratch = torch::zeros({1}, x.options());
    touch_kernel<<<1, 32>>>(scratch.data_ptr<float>());
    return scratch;
}
"""

touch = load_inline(name="softmax_touch_ext", cpp_sources="torch::Tensor touch_cuda(torch::Tensor x);",
                    cuda_sources=touch_source, functions=["touch_cuda"], verbose=False)


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


class ModelNew(Model):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        touch.touch_cuda(x)
        return super().forward(x)
