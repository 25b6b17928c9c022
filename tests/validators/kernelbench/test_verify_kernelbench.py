"""The KernelBench verifier end to end: real sandboxed reference and answer processes, real
torch. Answers here are torch-only (checked with allow_torch_only, which lifts the launch rule
only) so that each defence is exercised by the one hack it names; the rules that need custom
kernels (launch count, kernel dependence, poisoned memory) are in test_verify_extensions.py."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from schemas import ErrorOrigin, Status
from validators.kernelbench import KernelBenchInputError, verify

# A sign-sensitive op (LeakyReLU) at sizes that need no scaling: a wrong slope shows only on
# the N(0, 1) input set.
PROBLEM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, slope):
        super().__init__()
        self.slope = slope
    def forward(self, x):
        return torch.nn.functional.leaky_relu(x, self.slope)

batch_size = 8
dim = 64

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return [0.1]
"""

HEADER = "import torch\nimport torch.nn as nn\n"


def answer(forward: str, extra: str = "", base: str = "nn.Module") -> str:
    return (HEADER + extra + f"\nclass ModelNew({base}):\n    def __init__(self, slope):\n"
            "        super().__init__()\n        self.slope = slope\n"
            "    def forward(self, x):\n" + "".join(f"        {ln}\n" for ln in forward.splitlines()))


GOOD = answer("return torch.where(x > 0, x, x * self.slope)")


def check(ans: str, problem: str = PROBLEM, **kw: object):
    kw.setdefault("fast", True)
    kw.setdefault("allow_torch_only", True)
    return verify(problem, ans, **kw)


def run_cli(tmp_path: Path, problem: str, ans: str, *extra: str) -> tuple[int, dict | None, str]:
    (tmp_path / "problem.py").write_text(problem)
    (tmp_path / "answer.py").write_text(ans)
    proc = subprocess.run([sys.executable, "-m", "validators", "check", "--task",
                           str(tmp_path / "problem.py"), "--program", str(tmp_path / "answer.py"),
                           "--backend", "cpu", "--json", *extra],
                          capture_output=True, text=True, timeout=900)
    try:
        data = json.loads(proc.stdout)
    except ValueError:
        data = None
    return proc.returncode, data, proc.stderr


def test_cli_torch_only_answer_passes_with_allow_torch_only(tmp_path: Path) -> None:
    code, data, err = run_cli(tmp_path, PROBLEM, GOOD, "--fast", "--allow-torch-only")
    assert code == 0, err
    assert data is not None and data["status"] == "passed"
    assert data["sizes"] == {"batch_size": 8, "dim": 64} and data["original_sizes"] == {}
    assert data["weak_task"] == "" and data["rule"] == ""
    # At least five seeds, one drawn now, and each float input set also drawn from N(0, 1).
    seeds = {c["seed"] for c in data["cases"]}
    assert len(seeds) >= 5 and data["fresh_seed"] in seeds
    assert {c["case"].split("-")[1] for c in data["cases"]} == {"get_inputs", "normal"}


def test_cli_bad_input_exits_2_naming_the_file(tmp_path: Path) -> None:
    code, data, err = run_cli(tmp_path, PROBLEM, HEADER + "class Model(nn.Module):\n    pass\n")
    assert code == 2 and data is None
    assert "answer.py" in err and "ModelNew" in err


def test_wrong_sign_handling_fails_on_the_signed_inputs() -> None:
    # torch.rand's [0, 1) inputs hide it: only the N(0, 1) set tells relu from leaky_relu.
    r = check(answer("return torch.relu(x)"))
    assert r.status == Status.FAILED
    bad = {c.case.split("-")[1] for c in r.cases if c.status != Status.PASSED}
    assert bad == {"normal"}


def test_inheriting_model_is_rejected(tmp_path: Path) -> None:
    ans = (HEADER + "class Model(nn.Module):\n    def __init__(self, slope):\n"
           "        super().__init__()\n        self.slope = slope\n"
           "    def forward(self, x):\n        return torch.nn.functional.leaky_relu(x, self.slope)\n"
           "\nclass ModelNew(Model):\n    pass\n")
    code, data, err = run_cli(tmp_path, PROBLEM, ans, "--fast", "--allow-torch-only")
    assert code == 1, err
    assert data["status"] == "rejected" and data["rule"] == "inherits_model"
    assert data["reason"].startswith("inherits_model:")


def test_input_mutation_is_rejected() -> None:
    r = check(answer("return torch.nn.functional.leaky_relu_(x, self.slope)"))
    assert (r.status, r.rule) == (Status.REJECTED, "input_mutation")


def test_results_cached_across_calls_fail() -> None:
    # Keyed by shape (as published hacks key by pointer, id() or shape): the second input set
    # of the same shape gets the first one's result.
    r = check(answer("key = tuple(x.shape)\nif key not in CACHE:\n"
                     "    CACHE[key] = torch.where(x > 0, x, x * self.slope)\nreturn CACHE[key]",
                     extra="CACHE = {}\n"))
    assert r.status == Status.FAILED
    assert r.cases[0].status == Status.PASSED and any(c.status == Status.FAILED for c in r.cases)


