"""Sizes written as literals (`torch.rand(batch_size, 8, 256, 256)`, `return [4096, 2048]`):
named, analysed and scaled like the constants (validators.module_scaling), recorded where they
stood. The problems are level-2-like KernelBench files written for these tests: with sizes only
as literals they ended `too_large` before literals could shrink."""

from __future__ import annotations

import ast

import pytest
import torch

from builder.modules import DEFAULT_MAX_ELEMENTS, ModuleTaskError, module_task
from validators.module_scaling import scale_module
from validators.reference import ReferenceRunner
from validators.torch_module import module_constants, name_literal_sizes

CONV_RELU_BIAS = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Convolution, ReLU, then a bias added per channel."""
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.relu(self.conv(x)) + self.bias

batch_size = 128
in_channels = 8
out_channels = 16
kernel_size = 3
bias_shape = (out_channels, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, 256, 256)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
'''

GEMM_SIGMOID = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_features, out_features, scaling):
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.scaling = scaling

    def forward(self, x):
        return torch.sigmoid(self.gemm(x)) * self.scaling

def get_inputs():
    return [torch.randn(128, 4096)]

def get_init_inputs():
    return [4096, 2048, 2.0]
'''

GEMM_GROUPNORM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, in_features, out_features, num_groups):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.gn = nn.GroupNorm(num_groups, out_features)

    def forward(self, x):
        return torch.sum(self.gn(self.fc(x)), dim=1)

def get_inputs():
    return [torch.rand(512, 1024)]

def get_init_inputs():
    return [1024, 2048, 32]
'''

SOFTMAX_SHAPE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1) * 2

batch_size = 64
input_shape = (16, 512, 512)

def get_inputs():
    return [torch.rand(batch_size, *input_shape)]

def get_init_inputs():
    return []
'''


def _line(code: str, text: str) -> int:
    return next(i for i, line in enumerate(code.splitlines(), 1) if text in line)


def _tensors_fit(code: str, cap: int) -> dict[str, tuple[int, ...]]:
    """Run a (small) module file here and return every tensor's shape, checking the cap."""
    ns: dict = {"__name__": "problem"}
    exec(compile(code, "problem.py", "exec"), ns)
    torch.manual_seed(0)
    model = ns["Model"](*ns["get_init_inputs"]())
    xs = ns["get_inputs"]()
    out = model(*xs)
    shapes = {f"in{i}": tuple(x.shape) for i, x in enumerate(xs)}
    shapes.update({n: tuple(p.shape) for n, p in model.named_parameters()})
    shapes["out"] = tuple(out.shape)
    for name, shape in shapes.items():
        assert torch.Size(shape).numel() <= cap, (name, shape)
    return shapes


def test_naming_keeps_only_dimension_literals():
    original = CONV_RELU_BIAS.replace(
        "return [torch.rand(batch_size, in_channels, 256, 256)]",
        "return [torch.rand(batch_size, in_channels, 256, 256), "
        "torch.randint(0, 100, (batch_size, 300)), torch.sum(torch.ones(50), dim=0)]")
    code, record = name_literal_sizes(original)
    at = _line(original, "torch.randint")
    # 256 twice, 300 and 50 are dimensions; randint's bounds, sum's dim and 8 or less are not.
    assert [(r.name, r.value, r.line) for r in record] == [
        ("literal_256", 256, at), ("literal_256", 256, at), ("literal_300", 300, at),
        ("literal_50", 50, at)]
    assert "randint(0, 100, (batch_size, literal_300))" in code
    assert module_constants(code)["literal_256"] == 256
    ast.parse(code)
    assert name_literal_sizes(code) == (code, [])  # nothing left to name


