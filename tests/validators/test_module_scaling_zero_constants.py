"""A size constant that is 0 (`padding = 0`) and feeds a dimension must not zero that
dimension's estimate. KernelBench's 74_conv_transposed_1D_dilated ended `too_large` for every
answer: its output, longer than its input, was estimated at one element, so nothing shrank for
it. The problem is written for this test in KernelBench's shape."""

from __future__ import annotations

import pytest

from validators.module_scaling import DEFAULT_MAX_ELEMENTS, scale_module
from validators.sandbox import sandbox_mode
from validators.torch_module import module_constants

pytestmark = pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the namespace sandbox")

TRANSPOSED = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1):
        super().__init__()
        self.up = nn.ConvTranspose1d(in_channels, out_channels, kernel_size, stride=stride,
                                     padding=padding, dilation=dilation, bias=False)

    def forward(self, x):
        return self.up(x)

batch_size = 32
in_channels = 16
out_channels = 64
kernel_size = 5
length = 65536
stride = 1
padding = PADDING
dilation = 3

def get_inputs():
    return [torch.rand(batch_size, in_channels, length)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, dilation]
"""


@pytest.mark.parametrize("padding", [0, 1])
def test_an_output_fed_by_a_zero_constant_is_scaled(padding):
    scaled = scale_module(TRANSPOSED.replace("PADDING", str(padding)))
    s = module_constants(scaled.code)
    assert s["padding"] == padding and s["length"] < 65536
    out_length = (s["length"] - 1) * s["stride"] - 2 * padding + s["dilation"] * (s["kernel_size"] - 1) + 1
    assert s["batch_size"] * s["out_channels"] * out_length <= DEFAULT_MAX_ELEMENTS
