"""Load the built-in tasks: one folder per task with `task.json`, `main.cu` and `reference.py`.

`task.json` holds the `schemas.Task` fields except `reference.code`, which is read from
`reference.py` so the reference stays an ordinary, lintable Python file. A malformed folder is
reported as a `LoadError` naming the folder and the reason, and skipped; the other tasks load.
The reference is only parsed here (syntax and entry point), never executed: references run in
the sandbox like every other untrusted code.
"""

from __future__ import annotations

import ast
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from schemas import (
    CASES_PER_TASK,
    Program,
    Provenance,
    RawRecord,
    Reference,
    SchemaError,
    Task,
)

from ..base import UnreadableRecord
from .splits import HELD_OUT

log = logging.getLogger(__name__)

TASKS_DIR = Path(__file__).resolve().parent / "tasks"
REPO_ROOT = Path(__file__).resolve().parents[2]
LICENSE = "Apache-2.0"
SOURCE_NAME = "builtin"
FILES = ("task.json", "main.cu", "reference.py")
BLOCK_TAG = "block:"
"""Tag `block:<n>` records the program's block (or tile) edge, which the tests use to check that
some case size is not a multiple of it."""


class TaskFolderError(ValueError):
    """A task folder that cannot be loaded; the message says why."""


@dataclass(frozen=True)
class LoadError:
    """One task folder that was skipped, and why."""

    task: str
    path: str
    reason: str

    def __str__(self) -> str:
        return f"builtin task {self.task!r} ({self.path}): {self.reason}"


@dataclass
class LoadResult:
    tasks: list[tuple[Task, Program]] = field(default_factory=list)
    errors: list[LoadError] = field(default_factory=list)


def _macro_default(source: str, macro: str) -> str | None:
    """The default a program gives `macro` in an `#ifndef M / #define M value / #endif` block."""
    m = re.search(
        rf"^[ \t]*#[ \t]*ifndef[ \t]+{re.escape(macro)}[ \t]*\n"
        rf"[ \t]*#[ \t]*define[ \t]+{re.escape(macro)}[ \t]+([^\n]+?)[ \t]*\n"
        rf"[ \t]*#[ \t]*endif",
        source,
        flags=re.MULTILINE,
    )
    return m.group(1) if m else None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFolderError(f"{path.name} is not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise TaskFolderError(f"cannot read {path.name}: {exc.strerror or exc}") from None


def _check_reference(code: str, entrypoint: str) -> None:
    try:
        tree = ast.parse(code, filename="reference.py")
    except SyntaxError as exc:
        raise TaskFolderError(f"reference.py line {exc.lineno}: syntax error: {exc.msg}") from None
    names = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    if entrypoint not in names:
        raise TaskFolderError(f"reference.py defines no top-level function {entrypoint}()")


def _check_program(task: Task, source: str) -> None:
    if "int main(" not in source and "int main (" not in source:
        raise TaskFolderError("main.cu has no main() function")
    for size, default in task.sizes.items():
        macro = task.size_macros.get(size, size)
        written = _macro_default(source, macro)
        if written is None:
            raise TaskFolderError(
                f"main.cu does not declare size {size} as '#ifndef {macro} / #define {macro} "
                f"... / #endif'"
            )
        if written.strip("()") != str(default):
            raise TaskFolderError(
                f"main.cu defaults {macro} to {written}, but task.json says {size} = {default}"
            )
    for spec in [*task.inputs, *task.outputs]:
        if f"data/{spec.name}.bin" not in source:
            raise TaskFolderError(f"main.cu never mentions data/{spec.name}.bin")


def load_task(folder: Path) -> tuple[Task, Program]:
    """Load one task folder; raise `TaskFolderError` with the reason when it is malformed."""
    folder = Path(folder)
    if not folder.is_dir():
        raise TaskFolderError("not a directory")
    missing = [f for f in FILES if not (folder / f).is_file()]
    if missing:
        raise TaskFolderError(f"missing {', '.join(missing)}")
    try:
        spec = json.loads(_read_text(folder / "task.json"))
    except json.JSONDecodeError as exc:
        raise TaskFolderError(
            f"task.json line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(spec, dict):
        raise TaskFolderError("task.json must hold a JSON object")
    ref = spec.pop("reference", {}) or {}
    if not isinstance(ref, dict) or "code" in ref:
        raise TaskFolderError(
            "task.json 'reference' may only set language/entrypoint; the code lives in reference.py"
        )
    code = _read_text(folder / "reference.py")
    if not code.strip():
        raise TaskFolderError("reference.py is empty")
    try:
        spec["reference"] = Reference.parse({**ref, "code": code}).model_dump()
        task = Task.parse(spec, origin=f"{folder.name}/task.json")
    except SchemaError as exc:
        raise TaskFolderError(str(exc)) from None
    if task.name != folder.name:
        raise TaskFolderError(f"task.json names the task {task.name!r}, but the folder is {folder.name!r}")
    if len(task.cases) != CASES_PER_TASK:
        raise TaskFolderError(f"has {len(task.cases)} cases; every task needs {CASES_PER_TASK}")
    _check_reference(code, task.reference.entrypoint)
    source = _read_text(folder / "main.cu")
    if not source.strip():
        raise TaskFolderError("main.cu is empty")
    _check_program(task, source)
    return task, Program(source=source, filename="main.cu")


def load_all(root: Path | None = None) -> LoadResult:
    """Every task under `root` (default: the shipped corpus), in name order, plus the folders
    that could not be loaded."""
    root = Path(root) if root is not None else TASKS_DIR
    result = LoadResult()
    if not root.is_dir():
        result.errors.append(LoadError("<corpus>", str(root), "the tasks folder does not exist"))
        return result
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        try:
            result.tasks.append(load_task(folder))
        except TaskFolderError as exc:
            result.errors.append(LoadError(folder.name, _origin(folder), str(exc)))
    return result


def load_tasks(root: Path | None = None) -> list[tuple[Task, Program]]:
    """The loadable tasks; malformed folders are logged as warnings and skipped."""
    result = load_all(root)
    for err in result.errors:
        log.warning("%s", err)
    return result.tasks


def split_of(name: str) -> str:
    return "test" if name in HELD_OUT else "train"


def _origin(folder: Path) -> str:
    folder = folder.resolve()
    try:
        return folder.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return folder.as_posix()


def to_record(task: Task, program: Program, folder: Path) -> RawRecord:
    origin = _origin(folder)
    return RawRecord(
        id=f"{SOURCE_NAME}/{task.name}",
        text=program.source,
        provenance=Provenance(
            source=SOURCE_NAME,
            origin=origin,
            license=LICENSE,
            path=f"{origin}/main.cu",
            authors=["cuda-kernel-data contributors"],
            notes="written for this project",
        ),
        task=task,
        split=split_of(task.name),
        meta={"tags": ",".join(task.tags)},
    )


def iter_records(root: Path | None = None) -> Iterator[RawRecord | UnreadableRecord]:
    """One RawRecord per loadable task, held-out tasks with split='test'; an
    UnreadableRecord, with the reason, per malformed task folder."""
    root = Path(root) if root is not None else TASKS_DIR
    result = load_all(root)
    for task, program in result.tasks:
        yield to_record(task, program, root / task.name)
    for err in result.errors:
        yield UnreadableRecord(id=f"{SOURCE_NAME}/{err.task}", origin=err.path, reason=err.reason)


def block_size(task: Task) -> int | None:
    """The block (tile) edge recorded in the task's `block:<n>` tag, if any."""
    for tag in task.tags:
        if tag.startswith(BLOCK_TAG):
            return int(tag[len(BLOCK_TAG):])
    return None
