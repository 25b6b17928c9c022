"""A folder on disk as a `sources.files.Tree`, never following a symbolic link."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path

from sources.files import Entry, is_vendored_dir


class LocalTree:
    """The files under `root`. Vendored folders are not descended into (they can be huge, and
    the policy refuses everything in them); their names are kept in `pruned`."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.pruned: list[str] = []
        self._entries: dict[str, Entry] | None = None

    def entries(self) -> Mapping[str, Entry]:
        if self._entries is None:
            self._entries = self._walk()
        return self._entries

    def _walk(self) -> dict[str, Entry]:
        found: dict[str, Entry] = {}
        stack = [""]
        while stack:
            rel = stack.pop()
            with os.scandir(self.root / rel) as it:
                items = sorted(it, key=lambda e: e.name)
            for item in items:
                path = f"{rel}/{item.name}" if rel else item.name
                st = item.stat(follow_symlinks=False)
                if stat.S_ISLNK(st.st_mode):
                    found[path] = Entry("symlink")
                elif stat.S_ISDIR(st.st_mode):
                    if is_vendored_dir(item.name):
                        self.pruned.append(path)
                    else:
                        stack.append(path)
                elif stat.S_ISREG(st.st_mode):
                    found[path] = Entry("file", st.st_size)
        return found

    def read(self, path: str) -> bytes:
        entry = self.entries().get(path)
        if entry is None or entry.kind != "file":
            raise FileNotFoundError(f"{path}: not a regular file of {self.root}")
        # O_NOFOLLOW: a file swapped for a link after the listing is still not followed.
        fd = os.open(self.root / path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        with os.fdopen(fd, "rb") as fh:
            return fh.read()
