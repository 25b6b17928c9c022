"""Sizes bound by chained (`height = width = 256`) and tuple (`depth, height, width = 24, 48,
48`) assignments, and literals in `[1024] * 16`: read and scaled exactly as `NAME = <int>` is.
Before, those constants stayed at full size and the plan ended `too_large` (KernelBench level 2:
16 of 100 problems; level 3: 3_DeepNarrowMLP, 14_DenseNet121DenseBlock, 27_RegNet).

Also the meta describe of recurrent layers (`ShortRNN`): an LSTM or GRU at KernelBench's sizes
took about 5 s a describe, and 100 to 320 s a size plan. The problems are written for these
tests in KernelBench's shape."""

from __future__ import annotations

import ast
import contextlib
import itertools

import pytest
import torch

from validators.module_scaling import DEFAULT_MAX_ELEMENTS, scale_module
from validators.sandbox import sandbox_mode
from validators.torch_module import (
    SHORT_RNN,
    module_constants,
    name_literal_sizes,
    substitute_constants,
)

needs_sandbox = pytest.mark.skipif(sandbox_mode() == "rlimits",
                                   reason="needs the namespace sandbox")

# --- reading and substituting (AST only) ------------------------------------------------------

FORMS = """import torch
depth = 32; height = width = 128  # one line, two statements
D, H, W = 16, 1 << 5, 32
(a, b), [c] = (1 << 4, 2 * 8), [3]
[e, f] = [5, 6]
x, *rest = 1, 2, 3
g, h = 7, x
N: int = 4
p = q = (
    1 << 10
)
obj = torch.nn.Module()
r = obj.attr = 9
z = 1
"""


def test_every_assignment_form_is_read():
    assert module_constants(FORMS) == {
        "depth": 32, "height": 128, "width": 128, "D": 16, "H": 32, "W": 32, "a": 16, "b": 16,
        "c": 3, "e": 5, "f": 6, "g": 7, "N": 4, "p": 1024, "q": 1024, "z": 1}
    # Left out: a starred target (no element of its own), a name (not a literal), a chained
    # assignment to anything but names.


def test_substituted_names_change_apart_and_lines_stay():
    sizes = {"height": 64, "H": 8, "b": 5, "f": 2, "q": 100, "N": 2, "depth": 9, "rest": 4}
    out = substitute_constants(FORMS, sizes)
    assert module_constants(out) == {**module_constants(FORMS),
                                     **{k: v for k, v in sizes.items() if k != "rest"}}
    ast.parse(out)
    old_lines, new_lines = FORMS.splitlines(), out.splitlines()
    assert len(new_lines) == len(old_lines)
    changed = {i + 1 for i, (o, n) in enumerate(zip(old_lines, new_lines, strict=True)) if o != n}
    assert changed == {2, 3, 4, 5, 8, 9, 10}
    assert new_lines[1] == "depth = 9; height = 64; width = 128  # one line, two statements"
    assert new_lines[2] == "D, H, W = 16, 8, 32"
    assert new_lines[3] == "(a, b), [c] = (1 << 4, 5), [3]"
    # Names not asked for keep their text; a chained assignment asked for nothing stays chained.
    assert substitute_constants(FORMS, {"D": 2}).splitlines()[2] == "D, H, W = 2, 1 << 5, 32"
    assert "height = width = 128" in substitute_constants(FORMS, {"D": 2})
    assert "obj.attr = 9" in substitute_constants(FORMS, {"r": 1})


def test_chained_and_tuple_forms_equal_plain_assignments():
    chained = "a = b = c = 256\nd, (e, f) = 3, (4, 5)\n"
    plain = "a = 256\nb = 256\nc = 256\nd = 3\ne = 4\nf = 5\n"
    assert module_constants(chained) == module_constants(plain)
    for sizes in ({"b": 16}, {"a": 1, "c": 2, "e": 7}, {"a": 8, "b": 8, "c": 8, "d": 1, "f": 9}):
        assert module_constants(substitute_constants(chained, sizes)) == module_constants(
            substitute_constants(plain, sizes))


