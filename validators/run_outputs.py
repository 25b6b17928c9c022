"""The files a sandboxed program wrote: what `validators run --keep-outputs DIR` hands back.

The run directory is removed after every run; before that, the files the program created or
changed (compared with a snapshot taken after the inputs were copied in) are copied out.
Symbolic links are never followed or copied: the program made them, and they could point at
files outside its directory.
"""

from __future__ import annotations

import os
from pathlib import Path

Snapshot = dict[str, tuple[int, int]]
"""Relative path of each regular file -> (size, modification time in ns)."""


def snapshot(root: Path, max_entries: int = 100_000) -> Snapshot:
    """Regular files under `root` (iterative, never following links, at most `max_entries`
    entries: the program shaped the tree)."""
    import stat

    from .safe_fs import walk_entries

    out: Snapshot = {}
    for n, (path, st) in enumerate(walk_entries(root)):
        if n >= max_entries:
            break
        if stat.S_ISREG(st.st_mode):
            out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return out


def copy_outputs(root: Path, dest: Path, before: Snapshot, max_bytes: int = 1 << 30) -> list[str]:
    """Copy the files under `root` that are new or changed since `before` into `dest` (same
    relative paths), reached without following links and at most `max_bytes` in all; returns
    the paths copied, sorted."""
    from .safe_fs import UnsafePath, read_regular

    kept = []
    left = max_bytes
    for rel in sorted(rel for rel, stat in snapshot(root).items() if before.get(rel) != stat):
        try:
            data = read_regular(root, rel, left)
        except (UnsafePath, OSError):
            continue
        left -= len(data)
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        kept.append(rel)
    return kept


def check_destination(dest: Path) -> None:
    """Raise ValueError unless `dest` can receive outputs (a directory, or a path to create)."""
    if dest.exists() and not dest.is_dir():
        raise ValueError(f"--keep-outputs {dest}: exists and is not a directory")
    parent = dest if dest.exists() else dest.parent
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise ValueError(f"--keep-outputs {dest}: {parent} is not writable")
