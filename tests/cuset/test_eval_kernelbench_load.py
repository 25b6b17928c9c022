"""`--benchmark kernelbench:DIR` loading, without running anything: a checkout's level folders
and `--levels`, a plain folder of problems, the prompt (versioned, the problem verbatim, the
KernelBench system turn), and the one-line errors for what cannot be a benchmark."""

from __future__ import annotations

from pathlib import Path

import pytest

from cuset.eval.benchmarks import load_benchmark
from cuset.eval.errors import EvalError
from cuset.eval.kernelbench import parse_levels, prompt_version
from cuset.eval.samplers import chat_messages

# Braces and a format-like field: the problem must reach the prompt as written.
PROBLEM = '''import torch
import torch.nn as nn

class Model(nn.Module):
    """Scales by {factor}."""
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return x * 2.0

def get_inputs():
    return [torch.rand(4, {"n": 8}["n"])]

def get_init_inputs():
    return []
'''


def _checkout(root: Path) -> Path:
    for level, names in {1: ("10_B", "2_A"), 2: ("1_C",)}.items():
        folder = root / "KernelBench" / f"level{level}"
        folder.mkdir(parents=True)
        for name in names:
            (folder / f"{name}.py").write_text(PROBLEM)
    return root


def test_checkout_levels_and_prompt(tmp_path: Path) -> None:
    root = _checkout(tmp_path / "repo")
    tasks = load_benchmark(f"kernelbench:{root}")
    assert [t.id for t in tasks] == ["level1/2_A", "level1/10_B", "level2/1_C"]
    assert [t.id for t in load_benchmark(f"kernelbench:{root}", levels=parse_levels("2"))] == [
        "level2/1_C"]
    t = tasks[0]
    assert (t.kind, t.language) == ("kernelbench", "python")
    assert t.kernelbench is not None and t.kernelbench.source == PROBLEM
    assert f"```python\n{PROBLEM.rstrip()}\n```" in t.prompt and "ModelNew" in t.prompt
    system, user = chat_messages(t.prompt, t.system)
    assert user["content"] == t.prompt and "CUDA kernels" in system["content"]
    assert prompt_version().startswith("kernelbench-prompt-")


def test_plain_folder_of_problems(tmp_path: Path) -> None:
    (tmp_path / "19_ReLU.py").write_text(PROBLEM)
    assert [t.id for t in load_benchmark(f"kernelbench:{tmp_path}")] == ["19_ReLU"]


@pytest.mark.parametrize(("setup", "levels", "says"), [
    ("checkout", "3", "no level3 folder (found level1, level2)"),
    ("flat", "1", "--levels needs a KernelBench checkout"),
    ("flat-bad", None, "not_a_problem.py: not a KernelBench problem"),
    ("none", None, "is not a folder"),
    ("empty-spec", None, "give the folder, as kernelbench:DIR"),
])
def test_what_cannot_be_a_kernelbench_benchmark(tmp_path: Path, setup: str, levels: str | None,
                                                says: str) -> None:
    spec = f"kernelbench:{tmp_path / 'missing'}"
    if setup == "checkout":
        spec = f"kernelbench:{_checkout(tmp_path)}"
    elif setup.startswith("flat"):
        (tmp_path / "1_A.py").write_text(PROBLEM)
        if setup == "flat-bad":
            (tmp_path / "not_a_problem.py").write_text("def helper():\n    return 1\n")
        spec = f"kernelbench:{tmp_path}"
    elif setup == "empty-spec":
        spec = "kernelbench:"
    with pytest.raises(EvalError, match="^benchmark ") as exc:
        load_benchmark(spec, levels=parse_levels(levels))
    assert says in str(exc.value)
    assert "\n" not in str(exc.value)


def test_levels_only_with_kernelbench() -> None:
    with pytest.raises(EvalError, match="--levels is for --benchmark kernelbench:DIR"):
        load_benchmark("builtin", levels=(1,))
