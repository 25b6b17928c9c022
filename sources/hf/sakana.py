"""The AI CUDA Engineer archive kept verbatim: each row's `CUDA_Code` is the answer, checked as it
is by `validators.kernelbench.verify` (its "Sakana form": one extension source whose
`PYBIND11_MODULE` binds `forward`, called as `Model(...)(*inputs, fn=ext.forward)`), against the
row's `PyTorch_Code_Functional` at the sizes of its `PyTorch_Code_Module`.

This module holds what is specific to the archive and free of any stage: the problem a row is
checked against (`archive_problem`) and the choice of the attempts kept per task
(`select_per_task`). The builder wires them (`builder.stages.specify.FromArchive`, the validate
stage, the per-task choice at write).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable
from typing import TypeVar

FORM = "kernelbench_extension"
"""`RawRecord.meta["form"]` of a row whose text is an extension source to verify as it is."""

INPUT_FUNCTIONS = ("get_inputs", "get_init_inputs")
DEFAULT_PER_TASK = 3


class ArchiveRowError(ValueError):
    """A row whose reference cannot be assembled (the caller names the row)."""


def _parse(source: str, column: str) -> ast.Module:
    try:
        return ast.parse(source)
    except SyntaxError as exc:
        raise ArchiveRowError(f"{column} does not parse ({exc.msg}, line {exc.lineno})") from None


def _top_level_functions(tree: ast.Module) -> set[str]:
    return {s.name for s in tree.body if isinstance(s, ast.FunctionDef | ast.AsyncFunctionDef)}


def archive_problem(functional: str, module: str) -> str:
    """The KernelBench problem a row's extension is verified against: the functional reference
    (`module_fn`, and a `Model` whose forward takes `fn=`), with the module's module-level
    constants and input functions appended, so that the sizes are the module's (the archive
    timed and judged its kernels at those) even where the functional file has its own or none.

    Raises ArchiveRowError naming the column at fault."""
    ftree = _parse(functional, "PyTorch_Code_Functional")
    mtree = _parse(module, "PyTorch_Code_Module")
    if "module_fn" not in _top_level_functions(ftree):
        raise ArchiveRowError("PyTorch_Code_Functional defines no module_fn (not the archive's "
                              "functional form)")
    missing = [f for f in INPUT_FUNCTIONS if f not in _top_level_functions(mtree)]
    if missing:
        raise ArchiveRowError(f"PyTorch_Code_Module defines no {' or '.join(missing)}")
    lines = module.splitlines(keepends=True)
    kept: list[str] = []
    for node in mtree.body:
        is_input_fn = (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                       and node.name in INPUT_FUNCTIONS)
        # Plain assignments only: the sizes. The module's imports and classes stay out, so the
        # module's own `Model` never replaces the functional one.
        is_constant = isinstance(node, ast.Assign | ast.AnnAssign) and all(
            isinstance(t, ast.Name)
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target]))
        if is_input_fn or is_constant:
            start = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
            kept.append("".join(lines[start - 1: node.end_lineno]))
    body = functional if functional.endswith("\n") else functional + "\n"
    return body + "\n\n# Sizes and inputs of PyTorch_Code_Module:\n" + "\n".join(kept)


def runtime_key(value: str | float | None) -> float:
    """A recorded `CUDA_Runtime` as a sort key: missing, unparsable or non-positive values sort
    last (nothing says such an attempt is fast)."""
    try:
        t = float(value) if value not in (None, "") else math.inf
    except (TypeError, ValueError):
        return math.inf
    return t if math.isfinite(t) and t > 0 else math.inf


T = TypeVar("T")


def select_per_task(passing: Iterable[T], per_task: int, *, task: Callable[[T], str],
                    runtime: Callable[[T], float], tie: Callable[[T], str]
                    ) -> tuple[list[T], list[tuple[T, list[T]]]]:
    """Of the attempts that passed, the `per_task` fastest of each task (ties by `tie`, so the
    choice does not depend on input order), and each one left out with the kept ones of its
    task."""
    if per_task < 1:
        raise ValueError(f"per_task must be at least 1, not {per_task}")
    by_task: dict[str, list[T]] = {}
    for x in passing:
        by_task.setdefault(task(x), []).append(x)
    kept: list[T] = []
    dropped: list[tuple[T, list[T]]] = []
    for key in sorted(by_task):
        ranked = sorted(by_task[key], key=lambda x: (runtime(x), tie(x)))
        kept += ranked[:per_task]
        dropped += [(x, ranked[:per_task]) for x in ranked[per_task:]]
    return kept, dropped