def test_repeated_literal_list_is_named():
    code = ("import torch\nlayers = [1024] * 4\nmixed = 2 * [2048] + [4096]\n"
            "def get_inputs():\n    return [torch.rand(16, 1024)]\n"
            "def get_init_inputs():\n    return [layers]\n")
    named, record = name_literal_sizes(code)
    assert "layers = [literal_1024] * 4" in named
    assert "mixed = 2 * [literal_2048] + [literal_4096]" in named
    assert {r.value for r in record} == {16, 1024, 2048, 4096}
    assert module_constants(named)["literal_1024"] == 1024


# --- scaling with the real describer ----------------------------------------------------------

CONV3D_TUPLE = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """3-D convolution, then a bias per channel and a clamp."""
    def __init__(self, in_channels, out_channels, kernel_size, bias_shape):
        super().__init__()
        self.conv = nn.Conv3d(in_channels, out_channels, kernel_size, padding=1)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x):
        return torch.clamp(self.conv(x) + self.bias, min=0.0, max=1.0)

batch_size = 16
in_channels = 3
out_channels = 16
depth, height, width = 32, 128, 128
kernel_size = 3
bias_shape = (out_channels, 1, 1, 1)

def get_inputs():
    return [torch.rand(batch_size, in_channels, depth, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size, bias_shape]
'''

CONV2D_CHAINED = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Convolution, tanh, then a max over the channels."""
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return torch.tanh(self.conv(x)).amax(dim=1)

batch_size = 64
in_channels = 3; out_channels = 32
height = width = 1024
kernel_size = 3

def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]

def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''

DEEP_NARROW = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """A stack of equal linear layers with ReLU between them."""
    def __init__(self, input_size, layer_sizes, output_size):
        super().__init__()
        layers = []
        current = input_size
        for size in layer_sizes:
            layers += [nn.Linear(current, size), nn.ReLU()]
            current = size
        layers.append(nn.Linear(current, output_size))
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)

batch_size = 64
input_size = 2048
layer_sizes = [2048] * 4
output_size = 16

def get_inputs():
    return [torch.rand(batch_size, input_size)]

def get_init_inputs():
    return [input_size, layer_sizes, output_size]
'''


def _split(code: str) -> str:
    """The same problem with one plain `NAME = <int>` per name."""
    return (code.replace("depth, height, width = 32, 128, 128",
                         "depth = 32\nheight = 128\nwidth = 128")
            .replace("height = width = 1024", "height = 1024\nwidth = 1024"))


@needs_sandbox
@pytest.mark.parametrize("code", [CONV3D_TUPLE, CONV2D_CHAINED], ids=["tuple", "chained"])
def test_sizes_from_tuple_and_chained_assignments_scale_as_plain_ones(code):
    scaled = scale_module(code)
    plain = scale_module(_split(code))
    # Before: height and width unread, out0 over the cap at any batch and channels: too_large.
    assert {"height", "width"} <= set(scaled.sizes)
    assert scaled.sizes == plain.sizes and scaled.original_sizes == plain.original_sizes
    assert scaled.sizes["height"] < scaled.original_sizes["height"]
    assert module_constants(scaled.code) == module_constants(plain.code)
    assert len(scaled.code.splitlines()) == len(code.splitlines())
    _tensors_fit(scaled.code, DEFAULT_MAX_ELEMENTS)


@needs_sandbox
def test_the_validators_plan_judges_those_problems():
    from validators.kernelbench.shapes import plan_sizes

    for code in (CONV3D_TUPLE, CONV2D_CHAINED):
        plan = plan_sizes(code)
        assert plan.scaled and plan.sizes == plan_sizes(_split(code)).sizes
        assert max(plan.sizes["height"], plan.sizes["width"]) < plan.original_sizes["height"]


@needs_sandbox
def test_repeated_literal_layer_sizes_scale():
    scaled = scale_module(DEEP_NARROW)
    assert "layer_sizes = [literal_2048] * 4" in scaled.code
    assert scaled.sizes["literal_2048"] < 2048
    _tensors_fit(scaled.code, DEFAULT_MAX_ELEMENTS)


def _tensors_fit(code: str, cap: int) -> None:
    ns: dict = {"__name__": "problem"}
    exec(compile(code, "problem.py", "exec"), ns)
    torch.manual_seed(0)
    model = ns["Model"](*ns["get_init_inputs"]())
    xs = ns["get_inputs"]()
    with torch.no_grad():
        out = model(*xs)
    for t in [*xs, *model.parameters(), out]:
        assert t.numel() <= cap, tuple(t.shape)


# --- recurrent layers on the meta device ------------------------------------------------------

def _short_rnn() -> dict:
    ns: dict = {"torch": torch, "contextlib": contextlib}
    exec(compile(SHORT_RNN, "short_rnn", "exec"), ns)
    return ns


def _form(out) -> list:
    flat = []
    for t in out if isinstance(out, tuple) else (out,):
        flat += list(t) if isinstance(t, tuple) else [t]
    return [(tuple(t.shape), t.stride(), t.dtype) for t in flat]


def test_short_rnn_gives_the_full_runs_shapes_strides_and_errors():
    import torch.nn.modules.rnn as rnn

    short = _short_rnn()
    real_vf = rnn._VF
    n = 0
    for kind, batch_first, bidi, batch, proj, given, unbatched in itertools.product(
            ["LSTM", "GRU", "RNN", "RNN_relu"], [False, True], [False, True], [1, 3], [0, 4],
            [False, True], [False, True]):
        if proj and kind != "LSTM":
            continue
        layers = 2
        kw = dict(batch_first=batch_first, bidirectional=bidi, num_layers=layers)
        if proj:
            kw["proj_size"] = proj
        if kind == "RNN_relu":
            kw["nonlinearity"] = "relu"
        dirs, hsize = (2 if bidi else 1), proj or 7
        with torch.device("meta"):
            m = getattr(torch.nn, kind.split("_")[0])(5, 7, **kw)
            if unbatched:
                x, h, c = (torch.rand(11, 5), torch.rand(dirs * layers, hsize),
                           torch.rand(dirs * layers, 7))
            else:
                x = torch.rand(batch, 11, 5) if batch_first else torch.rand(11, batch, 5)
                h, c = torch.rand(dirs * layers, batch, hsize), torch.rand(dirs * layers, batch, 7)
            args = (x,) if not given else ((x, (h, c)) if kind == "LSTM" else (x, h))
            with torch.no_grad():
                full = m(*args)
                with short["short_rnns"]("meta"):
                    assert isinstance(rnn._VF, short["ShortRNN"])
                    fast = m(*args)
                assert rnn._VF is real_vf
        assert _form(fast) == _form(full), (kind, kw, batch, given, unbatched)
        n += 1
    assert n == 160
    # A wrong input size fails as the full run does; another device runs the real op.
    with torch.device("meta"):
        m = torch.nn.GRU(8, 16, 2)
        for ctx in (contextlib.nullcontext(), short["short_rnns"]("meta")):
            with ctx, pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal"):
                m(torch.rand(40, 2, 9))
    with short["short_rnns"]("cpu"):
        assert rnn._VF is real_vf


def test_short_rnn_gives_the_long_sequences_shapes():
    # Every step of this on meta takes about 35 s; the short form runs two (timings: the
    # module's docstring and the stop's note, measured side by side, not asserted here).
    short = _short_rnn()
    with torch.device("meta"):
        m = torch.nn.LSTM(128, 256, 6, batch_first=True)
        x = torch.rand(10, 4096, 128)
        with torch.no_grad(), short["short_rnns"]("meta"):
            out, (h, c) = m(x)
    assert tuple(out.shape) == (10, 4096, 256) and tuple(h.shape) == (6, 10, 256)


LSTM_PROBLEM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """A stacked LSTM; a linear layer reads the last step."""
    def __init__(self, input_size, hidden_size, num_layers, output_size):
        super().__init__()
        self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True)
        self.fc = nn.Linear(hidden_size, output_size)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[:, -1, :])

batch_size = 10
sequence_length = 512
input_size = 128
hidden_size = 256
num_layers = 6
output_size = 10

def get_inputs():
    return [torch.rand(batch_size, sequence_length, input_size)]

def get_init_inputs():
    return [input_size, hidden_size, num_layers, output_size]
'''


@needs_sandbox
def test_an_lstm_problems_plan_is_the_one_every_step_gave():
    from validators.kernelbench.shapes import plan_sizes

    plan = plan_sizes(LSTM_PROBLEM)
    # The plan a describe of every step gave (110 s on two shared cores; now about 2 s).
    assert plan.sizes == {"batch_size": 10, "sequence_length": 128, "input_size": 128,
                          "hidden_size": 256, "output_size": 10}
