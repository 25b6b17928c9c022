"""module_task: PyTorch module files -> Tasks (scaling, sizes, cases, tolerances, errors).

The scaling logic is tested with a describer that computes a convolution's shapes in this
process (fast, exact); real KernelBench files go through the real sandboxed describer and the
real torch reference."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from builder.modules import (
    DEFAULT_MAX_ELEMENTS,
    FLOAT_TOLERANCE,
    REDUCTION_TOLERANCE,
    SIGNED_CASE,
    ModuleTaskError,
    module_task,
)
from schemas import CASES_PER_TASK, Task
from validators.reference import ReferenceRunner
from validators.torch_module import InputInfo, ModuleDescription, TensorInfo, module_constants

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
LEVEL1 = DATA / "kernelbench_level1"

CONV = """import torch
import torch.nn as nn

class Model(nn.Module):
    \"\"\"A strided 1-D convolution.\"\"\"
    def __init__(self, channels, kernel_size, stride):
        super().__init__()
        self.conv = nn.Conv1d(channels, channels, kernel_size, stride=stride, bias=False)

    def forward(self, x):
        return self.conv(x)

batch_size = 256
channels = 64
length = 131072
kernel_size = 3
stride = 2

def get_inputs():
    return [torch.rand(batch_size, channels, length)]

def get_init_inputs():
    return [channels, kernel_size, stride]
"""


def conv_describer(literal_width: int | None = None, calls: list | None = None):
    """Shapes of CONV computed here; `literal_width` adds a literal dimension to x (as in
    `torch.rand(batch, 3, 224, 224)`) so that no constant can shrink it."""

    def describe(code, variants, *, entrypoint="Model", seed=0, device="cpu"):
        if calls is not None:
            calls.append((device, len(variants)))
        out = []
        for given in variants:
            s = {**module_constants(code), **given}  # what substitution would run
            b, c, n, k, st = (s["batch_size"], s["channels"], s["length"], s["kernel_size"],
                              s["stride"])
            if n < k or st == 0:
                out.append(ModuleDescription(sizes=given, device=device, kind="error",
                                             reason="RuntimeError: input smaller than kernel"))
                continue
            extra = (literal_width,) if literal_width else ()
            lout = (n - k) // st + 1
            out.append(ModuleDescription(
                sizes=given, device=device, forward_args=["x"],
                inputs=[InputInfo("x", TensorInfo("x", (b, c, n, *extra), "float32"))],
                parameters=[TensorInfo("conv_weight", (c, c, k), "float32")],
                outputs=[TensorInfo("out0", (b, c, lout, *extra), "float32")]))
        return out

    return describe


def test_scaling_sizes_cases_and_derived_dims():
    calls: list = []
    task = module_task("strided_conv", CONV, describe=conv_describer(calls=calls))
    assert isinstance(task, Task) and len(task.cases) == CASES_PER_TASK
    # kernel_size is a size (it is the weight's last dimension) but small: never scaled;
    # stride changes shapes but never into itself: not a size, kept out of the task.
    assert task.sizes["kernel_size"] == 3 and "stride" not in task.sizes
    assert task.original_sizes == {"batch_size": 256, "channels": 64, "length": 131072,
                                   "kernel_size": 3}
    sizes = task.sizes
    x, w = task.inputs
    out = task.outputs[0]
    assert (x.name, x.shape) == ("x", ["batch_size", "channels", "length"])
    assert (w.name, w.shape) == ("conv_weight", ["channels", "channels", "kernel_size"])
    assert (out.name, out.shape) == ("out", ["batch_size", "channels", "out_dim2"])
    for case in task.cases:
        s = task.case_sizes(case)
        assert s["out_dim2"] == (s["length"] - 3) // 2 + 1  # the derived size, per case
        for t in [*task.inputs, *task.outputs]:
            assert int(np.prod(t.resolve_shape(s))) <= DEFAULT_MAX_ELEMENTS
    biggest = max(int(np.prod(t.resolve_shape(sizes))) for t in [*task.inputs, *task.outputs])
    assert biggest <= DEFAULT_MAX_ELEMENTS // 4
    assert "length 131072 -> " in task.scaling and str(DEFAULT_MAX_ELEMENTS) in task.scaling
    names = [c.name for c in task.cases]
    assert names == ["default", "odd", "small", "large", "odd_large"]
    odd = task.case_sizes(task.cases[1])
    assert all(odd[c] % 32 != 0 for c in ("batch_size", "channels", "length"))
    assert len({c.seed for c in task.cases}) == 5
    # Every case draws with the module, except the signed case's forward argument (N(0, 1));
    # the parameter stays the model's own everywhere.
    for c in task.cases:
        want = "normal" if c.name.startswith(SIGNED_CASE) else "reference"
        assert c.distributions["x"].kind == want, c.name
        assert c.distributions["conv_weight"].kind == "reference"
    assert all(set(c.distributions) == {"x", "conv_weight"} for c in task.cases)
    assert task.reference.language == "torch" and task.reference.code == CONV
    assert task.reference.entrypoint == "Model"
    assert task.tolerance == FLOAT_TOLERANCE and task.tolerances == {"out": REDUCTION_TOLERANCE}
    for name in ("`x`: float32 array of shape [batch_size, channels, length]",
                 "`conv_weight`: float32", "`out`: float32 array of shape "
                 "[batch_size, channels, out_dim2]", "A strided 1-D convolution.",
                 f"length = {sizes['length']}", "File convention"):
        assert name in task.description
    # One perturbation pass, the scaling ladder (meta), one CPU pass over every case variant.
    assert [d for d, _ in calls] == ["meta", "meta", "cpu"]


def test_cap_and_description_options():
    task = module_task("c", CONV, describe=conv_describer(), max_elements=4096,
                       description="Convolve.")
    assert task.description == "Convolve."
    for case in task.cases:
        s = task.case_sizes(case)
        assert all(int(np.prod(t.resolve_shape(s))) <= 4096 for t in [*task.inputs,
                                                                        *task.outputs])


def test_failing_variant_becomes_seed_only():
    base = conv_describer()

    def picky(code, variants, **kw):
        # Odd sizes "fail" on the CPU: the odd and odd_large variants fall back to seeds.
        descs = base(code, variants, **kw)
        if kw.get("device") == "cpu":
            for d in descs:
                if any(v % 2 for k, v in d.sizes.items() if k != "kernel_size"):
                    d.reason, d.kind = "RuntimeError: odd length", "error"
        return descs

    task = module_task("c", CONV, describe=picky)
    names = [c.name for c in task.cases]
    assert names[0] == "default" and "small" in names and "large" in names
    seed_only = [c for c in task.cases if c.name.endswith("_seed")]
    assert [c.name for c in seed_only] == ["odd_seed", "odd_large_seed"]
    assert all(c.sizes == {} for c in seed_only)
    assert len({c.seed for c in task.cases}) == 5


def test_literal_dimensions_too_large():
    with pytest.raises(ModuleTaskError) as err:
        module_task("c", CONV, describe=conv_describer(literal_width=1 << 20))
    assert err.value.reason == "too_large" and "over the cap of 262144" in err.value.detail


@pytest.mark.parametrize("code,reason", [
    ("def broken(:\n", "syntax_error"),
    ("import torch\nclass Model(torch.nn.Module):\n    pass\n", "not_a_module"),
])
def test_not_a_module(code, reason):
    with pytest.raises(ModuleTaskError) as err:
        module_task("x", code, describe=conv_describer())
    assert err.value.reason == reason


def test_cuda_module_rejected_by_the_real_describer():
    code = CONV.replace("return self.conv(x)", "return self.conv(x.cuda())")
    with pytest.raises(ModuleTaskError) as err:
        module_task("x", code)
    assert err.value.reason == "needs_cuda" and "CUDA" in err.value.detail


def _real(name: str) -> str:
    if not LEVEL1.is_dir():
        pytest.skip("shared KernelBench data not present")
    return (LEVEL1 / name).read_text()


def _references_run(task: Task, root: Path, cases: tuple[str, ...] | None = None) -> None:
    """The reference runs on the named cases (default: all five) with the task's shapes."""
    runner = ReferenceRunner(root)
    for case in task.cases:
        if cases is not None and not case.name.startswith(cases):
            continue
        inputs, outs, _ = runner.case_data(task, case)
        sizes = task.case_sizes(case)
        for t in task.inputs:
            assert inputs[t.name].shape == t.resolve_shape(sizes)
        for t in task.outputs:
            assert outs[t.name].size == int(np.prod(t.resolve_shape(sizes), dtype=np.int64))