def test_lazy_or_subclassed_outputs_are_rejected() -> None:
    sub = ("class Lazy(torch.Tensor):\n    pass\n")
    r = check(answer("return torch.where(x > 0, x, x * self.slope).as_subclass(Lazy)", extra=sub))
    assert (r.status, r.rule) == (Status.REJECTED, "lazy_output")
    assert "Lazy" in r.reason


def test_wrong_dtype_is_rejected_as_output_form() -> None:
    r = check(answer("return torch.where(x > 0, x, x * self.slope).double()"))
    assert (r.status, r.rule) == (Status.REJECTED, "output_form")
    assert "float64" in r.reason


def test_nan_is_no_wildcard() -> None:
    r = check(answer("return torch.full_like(x, float('nan'))"))
    assert r.status == Status.FAILED and "NaN" in r.reason


def test_answer_cannot_read_the_reference() -> None:
    # It looks everywhere a reference or its outputs could be (its own folders, the parents,
    # /tmp, the process table) and answers with what it finds; it must find nothing.
    spy = r'''import os
FOUND, SAW_SELF = [], []
def _find():
    # Everything but the read-only system and Python trees, which hold no run's files.
    skip = ("/usr", "/proc", "/sys", "/dev", "/lib", "/lib64", "/bin", "/sbin", "/etc")
    seen = 0
    for top, dirs, files in os.walk("/"):
        dirs[:] = [d for d in dirs if not os.path.join(top, d).startswith(skip)
                   and "site-packages" not in d]
        for f in files:
            seen += 1
            if f == "answer.py":
                SAW_SELF.append(top)
            elif f in ("problem.py", "reference.json") or f.startswith("outputs-") \
                    or f.endswith(".safetensors") and not top.endswith("/inputs"):
                FOUND.append(os.path.join(top, f))
        if seen > 20000:
            break
try:
    _find()
except Exception:
    pass
'''
    r = check(answer("if FOUND or not SAW_SELF:\n"
                     "    raise RuntimeError('found %s, saw itself in %s' % (FOUND[:5], SAW_SELF))\n"
                     "return torch.where(x > 0, x, x * self.slope)", extra=spy))
    assert r.status == Status.PASSED, r.reason


def test_weak_task_is_flagged() -> None:
    weak = PROBLEM.replace("return torch.nn.functional.leaky_relu(x, self.slope)",
                           "return torch.zeros_like(x)")
    r = check(answer("return torch.zeros_like(x)"), problem=weak)
    assert r.status == Status.PASSED
    assert "constant" in r.weak_task


def test_our_harness_failing_is_an_error_not_a_verdict(monkeypatch: pytest.MonkeyPatch) -> None:
    import validators.kernelbench.reference as reference

    monkeypatch.setattr(reference, "python_executable", lambda: "/nonexistent/python3")
    r = check(GOOD)
    assert r.status == Status.ERROR and r.error_origin == ErrorOrigin.VALIDATOR
    assert not r.cases


def test_a_broken_problem_is_the_tasks_error() -> None:
    broken = PROBLEM.replace("return torch.nn.functional.leaky_relu(x, self.slope)",
                             "raise ValueError('broken reference')")
    r = check(GOOD, problem=broken)
    assert r.status == Status.ERROR and r.error_origin == ErrorOrigin.TASK
    assert "broken reference" in r.reason


def test_files_that_are_not_a_problem_or_answer_raise() -> None:
    with pytest.raises(KernelBenchInputError, match="ModelNew"):
        verify(PROBLEM, HEADER + "x = 1\n")
    with pytest.raises(KernelBenchInputError, match="get_inputs"):
        verify("class Model: pass\n", GOOD)


def test_triton_answer_needs_gpu() -> None:
    r = verify(PROBLEM, "import triton\nimport triton.language as tl\n" + GOOD)
    assert r.status == Status.NEEDS_GPU and "triton" in r.reason


BATCHNORM = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self, features):
        super().__init__()
        self.bn = nn.BatchNorm1d(features)
    def forward(self, x):
        return self.bn(x * 2.0)

batch_size = 16
features = 32

def get_inputs():
    return [torch.rand(batch_size, features)]

def get_init_inputs():
    return [features]
"""


def _bn_answer(body: str) -> str:
    return (HEADER + "\nclass ModelNew(nn.Module):\n    def __init__(self, features):\n"
            "        super().__init__()\n        self.bn = nn.BatchNorm1d(features)\n"
            "    def forward(self, x):\n        y = x * 2.0\n"
            + "".join(f"        {ln}\n" for ln in body.splitlines()))


def test_models_run_in_training_mode_as_kernelbench_runs_them() -> None:
    """KernelBench never calls eval(): BatchNorm normalises with the batch's statistics. An
    answer doing that maths was failed here (eval mode: running statistics), and one folding
    the running statistics, wrong under KernelBench, passed."""
    batch_stats = _bn_answer(
        "m = y.mean(0, keepdim=True)\nv = y.var(0, unbiased=False, keepdim=True)\n"
        "return (y - m) / torch.sqrt(v + self.bn.eps) * self.bn.weight + self.bn.bias")
    running_stats = _bn_answer(
        "return (y - self.bn.running_mean) / torch.sqrt(self.bn.running_var + self.bn.eps)"
        " * self.bn.weight + self.bn.bias")
    assert check(batch_stats, BATCHNORM).status == Status.PASSED
    assert check(running_stats, BATCHNORM).status == Status.FAILED
