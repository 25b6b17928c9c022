"""Tasks in our own format on disk: one task folder, or a folder of them. Each folder holds
`task.json` (a `schemas.Task`; its reference code inlined, as `python -m sources.builtin export`
writes it, or in `reference.py` beside it) and optionally `main.cu`, the reference program.

Read by `cuset eval` and by the validation service (`--tasks DIR`), which must not import cuset.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from schemas import SchemaError, Task


class TaskFolderError(ValueError):
    """A task folder cannot be read; the message names the file and the reason."""


@dataclass(frozen=True)
class TaskFolder:
    folder: Path
    task: Task
    reference_program: str | None
    """The text of `main.cu`, when the folder has one."""


def task_folders(root: Path) -> list[Path]:
    """`root` itself when it is a task folder, else its task folders in name order."""
    if (root / "task.json").is_file():
        return [root]
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "task.json").is_file())


def load_task_folder(folder: Path) -> TaskFolder:
    """The task of one folder; `TaskFolderError` naming the file for anything unreadable."""
    try:
        spec = json.loads(_read(folder / "task.json"))
    except json.JSONDecodeError as exc:
        raise TaskFolderError(f"{folder / 'task.json'}: line {exc.lineno}: {exc.msg}") from None
    if not isinstance(spec, dict):
        raise TaskFolderError(f"{folder / 'task.json'}: not a JSON object")
    ref = spec.get("reference") or {}
    if isinstance(ref, dict) and not ref.get("code") and (folder / "reference.py").is_file():
        spec["reference"] = {**ref, "code": _read(folder / "reference.py")}
    try:
        task = Task.parse(spec, origin=str(folder / "task.json"))
    except SchemaError as exc:
        raise TaskFolderError(f"{folder}: {exc}") from None
    main = folder / "main.cu"
    return TaskFolder(folder, task, _read(main) if main.is_file() else None)


def load_task_folders(root: Path) -> list[TaskFolder]:
    """Every task under `root` (see `task_folders`); the first unreadable one raises."""
    return [load_task_folder(f) for f in task_folders(root)]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise TaskFolderError(f"{path}: cannot read: {why}") from None
