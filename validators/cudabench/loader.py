"""Read a CUDABench-format JSONL file: one row per (task, input scale), grouped into tasks.

A row needs `id`, `task_name`, `gen.py`, `compare.py` and `outputs`; `inputs` defaults to none,
`bench.cu` (the reference program) and the prompts are optional. `inputs`/`outputs` are lists
of objects with a `name` (plus `dtype`/`shape` as CUDABench writes them) or of bare names.
Scales of a task are ordered by `id` when every id is an integer, otherwise by file order
(CUDABench writes them smallest first).

A malformed line raises `CudaBenchError` naming the file and the line; with
`skip_malformed=True` such lines are skipped instead, and `LoadReport.skipped` counts them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REQUIRED = ("id", "task_name", "gen.py", "compare.py", "outputs")
PROMPT_LEVELS = (1, 2, 3)


class CudaBenchError(ValueError):
    """The benchmark file cannot be used; the message (one line) names the file and why."""


@dataclass(frozen=True)
class CudaBenchScale:
    """One row: a task at one input scale."""

    row_id: int | str
    task_name: str
    bench_cu: str
    gen_py: str
    compare_py: str
    inputs: list[str]
    outputs: list[str]
    raw: dict[str, Any] = field(repr=False, compare=False)

    def prompt(self, level: int = 1) -> str:
        """This scale's `level<N>_prompt` (the prompts name the sizes, so they differ by scale)."""
        if level not in PROMPT_LEVELS:
            raise ValueError(f"prompt level must be one of {PROMPT_LEVELS}, not {level!r}")
        return str(self.raw.get(f"level{level}_prompt") or "")


@dataclass(frozen=True)
class CudaBenchTask:
    """All scales of one task, smallest first; `prompt` is the smallest scale's level-1 prompt."""

    task_name: str
    prompt: str
    scales: list[CudaBenchScale]


@dataclass
class LoadReport:
    tasks: list[CudaBenchTask]
    rows: int
    skipped: int = 0
    first_error: str = ""


def _names(value: Any, what: str) -> list[str]:
    if not isinstance(value, list):
        raise ValueError(f"{what!r} must be a list, not {type(value).__name__}")
    names = []
    for item in value:
        name = item.get("name") if isinstance(item, dict) else item
        if not isinstance(name, str) or not name or "/" in name or name.startswith("."):
            raise ValueError(f"{what!r} holds an entry without a plain file name: {item!r}")
        names.append(name)
    return names


def _scale(row: Any) -> CudaBenchScale:
    if not isinstance(row, dict):
        raise ValueError(f"a row must be a JSON object, not {type(row).__name__}")
    missing = [k for k in REQUIRED if k not in row]
    if missing:
        raise ValueError(f"missing field(s) {', '.join(missing)}")
    for key in ("task_name", "gen.py", "compare.py"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise ValueError(f"{key!r} must be a non-empty string")
    row_id = row["id"]
    if isinstance(row_id, bool) or not isinstance(row_id, (int, str)):
        raise ValueError(f"'id' must be an integer or a string, not {row_id!r}")
    bench = row.get("bench.cu") or ""
    if not isinstance(bench, str):
        raise ValueError("'bench.cu' must be a string")
    return CudaBenchScale(row_id=row_id, task_name=row["task_name"], bench_cu=bench,
                          gen_py=row["gen.py"], compare_py=row["compare.py"],
                          inputs=_names(row.get("inputs") or [], "inputs"),
                          outputs=_names(row["outputs"], "outputs"), raw=row)


def load_report(path: str | Path, *, skip_malformed: bool = False) -> LoadReport:
    """Tasks of the file plus how many rows were read and skipped (see the module docstring)."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CudaBenchError(f"{p}: cannot read the benchmark file: {exc}") from None
    scales: list[CudaBenchScale] = []
    report = LoadReport(tasks=[], rows=0)
    seen: set[object] = set()
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            scale = _scale(json.loads(line))
            if scale.row_id in seen:
                raise ValueError(f"duplicate id {scale.row_id!r}")
            seen.add(scale.row_id)
        except ValueError as exc:  # json.JSONDecodeError is a ValueError
            msg = f"{p}: line {lineno}: {str(exc).splitlines()[0]}"
            if not skip_malformed:
                raise CudaBenchError(msg) from None
            report.skipped += 1
            report.first_error = report.first_error or msg
            continue
        scales.append(scale)
    report.rows = len(scales)
    if not scales:
        why = f" ({report.skipped} malformed, first: {report.first_error})" if report.skipped else ""
        raise CudaBenchError(f"{p}: the benchmark file holds no tasks{why}")
    by_task: dict[str, list[CudaBenchScale]] = {}
    for s in scales:
        by_task.setdefault(s.task_name, []).append(s)
    for name, rows in by_task.items():
        if all(isinstance(s.row_id, int) for s in rows):
            rows = sorted(rows, key=lambda s: s.row_id)  # stable: file order breaks no ties
        report.tasks.append(CudaBenchTask(task_name=name, prompt=rows[0].prompt(1), scales=rows))
    return report


def load_jsonl(path: str | Path, *, skip_malformed: bool = False) -> list[CudaBenchTask]:
    """The tasks of a CUDABench-format JSONL file, in order of first appearance."""
    return load_report(path, skip_malformed=skip_malformed).tasks
