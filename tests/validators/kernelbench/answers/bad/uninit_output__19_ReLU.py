# Exploits: STALE MEMORY. The output comes from torch::empty and the kernel writes only the
# positive elements, counting on fresh memory being zero (on a GPU it often is, or holds the
# reference's last result). Every element the kernel skips is whatever the allocator returned.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

relu_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t n) {
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float v = x[i];
        if (v > 0.0f) out[i] = v;  // the zeros are left to the allocator
    }
}

torch::Tensor relu_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    int64_t n = xc.numel();
    const int threads = 256;
    int blocks = (int)std::min<int64_t>((n + threads - 1) / threads, 1024);
    relu_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

relu = load_inline(name="relu_uninit_out_ext", cpp_sources="torch::Tensor relu_cuda(torch::Tensor x);",
                   cuda_sources=relu_source, functions=["relu_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return relu.relu_cuda(x)
