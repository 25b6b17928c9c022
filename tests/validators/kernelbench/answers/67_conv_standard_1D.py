import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

conv1d_source = r"""
#include <torch/extension.h>
#include <cuda_runtime.h>

// Direct 1-D convolution (cross-correlation, as nn.Conv1d), groups = 1: one thread per output
// element out[b, oc, ol] = sum_ic sum_k x[b, ic, ol*stride + k*dilation - padding] * w[oc, ic, k].
__global__ void conv1d_kernel(const float* __restrict__ x, const float* __restrict__ w,
                              const float* __restrict__ bias, float* __restrict__ out,
                              int B, int C_in, int L_in, int C_out, int K, int L_out,
                              int stride, int padding, int dilation) {
    int64_t total = (int64_t)B * C_out * L_out;
    int64_t step = (int64_t)blockDim.x * gridDim.x;
    for (int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; idx < total; idx += step) {
        int ol = idx % L_out;
        int oc = (idx / L_out) % C_out;
        int b = idx / ((int64_t)L_out * C_out);
        float acc = bias ? bias[oc] : 0.0f;
        for (int ic = 0; ic < C_in; ++ic) {
            const float* xr = x + ((int64_t)b * C_in + ic) * L_in;
            const float* wr = w + ((int64_t)oc * C_in + ic) * K;
            for (int k = 0; k < K; ++k) {
                int il = ol * stride + k * dilation - padding;
                if (il >= 0 && il < L_in) {
                    acc += xr[il] * wr[k];
                }
            }
        }
        out[idx] = acc;
    }
}

torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor w, c10::optional<torch::Tensor> bias,
                          int64_t stride, int64_t padding, int64_t dilation) {
    TORCH_CHECK(x.is_cuda() && w.is_cuda(), "x and w must be CUDA tensors");
    TORCH_CHECK(x.dim() == 3 && w.dim() == 3, "expected x [B, C_in, L] and w [C_out, C_in, K]");
    TORCH_CHECK(x.size(1) == w.size(1), "channel counts differ (groups must be 1)");
    auto xc = x.contiguous();
    auto wc = w.contiguous();
    int B = xc.size(0), C_in = xc.size(1), L_in = xc.size(2);
    int C_out = wc.size(0), K = wc.size(2);
    int L_out = (L_in + 2 * padding - dilation * (K - 1) - 1) / stride + 1;
    TORCH_CHECK(L_out > 0, "input shorter than the kernel");
    auto out = torch::empty({B, C_out, L_out}, xc.options());
    torch::Tensor bc;
    const float* bias_ptr = nullptr;
    if (bias.has_value() && bias->defined()) {
        bc = bias->contiguous();
        bias_ptr = bc.data_ptr<float>();
    }
    int64_t total = (int64_t)B * C_out * L_out;
    const int threads = 256;
    int blocks = (int)std::min<int64_t>((total + threads - 1) / threads, 4096);
    conv1d_kernel<<<blocks, threads>>>(xc.data_ptr<float>(), wc.data_ptr<float>(), bias_ptr,
                                       out.data_ptr<float>(), B, C_in, L_in, C_out, K, L_out,
                                       stride, padding, dilation);
    return out;
}
"""

conv1d_cpp = ("torch::Tensor conv1d_cuda(torch::Tensor x, torch::Tensor w, "
              "c10::optional<torch::Tensor> bias, int64_t stride, int64_t padding, "
              "int64_t dilation);")

conv1d = load_inline(name="conv1d_direct_ext", cpp_sources=conv1d_cpp,
                     cuda_sources=conv1d_source, functions=["conv1d_cuda"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, dilation: int = 1, groups: int = 1, bias: bool = False):
        super().__init__()
        if groups != 1:
            raise ValueError("this kernel implements groups=1 only")
        # The layer holds the parameters (initialised as the reference's); the kernel computes.
        self.conv1d = nn.Conv1d(in_channels, out_channels, kernel_size, stride=stride,
                                padding=padding, dilation=dilation, groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        c = self.conv1d
        return conv1d.conv1d_cuda(x, c.weight, c.bias, c.stride[0], c.padding[0], c.dilation[0])
