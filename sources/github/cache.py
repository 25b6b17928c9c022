"""The on-disk cache of GitHub responses: ETag + body per URL, git blobs by sha.

Every write goes to a temporary file in the destination folder and is renamed into place, so a
crawl killed at any instant leaves either the old entry or the new one, never a torn file.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

_SHA_CHARS = frozenset("0123456789abcdef")


def default_cache_dir() -> Path:
    """`$CKD_CACHE_DIR/github`, `CKD_CACHE_DIR` defaulting to `~/.cache/cuda-kernel-data`."""
    env = os.environ.get("CKD_CACHE_DIR")
    root = Path(env) if env else Path.home() / ".cache" / "cuda-kernel-data"
    return root / "github"


def atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


class ResponseCache:
    """Stored GET responses and git blobs under `root`."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def _response_path(self, url: str) -> Path:
        key = hashlib.sha256(url.encode("utf-8")).hexdigest()
        return self.root / "responses" / key[:2] / f"{key}.json"

    def get(self, url: str) -> tuple[str | None, Any] | None:
        """`(etag, parsed body)` stored for `url`, or None."""
        path = self._response_path(url)
        try:
            entry = json.loads(path.read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            return None  # a foreign or damaged file is a miss, not a crash
        if not isinstance(entry, dict) or entry.get("url") != url or "body" not in entry:
            return None
        return entry.get("etag"), entry["body"]

    def put(self, url: str, etag: str | None, body: Any) -> None:
        data = json.dumps({"url": url, "etag": etag, "body": body}, separators=(",", ":"))
        atomic_write(self._response_path(url), data.encode("utf-8"))

    def _blob_path(self, sha: str) -> Path:
        sha = sha.lower()
        if len(sha) < 7 or not set(sha) <= _SHA_CHARS:
            raise ValueError(f"{sha!r} is not a git object sha")
        return self.root / "blobs" / sha[:2] / sha

    def get_blob(self, sha: str) -> bytes | None:
        try:
            return self._blob_path(sha).read_bytes()
        except FileNotFoundError:
            return None

    def has_blob(self, sha: str) -> bool:
        return self._blob_path(sha).is_file()

    def put_blob(self, sha: str, data: bytes) -> None:
        atomic_write(self._blob_path(sha), data)
