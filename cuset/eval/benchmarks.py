"""What an evaluation runs on: the built-in held-out split, a folder of tasks in our format, a
CUDABench JSONL file, or KernelBench problems (`kernelbench:DIR`, see `kernelbench.py`).

- `builtin`: the `test` split of `sources.builtin`; the prompt is the task description (what the
  dataset's user turn holds), the reference program the task's main.cu.
- a folder: either one task folder or a folder of them; each holds `task.json` (a
  `schemas.Task`; its reference code inlined, as `python -m sources.builtin export` writes it, or
  in `reference.py` beside it) and optionally `main.cu`, the reference program.
- a CUDABench JSONL file (recognised by the fields `task_name`, `level1_prompt`, `bench.cu`,
  `gen.py`, `compare.py`): rows come one per input scale; `scale` picks which of them a sample
  must pass: `smallest`, `largest`, `all` (every scale), or `N` (the N-th smallest, from 1).
  Loading and checking go through `validators.cudabench`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from schemas import Task

from .errors import EvalError

CUDABENCH_FIELDS = ("task_name", "level1_prompt", "bench.cu", "gen.py", "compare.py")
SCALES = ("smallest", "largest", "all")


@dataclass(frozen=True)
class CudaBenchSelection:
    """A CUDABench task and the scales (rows) a sample must pass, smallest first."""

    task: Any
    scales: tuple[Any, ...]


@dataclass(frozen=True)
class KernelBenchProblem:
    """A KernelBench problem file (`Model`, `get_inputs`, `get_init_inputs`)."""

    source: str
    path: str


@dataclass(frozen=True)
class EvalTask:
    id: str
    prompt: str
    kind: str
    """`task` (validated with `validators.engine`), `cudabench` (`validators.cudabench`) or
    `kernelbench` (`validators.kernelbench`)."""
    task: Task | None = None
    cudabench: CudaBenchSelection | None = None
    reference_program: str | None = None
    kernelbench: KernelBenchProblem | None = None
    system: str | None = None
    """The system turn; None: the dataset's (`builder.stages.specify.SYSTEM_PROMPT`)."""
    language: str | None = None
    """The fenced block's language the answer is taken from; None: the first block."""


def load_benchmark(spec: str, scale: str = "smallest", limit: int | None = None,
                   levels: tuple[int, ...] | None = None) -> list[EvalTask]:
    """The tasks of `spec` (`builtin`, `kernelbench:DIR` or a path), the first `limit` of them
    if given. `levels` is for KernelBench checkouts only. Raises `EvalError` for an unreadable,
    malformed or empty benchmark."""
    if levels is not None and not spec.startswith("kernelbench:"):
        raise EvalError(f"--levels is for --benchmark kernelbench:DIR, not {spec}")
    if spec == "builtin":
        tasks = _builtin()
    elif spec.startswith("kernelbench:"):
        from .kernelbench import load_kernelbench

        tasks = load_kernelbench(spec, levels)
    else:
        path = Path(spec)
        if not path.exists():
            raise EvalError(f"benchmark {spec}: no such file or folder")
        tasks = _folder(path) if path.is_dir() else _cudabench(path, scale)
    if not tasks:
        raise EvalError(f"benchmark {spec}: holds no tasks")
    return tasks[:limit] if limit is not None else tasks


def _builtin() -> list[EvalTask]:
    from sources.builtin import HELD_OUT, load_all

    result = load_all()
    bad = [e for e in result.errors if e.task in HELD_OUT]
    if bad:
        raise EvalError(f"benchmark builtin: {bad[0]}")
    return [EvalTask(id=t.name, prompt=t.description, kind="task", task=t,
                     reference_program=p.source)
            for t, p in result.tasks if t.name in HELD_OUT]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise EvalError(f"benchmark {path}: cannot read: {why}") from None


def _folder(root: Path) -> list[EvalTask]:
    from sources.task_folders import TaskFolderError, load_task_folders

    try:
        found = load_task_folders(root)
    except TaskFolderError as exc:
        raise EvalError(f"benchmark {exc}") from None
    return [EvalTask(id=f.task.name, prompt=f.task.description, kind="task", task=f.task,
                     reference_program=f.reference_program) for f in found]


def pick_scales(scales: list[Any], scale: str, where: str) -> tuple[Any, ...]:
    """The rows a sample must pass for `scale` (see the module docstring)."""
    if not scales:
        raise EvalError(f"{where}: has no scales")
    if scale == "smallest":
        return (scales[0],)
    if scale == "largest":
        return (scales[-1],)
    if scale == "all":
        return tuple(scales)
    if scale.isdigit() and 1 <= int(scale) <= len(scales):
        return (scales[int(scale) - 1],)
    raise EvalError(f"--scale {scale}: choose smallest, largest, all or 1..{len(scales)} ({where})")


def _cudabench(path: Path, scale: str) -> list[EvalTask]:
    text = _read(path)
    first = next((ln for ln in text.splitlines() if ln.strip()), None)
    if first is None:
        raise EvalError(f"benchmark {path}: holds no tasks")
    try:
        row = json.loads(first)
    except json.JSONDecodeError as exc:
        raise EvalError(f"benchmark {path}: not JSONL ({exc.msg} on its first line)") from None
    missing = [f for f in CUDABENCH_FIELDS if not isinstance(row, dict) or f not in row]
    if missing:
        raise EvalError(f"benchmark {path}: not a CUDABench file (missing {', '.join(missing)})")
    try:
        from validators import cudabench
    except ImportError as exc:
        raise EvalError(f"benchmark {path}: CUDABench support is not installed ({exc})") from None
    try:
        loaded = cudabench.load_jsonl(path)
    except Exception as exc:  # the loader names the row and the reason
        raise EvalError(f"benchmark {path}: {exc}") from None
    tasks = []
    for t in loaded:
        chosen = pick_scales(list(t.scales), scale, f"{path}: task {t.task_name}")
        tasks.append(EvalTask(id=t.task_name, prompt=t.prompt, kind="cudabench",
                              cudabench=CudaBenchSelection(t, chosen),
                              reference_program=chosen[0].bench_cu))
    return tasks
