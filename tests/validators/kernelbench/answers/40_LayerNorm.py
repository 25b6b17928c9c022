import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

ln_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>
#include <math.h>

__device__ float block_sum(float v, float* sdata) {
    int tid = threadIdx.x;
    sdata[tid] = v;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (tid < s) sdata[tid] += sdata[tid + s];
        __syncthreads();
    }
    float total = sdata[0];
    __syncthreads();  // sdata is reused by the next reduction
    return total;
}

// Layer norm over the last N elements of each row: one block per row; the mean, then the
// (biased) variance around it, then the affine transform.
__global__ void layer_norm_kernel(const float* __restrict__ x, const float* __restrict__ gamma,
                                  const float* __restrict__ beta, float* __restrict__ out,
                                  int64_t N, float eps) {
    extern __shared__ float sdata[];
    const float* xr = x + (int64_t)blockIdx.x * N;
    float* yr = out + (int64_t)blockIdx.x * N;
    float local = 0.0f;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) local += xr[i];
    float mean = block_sum(local, sdata) / (float)N;
    local = 0.0f;
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        float d = xr[i] - mean;
        local += d * d;
    }
    float var = block_sum(local, sdata) / (float)N;
    float inv_std = rsqrtf(var + eps);
    for (int64_t i = threadIdx.x; i < N; i += blockDim.x) {
        yr[i] = (xr[i] - mean) * inv_std * gamma[i] + beta[i];
    }
}

torch::Tensor layer_norm_cuda(torch::Tensor x, torch::Tensor gamma, torch::Tensor beta,
                              double eps) {
    TORCH_CHECK(x.is_cuda() && gamma.is_cuda() && beta.is_cuda(), "tensors must be on CUDA");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    auto g = gamma.contiguous();
    auto b = beta.contiguous();
    int64_t N = g.numel();
    TORCH_CHECK(N > 0 && xc.numel() % N == 0, "normalized shape does not divide the input");
    int64_t rows = xc.numel() / N;
    auto out = torch::empty_like(xc);
    if (rows == 0) return out;
    const int threads = 256;
    layer_norm_kernel<<<rows, threads, threads * sizeof(float)>>>(
        xc.data_ptr<float>(), g.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(),
        N, (float)eps);
    return out;
}
"""

ln_cpp = ("torch::Tensor layer_norm_cuda(torch::Tensor x, torch::Tensor gamma, "
          "torch::Tensor beta, double eps);")

ln = load_inline(name="layer_norm_ext", cpp_sources=ln_cpp, cuda_sources=ln_source,
                 functions=["layer_norm_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        # The module holds weight and bias (ones and zeros, as the reference's); the kernel
        # computes.
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return ln.layer_norm_cuda(x, self.ln.weight, self.ln.bias, self.ln.eps)
