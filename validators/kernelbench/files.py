"""KernelBench problem and answer files, read without running them.

A problem defines `class Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`. An answer is
either a Python file defining `class ModelNew(nn.Module)` (it usually builds CUDA with
`torch.utils.cpp_extension.load_inline` or `load`), or, as the Sakana AI CUDA Engineer archive
stores them, one extension source (CUDA kernels plus a `forward` bound with `PYBIND11_MODULE`)
checked against a functional problem (`module_fn` and a `Model` whose forward takes `fn=`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from validators.torch_module import module_problems


class KernelBenchInputError(ValueError):
    """A problem or answer file that cannot be checked at all (bad input, not a verdict)."""


@dataclass(frozen=True)
class Problem:
    source: str
    functional: bool
    """Defines `module_fn` and a Model whose forward takes `fn=` (the Sakana archive's form)."""


@dataclass(frozen=True)
class Answer:
    source: str
    kind: str
    """`module` (a Python file defining ModelNew) or `extension` (one extension source)."""
    needs_gpu: str = ""
    """A feature no CPU emulation can run (e.g. `triton`), found without running the answer."""


_PYBIND = re.compile(r"\bPYBIND11_MODULE\s*\(")
# Triton kernels are compiled by Triton's own GPU backend: nothing on the CPU serves them.
_TRITON_IMPORT = ("triton",)


def read_problem(source: str, *, origin: str = "problem") -> Problem:
    problem = module_problems(source, "Model")
    if problem:
        raise KernelBenchInputError(f"{origin}: not a KernelBench problem: {problem}")
    tree = ast.parse(source)
    funcs = {s.name for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return Problem(source=source, functional="module_fn" in funcs)


def read_answer(source: str, *, origin: str = "answer") -> Answer:
    """Classify the answer; raises KernelBenchInputError naming `origin` and the reason."""
    if "\x00" in source:
        raise KernelBenchInputError(f"{origin}: contains NUL bytes (not a source file)")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        if _PYBIND.search(source):
            return Answer(source=source, kind="extension")
        raise KernelBenchInputError(
            f"{origin}: neither a Python answer (syntax error: {exc.msg}, line {exc.lineno}) "
            "nor an extension source (no PYBIND11_MODULE)") from None
    classes = {s.name for s in tree.body if isinstance(s, ast.ClassDef)}
    if "ModelNew" not in classes:
        raise KernelBenchInputError(f"{origin}: defines no class ModelNew at module level")
    return Answer(source=source, kind="module", needs_gpu=_gpu_only_feature(tree))


def _gpu_only_feature(tree: ast.Module) -> str:
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for n in names:
            if n.split(".")[0] in _TRITON_IMPORT:
                return "triton"
    return ""


_INPUT_FUNCTIONS = ("get_inputs", "get_init_inputs")


def extension_answer(problem: Problem, answer: Answer) -> str:
    """The Python answer an extension-source answer stands for, as the Sakana archive runs it:
    the problem's `Model` (which holds the parameters) with `fn=` the extension's `forward`.

    Model is held, not inherited: its forward is only the dispatcher to `fn`. The problem's
    input functions are left out, so the answer's process never holds what draws the inputs."""
    if not problem.functional:
        raise KernelBenchInputError("problem: an extension-source answer needs a functional "
                                    "problem (module_fn and a Model whose forward takes fn=)")
    tree = ast.parse(problem.source)
    lines = problem.source.splitlines(keepends=True)
    kept = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in _INPUT_FUNCTIONS:
            continue
        start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
        kept.append("".join(lines[start - 1: node.end_lineno]))
    return (
        "\n".join(kept)
        + "\n\nimport torch as _ckd_torch\n"
        + "from torch.utils.cpp_extension import load_inline as _ckd_load_inline\n"
        + f"_ckd_ext = _ckd_load_inline(name='kernelbench_answer', cpp_sources='', "
          f"cuda_sources={answer.source!r}, verbose=False)\n\n"
        + "class ModelNew(_ckd_torch.nn.Module):\n"
        + "    def __init__(self, *args, **kwargs):\n"
        + "        super().__init__()\n"
        + "        self.inner = Model(*args, **kwargs)\n"
        + "    def forward(self, *args):\n"
        + "        return self.inner(*args, fn=_ckd_ext.forward)\n")