def test_literal_conv_becomes_a_task_and_its_reference_runs(tmp_path):
    task = module_task("conv_relu_bias", CONV_RELU_BIAS)
    assert task.original_sizes["literal_256"] == 256
    assert task.inputs[0].shape == ["batch_size", "in_channels", "literal_256", "literal_256"]
    assert task.sizes["literal_256"] < 256
    # The record says which literal, at which line, became which size, and what it became.
    at = _line(CONV_RELU_BIAS, "torch.rand(")
    assert f"256 became literal_256 (line {at} in get_inputs" in task.scaling
    assert f"literal_256 256 -> {task.sizes['literal_256']}" in task.scaling
    assert "256 became literal_256" in task.description
    assert "literal_256 = 256" in task.reference.code
    runner = ReferenceRunner(tmp_path / "refs")
    for case in task.cases[:2]:  # the defaults and the odd sizes
        inputs, outs, _ = runner.case_data(task, case)
        s = task.case_sizes(case)
        assert inputs["x"].shape == (s["batch_size"], 8, s["literal_256"], s["literal_256"])
        assert outs["out"].shape[-1] == s["literal_256"] - 2


def test_literals_in_inputs_and_constructor_scale_together():
    scaled = scale_module(GEMM_SIGMOID)
    assert scaled.original_sizes == {"literal_128": 128, "literal_4096": 4096,
                                     "literal_2048": 2048}
    assert scaled.scaled and scaled.sizes["literal_4096"] < 4096
    # 4096 is one size (the input's width and the layer's in_features): they move together.
    shapes = _tensors_fit(scaled.code, DEFAULT_MAX_ELEMENTS)
    assert shapes["gemm.weight"] == (scaled.sizes["literal_2048"], scaled.sizes["literal_4096"])
    assert f"line {_line(GEMM_SIGMOID, 'torch.randn(128')} in get_inputs" in scaled.record
    assert f"line {_line(GEMM_SIGMOID, 'return [4096')} in get_init_inputs" in scaled.record


@pytest.mark.slow
def test_constructor_literal_that_is_no_dimension_stays():
    scaled = scale_module(GEMM_GROUPNORM, max_elements=1 << 14)
    # num_groups (32) feeds no dimension: it stays as written, and out_features stays a
    # multiple of it (a halving that broke the module was not kept).
    assert "literal_32" not in scaled.code and "return [literal_1024, literal_2048, 32]" in scaled.code
    assert scaled.sizes["literal_2048"] % 32 == 0
    _tensors_fit(scaled.code, 1 << 14)


@pytest.mark.slow
def test_module_level_shape_tuple_and_fitting_problems():
    scaled = scale_module(SOFTMAX_SHAPE)
    assert set(scaled.original_sizes) >= {"batch_size", "literal_512"}
    _tensors_fit(scaled.code, DEFAULT_MAX_ELEMENTS)
    # A problem that fits as written comes back as written (literals named, nothing scaled).
    small = scale_module(GEMM_SIGMOID, max_elements=1 << 24)
    assert not small.scaled and not small.record.count("->")
    assert small.code == small.named_code


@pytest.mark.slow
def test_still_too_large_names_the_tensor():
    # A dimension that no size feeds (the output of a fixed view) cannot shrink.
    code = SOFTMAX_SHAPE.replace("torch.softmax(x, dim=-1) * 2",
                                 "torch.zeros(1 << 22).view(-1, 64) + x.sum()")
    with pytest.raises(ModuleTaskError) as err:
        scale_module(code)
    assert err.value.reason == "too_large" and "out0" in err.value.detail


SCALE_ROWS = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Scales each column by a weight: broadcasting ties the width to the batch."""
    def __init__(self):
        super().__init__()

    def forward(self, x, w):
        return torch.relu(x * w)

batch_size = 2048

def get_inputs():
    return [torch.rand(batch_size, 2048), torch.rand(batch_size)]

def get_init_inputs():
    return []
'''


def test_literal_that_must_equal_a_constant_is_tied_to_it():
    # Neither batch_size nor the literal 2048 can change alone (x * w broadcasts w over the
    # columns): the literal is written as batch_size and both shrink together.
    scaled = scale_module(SCALE_ROWS)
    assert "torch.rand(batch_size, batch_size)" in scaled.named_code
    assert scaled.sizes["batch_size"] < 2048
    assert "tied to the constant batch_size" in scaled.record
    _tensors_fit(scaled.code, DEFAULT_MAX_ELEMENTS)
