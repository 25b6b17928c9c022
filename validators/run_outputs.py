"""The files a sandboxed program wrote: what `validators run --keep-outputs DIR` hands back.

The run directory is removed after every run; before that, the files the program created or
changed (compared with a snapshot taken after the inputs were copied in) are copied out.
Symbolic links are never followed or copied: the program made them, and they could point at
files outside its directory.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

Snapshot = dict[str, tuple[int, int]]
"""Relative path of each regular file -> (size, modification time in ns)."""


def snapshot(root: Path) -> Snapshot:
    out: Snapshot = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
        for name in filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            if os.path.isfile(path) and not os.path.islink(path):
                out[os.path.relpath(path, root)] = (st.st_size, st.st_mtime_ns)
    return out


def copy_outputs(root: Path, dest: Path, before: Snapshot) -> list[str]:
    """Copy the files under `root` that are new or changed since `before` into `dest` (same
    relative paths); returns those paths, sorted."""
    kept = sorted(rel for rel, stat in snapshot(root).items() if before.get(rel) != stat)
    for rel in kept:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(root / rel, target, follow_symlinks=False)
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
