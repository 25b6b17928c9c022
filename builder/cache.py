"""Content-addressed per-stage results, safe against interruption and corruption.

An entry is keyed by the stage name, the stage version, the digest of the input item and
the stage's relevant configuration, so a finished result is reused by any later run that
would compute the same thing, and anything that could change the result changes the key.

Entries are written to a temporary file and renamed into place, so a `kill -9` leaves either
a whole entry or none. Each entry starts with the sha256 of its body: a damaged entry
(truncated, edited, unreadable) is detected, deleted and reported, and the caller recomputes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def cache_key(stage: str, version: int, input_digest: str, config: dict[str, Any]) -> str:
    blob = json.dumps(
        {"stage": stage, "version": version, "input": input_digest, "config": config},
        sort_keys=True,
        default=str,
    )
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class Lookup:
    body: str | None
    discarded: str = ""
    """Why an entry that existed was thrown away (empty when none was)."""


class StageCache:
    """A directory of `<stage>/<key[:2]>/<key>` entries. Safe for concurrent writers: two
    workers computing the same key write the same bytes, and rename is atomic."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def _path(self, stage: str, key: str) -> Path:
        return self.root / stage / key[:2] / key

    def get(self, stage: str, key: str) -> Lookup:
        path = self._path(stage, key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return Lookup(None)
        except OSError as exc:
            return self._discard(path, f"unreadable ({exc.strerror})")
        head, sep, body = data.partition(b"\n")
        if not sep or hashlib.sha256(body).hexdigest().encode() != head:
            return self._discard(path, "checksum mismatch")
        try:
            return Lookup(body.decode("utf-8"))
        except UnicodeDecodeError:
            return self._discard(path, "not UTF-8")

    def put(self, stage: str, key: str, body: str) -> None:
        path = self._path(stage, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        raw = body.encode("utf-8")
        payload = hashlib.sha256(raw).hexdigest().encode() + b"\n" + raw
        atomic_write_bytes(path, payload)

    def clear(self, stages: list[str]) -> None:
        """Drop the entries of these stages, and nothing else: the cache folder may be one the
        user named (`--cache-dir`) and hold other files."""
        for stage in stages:
            shutil.rmtree(self.root / stage, ignore_errors=True)

    def _discard(self, path: Path, why: str) -> Lookup:
        try:
            path.unlink()
        except OSError:
            pass
        return Lookup(None, discarded=f"cache entry {path.name[:12]} discarded: {why}")

    def entries(self, stage: str | None = None) -> list[Path]:
        base = self.root / stage if stage else self.root
        if not base.exists():
            return []
        return sorted(p for p in base.rglob("*") if p.is_file() and not p.name.startswith("."))


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write `data` to `path` so readers see the old file or the whole new one, never part."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_UMASK)  # mkstemp makes 0600; outputs are ordinary files
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))
