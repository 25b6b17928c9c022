# Exploits: nothing on purpose; it READS UNINITIALISED SHARED MEMORY. The reduction starts at
# s = blockDim.x instead of blockDim.x / 2, so its first step adds sdata[tid + blockDim.x], the
# upper half of a shared array that no thread wrote. On a GPU that half often holds zeros (or
# what the previous block left) and the answer can pass; the emulator fills shared memory with
# a poison pattern and reports the read.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

l1_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>

__global__ void l1_norm_kernel(const float* __restrict__ x, float* __restrict__ out, int64_t cols) {
    extern __shared__ float sdata[];  // 2 * blockDim.x floats
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = out + (int64_t)blockIdx.x * cols;
    int tid = threadIdx.x;
    float local = 0.0f;
    for (int64_t c = tid; c < cols; c += blockDim.x) local += fabsf(xr[c]);
    sdata[tid] = local;
    __syncthreads();
    for (int s = blockDim.x; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    float mean_abs = sdata[0] / (float)cols;
    for (int64_t c = tid; c < cols; c += blockDim.x) yr[c] = xr[c] / mean_abs;
}

torch::Tensor l1_norm_cuda(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    int64_t rows = xc.size(0), cols = xc.size(1);
    const int threads = 256;
    l1_norm_kernel<<<rows, threads, 2 * threads * sizeof(float)>>>(xc.data_ptr<float>(),
                                                                   out.data_ptr<float>(), cols);
    return out;
}
"""

l1 = load_inline(name="l1_norm_uninit_ext", cpp_sources="torch::Tensor l1_norm_cuda(torch::Tensor x);",
                 cuda_sources=l1_source, functions=["l1_norm_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return l1.l1_norm_cuda(x)
