import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

sum_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// x viewed as [outer, reduce, inner]; one thread per (outer, inner) output, reading along the
// reduced dimension with consecutive threads on consecutive inner positions (coalesced).
__global__ void sum_dim_kernel(const float* __restrict__ x, float* __restrict__ out,
                               int64_t outer, int64_t reduce, int64_t inner) {
    int64_t total = outer * inner;
    int64_t stride = (int64_t)blockDim.x * gridDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += stride) {
        int64_t o = idx / inner;
        int64_t i = idx % inner;
        const float* p = x + o * reduce * inner + i;
        float acc = 0.0f;
        for (int64_t r = 0; r < reduce; ++r) {
            acc += p[r * inner];
        }
        out[idx] = acc;
    }
}

torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "x must be float32");
    auto xc = x.contiguous();
    if (dim < 0) dim += xc.dim();
    TORCH_CHECK(dim >= 0 && dim < xc.dim(), "dim out of range");
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    int64_t reduce = xc.size(dim);
    auto sizes = xc.sizes().vec();
    sizes[dim] = 1;
    auto out = torch::empty(sizes, xc.options());
    int64_t total = outer * inner;
    if (total == 0) return out;
    const int threads = 256;
    int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 1024);
    sum_dim_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), out.data_ptr<float>(),
                                        outer, reduce, inner);
    return out;
}
"""

sum_cpp = "torch::Tensor sum_dim_cuda(torch::Tensor x, int64_t dim);"

sum_ext = load_inline(name="sum_dim_ext", cpp_sources=sum_cpp, cuda_sources=sum_source,
                      functions=["sum_dim_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return sum_ext.sum_dim_cuda(x, self.dim)
