"""The task set a server answers `task_id`s from: the built-in tasks, a folder of tasks in our
format, or a dataset folder written by the builder (`data/*.parquet` with a `task_json` column).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from schemas import SchemaError, Task


class TaskSetError(ValueError):
    """The task set cannot be loaded; the message names the source and the reason."""


@dataclass
class TaskSet:
    source: str
    tasks: dict[str, Task] = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)
    """Task id -> its reference program, where the source has one (for the speed term)."""

    def get(self, task_id: str) -> Task | None:
        return self.tasks.get(task_id)


def load_task_set(spec: str = "builtin") -> TaskSet:
    """`builtin`, a folder holding task folders (`task.json`), or a builder dataset folder."""
    if spec == "builtin":
        return _builtin()
    path = Path(spec)
    if not path.is_dir():
        raise TaskSetError(f"--tasks {spec}: not 'builtin' and not a folder")
    if any((path / "data").glob("*.parquet")):
        return _dataset(path)
    return _task_folders(path)


def _builtin() -> TaskSet:
    from sources.builtin import load_all

    # Every built-in task, held-out ones included: the service judges, it does not train.
    loaded = load_all()
    if not loaded.tasks:
        raise TaskSetError(f"--tasks builtin: no task loaded ({'; '.join(map(str, loaded.errors))})")
    ts = TaskSet(source="builtin")
    for task, program in loaded.tasks:
        ts.tasks[task.name] = task
        ts.references[task.name] = program.source
    return ts


def _task_folders(path: Path) -> TaskSet:
    from cuset.eval.benchmarks import load_benchmark
    from cuset.eval.errors import EvalError

    try:
        found = load_benchmark(str(path))
    except EvalError as exc:
        raise TaskSetError(f"--tasks {path}: {exc}") from None
    ts = TaskSet(source=str(path))
    for et in found:
        if et.task is None:
            continue
        ts.tasks[et.id] = et.task
        if et.reference_program:
            ts.references[et.id] = et.reference_program
    return ts


def _dataset(path: Path) -> TaskSet:
    import pyarrow.parquet as pq

    # Only the task column is read: the records' other columns (responses, spans) are not
    # needed here, and loading them through `datasets` would cost seconds and memory.
    ts = TaskSet(source=str(path))
    for shard in sorted((path / "data").glob("*.parquet")):
        try:
            column = pq.read_table(shard, columns=["task_json"]).column("task_json").to_pylist()
        except (OSError, KeyError, ValueError) as exc:
            raise TaskSetError(f"--tasks {path}: cannot read {shard.name}: {exc}") from None
        for i, text in enumerate(column):
            try:
                task = Task.parse(text, origin=f"{shard.name} row {i}")
            except SchemaError as exc:
                raise TaskSetError(f"--tasks {path}: {exc}") from None
            ts.tasks.setdefault(task.name, task)
    if not ts.tasks:
        raise TaskSetError(f"--tasks {path}: the dataset holds no tasks")
    return ts
