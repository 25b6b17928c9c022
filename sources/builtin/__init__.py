"""The built-in corpus: CUDA tasks written for this project, each with a canonical program,
a NumPy reference and five cases (see `loader` for the folder layout)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from schemas import RawRecord

from .loader import (
    LICENSE,
    TASKS_DIR,
    LoadError,
    LoadResult,
    TaskFolderError,
    block_size,
    iter_records,
    load_all,
    load_task,
    load_tasks,
    split_of,
)
from .splits import HELD_OUT


def records(root: Path | None = None) -> Iterator[RawRecord]:
    """The source entry point the builder's registry names (`sources.builtin:records`)."""
    yield from iter_records(root)


__all__ = [
    "HELD_OUT", "LICENSE", "TASKS_DIR", "LoadError", "LoadResult", "TaskFolderError",
    "block_size", "iter_records", "load_all", "load_task", "load_tasks", "records", "split_of",
]
