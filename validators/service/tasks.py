"""The task set a server answers `task_id`s from: the built-in tasks, a folder of tasks in our
format, a dataset folder written by the builder (`data/*.parquet` with a `task_json` column), or
`kernelbench:DIR`, a folder of KernelBench problem files (`<n>_<Name>.py`; the task id is the
file's stem), whose answers are Python `ModelNew` modules checked by `validators.kernelbench`.

Loaded through `schemas` and the task loaders of `sources`, never `cuset` or `builder`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from schemas import SchemaError, Task

KERNELBENCH_PREFIX = "kernelbench:"


class TaskSetError(ValueError):
    """The task set cannot be loaded; the message names the source and the reason."""


@dataclass
class TaskSet:
    source: str
    tasks: dict[str, Task] = field(default_factory=dict)
    references: dict[str, str] = field(default_factory=dict)
    """Task id -> its reference program, where the source has one (for the speed term)."""

    problems: dict[str, str] = field(default_factory=dict)
    """KernelBench task id -> the problem's source (`Model`, `get_inputs`, `get_init_inputs`)."""
    skipped: list[str] = field(default_factory=list)
    """Files of the source that are no task, each with the reason (the others still load)."""

    def get(self, task_id: str) -> Task | None:
        return self.tasks.get(task_id)

    def __len__(self) -> int:
        return len(self.tasks) + len(self.problems)


def load_task_set(spec: str = "builtin") -> TaskSet:
    """`builtin`, a folder holding task folders (`task.json`), a builder dataset folder, or
    `kernelbench:DIR`."""
    if spec == "builtin":
        return _builtin()
    if spec.startswith(KERNELBENCH_PREFIX):
        return _kernelbench(spec, Path(spec[len(KERNELBENCH_PREFIX):]))
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
    from sources.task_folders import TaskFolderError, load_task_folders

    try:
        found = load_task_folders(path)
    except TaskFolderError as exc:
        raise TaskSetError(f"--tasks {path}: {exc}") from None
    if not found:
        raise TaskSetError(f"--tasks {path}: holds no task folder (a folder with task.json), "
                           f"no dataset (data/*.parquet); for KernelBench problem files give "
                           f"kernelbench:{path}")
    ts = TaskSet(source=str(path))
    for f in found:
        ts.tasks[f.task.name] = f.task
        if f.reference_program:
            ts.references[f.task.name] = f.reference_program
    return ts


def _kernelbench(spec: str, path: Path) -> TaskSet:
    from sources.base import SourceError, UnreadableRecord
    from sources.kernelbench import records

    try:
        found = list(records(path))
    except SourceError as exc:
        raise TaskSetError(f"--tasks {spec}: {exc}") from None
    ts = TaskSet(source=spec)
    for rec in found:
        if isinstance(rec, UnreadableRecord):
            # One odd file in a checkout costs that task, not the server.
            ts.skipped.append(f"{rec.origin}: {rec.reason}")
            continue
        ts.problems[Path(rec.provenance.origin).stem] = rec.module or ""
    if not ts.problems:
        why = f" ({'; '.join(ts.skipped)})" if ts.skipped else ""
        raise TaskSetError(f"--tasks {spec}: holds no KernelBench problem file (a .py file with "
                           f"Model, get_inputs and get_init_inputs){why}")
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