def test_real_activation(tmp_path):
    task = module_task("relu", _real("19_ReLU.py"))
    assert task.original_sizes == {"batch_size": 4096, "dim": 393216}
    assert [t.shape for t in task.inputs] == [["batch_size", "dim"]]
    assert task.sizes["batch_size"] * task.sizes["dim"] <= DEFAULT_MAX_ELEMENTS // 4
    _references_run(task, tmp_path / "refs", cases=("default",))


@pytest.mark.slow
@pytest.mark.parametrize("file,check", [
    ("2_Standard_matrix_multiplication_.py",
     lambda t: [i.shape for i in t.inputs] == [["M", "K"], ["K", "N"]]),
    ("47_Sum_reduction_over_a_dimension.py",
     lambda t: t.outputs[0].shape == ["batch_size", 1, "dim2"] and "reduce_dim" not in t.sizes),
    ("67_conv_standard_1D.py",
     lambda t: [i.name for i in t.inputs] == ["x", "conv1d_weight"]
     and t.outputs[0].shape[-1] == "out_dim2"),
    ("51_Argmax_over_a_dimension.py",
     lambda t: t.outputs[0].dtype == "int64" and t.tolerance_for("out").mode == "exact"),
    ("93_masked_cumsum.py", lambda t: t.inputs[1].dtype == "uint8"),
])
def test_real_kernelbench_files(tmp_path, file, check):
    task = module_task("kb", _real(file))
    assert len(task.cases) == CASES_PER_TASK and check(task), task.model_dump()
    assert any(c.name == "odd" for c in task.cases)
    # Two of the five (the odd sizes, and the signed values drawn outside get_inputs) keep the
    # suite's time; benchmarks/kernelbench_convert.py --validate runs all five of all 100.
    _references_run(task, tmp_path / "refs", cases=("odd", SIGNED_CASE))


@pytest.mark.slow
def test_real_literal_conv_scales_its_literal_dimensions(tmp_path):
    # `torch.rand(batch_size, 3, 224, 224)`: 224 is named and scaled (it was `too_large` while
    # only constants could shrink); 3 (RGB) stays.
    task = module_task("conv", _real("50_conv_standard_2D__square_input__square_kernel.py"))
    assert task.inputs[0].shape == ["batch_size", 3, "literal_224", "literal_224"]
    assert task.original_sizes["literal_224"] == 224 and task.sizes["literal_224"] < 224
    assert "224 became literal_224 (line 19 in get_inputs" in task.scaling
    _references_run(task, tmp_path / "refs", cases=("default",))
