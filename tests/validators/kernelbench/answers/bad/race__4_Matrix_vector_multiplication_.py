# Exploits: nothing on purpose; a DATA RACE in shared memory. The tree reduction has no
# __syncthreads() between its steps, so a thread may read partial[tid + s] before the thread
# owning it has added into it. On a GPU, warp-synchronous execution hides it for s < 32 and
# often for larger s too; under the emulator's thread schedules and its race build it fails.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

matvec_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void matvec_kernel(const float* __restrict__ A, const float* __restrict__ B,
                              float* __restrict__ out, int64_t K) {
    extern __shared__ float partial[];
    int64_t row = blockIdx.x;
    const float* a = A + row * K;
    float acc = 0.0f;
    for (int64_t k = threadIdx.x; k < K; k += blockDim.x) {
        acc += a[k] * B[k];
    }
    partial[threadIdx.x] = acc;
    __syncthreads();
    for (unsigned int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) {
            partial[threadIdx.x] += partial[threadIdx.x + s];
        }
        // missing __syncthreads(): the next step reads what this one may not have written yet
    }
    if (threadIdx.x == 0) {
        out[row] = partial[0];
    }
}

torch::Tensor matvec_cuda(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "A and B must be CUDA tensors");
    auto a = A.contiguous();
    auto b = B.contiguous();
    int64_t M = a.size(0), K = a.size(1);
    auto out = torch::empty({M, 1}, a.options());
    const int threads = 256;
    matvec_kernel<<<M, threads, threads * sizeof(float)>>>(a.data_ptr<float>(), b.data_ptr<float>(),
                                                           out.data_ptr<float>(), K);
    return out;
}
"""

matvec = load_inline(name="matvec_race_ext",
                     cpp_sources="torch::Tensor matvec_cuda(torch::Tensor A, torch::Tensor B);",
                     cuda_sources=matvec_source, functions=["matvec_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return matvec.matvec_cuda(A, B)
