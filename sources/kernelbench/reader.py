"""Read a folder of KernelBench task files (`<n>_<Name>.py`: `class Model(nn.Module)`,
`get_inputs()`, `get_init_inputs()`) as `RawRecord(kind="module")`.

Nothing is executed here: each file is only parsed (AST). The module becomes the task's torch
reference later (`builder.modules.module_task`), inside the sandbox. KernelBench is a benchmark,
so its records go to the held-out `test` split unless told otherwise.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from schemas import Provenance, RawRecord

from ..base import SourceError, UnreadableRecord
from ..licenses import UNKNOWN, is_license_file
from ..licenses import detect_license as _detect

SOURCE_NAME = "kernelbench"
REQUIRED = ("Model", "get_inputs", "get_init_inputs")
_LEVEL_RE = re.compile(r"level[_-]?(\d+)", re.IGNORECASE)


def detect_license(folder: Path) -> str:
    """The licence of the licence files in `folder`, else in its parent (a benchmark's level
    folders sit under the repository root), else `unknown` (`sources.licenses`)."""
    for d in (folder, folder.parent):
        if any(is_license_file(p.name) for p in d.iterdir() if p.is_file()):
            return _detect(d).spdx
    return UNKNOWN


def _level(folder: Path) -> str:
    for part in reversed(folder.resolve().parts):
        m = _LEVEL_RE.search(part)
        if m:
            return m.group(1)
    return ""


def module_problem(code: str) -> str:
    """Why `code` is not a KernelBench module (empty when it is). AST only."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"not valid Python: {exc.msg} (line {exc.lineno})"
    defined = {n.name for n in tree.body
               if isinstance(n, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    missing = [n for n in REQUIRED if n not in defined]
    return f"defines no {', '.join(missing)}" if missing else ""


def _order(file: Path) -> tuple[int, str]:
    """KernelBench's numbering first (`2_...` before `10_...`), then the name."""
    head = file.stem.split("_", 1)[0]
    return (int(head) if head.isdigit() else 1 << 30, file.name)


def records(path: str | Path | None = None, license: str | None = None,
            split: Literal["train", "test"] | None = None, limit: int | None = None
            ) -> Iterator[RawRecord | UnreadableRecord]:
    """One record per `*.py` file of the folder (`kernelbench/<stem>`), sorted by KernelBench's
    number and then by name.

    `license` overrides the one detected from a licence file in the folder or its parent. A
    file that is not valid Python or lacks `Model`/`get_inputs`/`get_init_inputs` is an
    `UnreadableRecord` with code `not_a_module`. Raises SourceError for a path that is not a
    folder."""
    if path is None:
        raise SourceError("kernelbench: give the folder of modules (--kernelbench-dir DIR)")
    folder = Path(path)
    if not folder.is_dir():
        raise SourceError(f"kernelbench: {folder} is not a folder")
    split = split or "test"
    if split not in ("train", "test"):
        raise SourceError(f"kernelbench: split must be 'train' or 'test', not {split!r}")
    # Checked at the call (a bad folder stops the build before it starts); read lazily.
    return _records(folder, license, split, limit)


def _records(folder: Path, license: str | None, split: Literal["train", "test"],
             limit: int | None) -> Iterator[RawRecord | UnreadableRecord]:
    spdx = license or detect_license(folder)
    level = _level(folder)
    files = sorted(folder.glob("*.py"), key=_order)
    for n, file in enumerate(files):
        if limit is not None and n >= limit:
            return
        rid = f"{SOURCE_NAME}/{file.stem}"
        try:
            code = file.read_bytes().decode("utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            yield UnreadableRecord(id=rid, origin=str(file), reason=f"cannot read: {exc}")
            continue
        problem = module_problem(code)
        if problem:
            yield UnreadableRecord(id=rid, origin=str(file), reason=f"{file.name}: {problem}",
                                   code="not_a_module")
            continue
        meta = {"file": file.name}
        if level:
            meta["level"] = level
        yield RawRecord(
            id=rid, text="", kind="module", module=code, split=split, meta=meta,
            provenance=Provenance(source=SOURCE_NAME, origin=str(file), license=spdx,
                                  path=file.name),
        )
