"""A content-addressed cache of build artifacts, safe under concurrent writers.

Layout: `<root>/<k[:2]>/<k>/` holds the artifact and `meta.json` (the CompileInfo of the
build plus the artifact's sha256). An entry is built in a private temporary directory and
published with one `rename`, so readers never see half an entry. Writers of the same key
serialise on an `flock` of `<root>/<k[:2]>/<k>.lock` (works between processes and between
threads, because each attempt opens its own file description), so a key is built exactly
once; on a file system without `flock` the lock is skipped and the worst case is two builds
of the same key racing, the loser's result being discarded.

Failed builds are cached too (meta only, `ok=False`): a broken program is not rebuilt. A
build that fails for a reason that may not recur (a timeout under load) raises
`TransientBuildError` and is not cached.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from schemas import CompileInfo, SchemaError

META = "meta.json"


class TransientBuildError(RuntimeError):
    """Raised by a build callable for a failure that must not be cached.

    `info` is returned to the caller as the (uncached) result.
    """

    def __init__(self, info: CompileInfo) -> None:
        super().__init__(info.diagnostics[:200])
        self.info = info


def cache_root() -> Path:
    """`$CKD_CACHE_DIR`, default `~/.cache/cuda-kernel-data`."""
    env = os.environ.get("CKD_CACHE_DIR")
    return Path(env) if env else Path.home() / ".cache" / "cuda-kernel-data"


def _canonical(value: object) -> object:
    """A JSON-encodable, order-independent form of a key part."""
    if isinstance(value, bytes):
        return {"__bytes__": hashlib.sha256(value).hexdigest()}
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _canonical(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cache key part of type {type(value).__name__} is not supported")


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class BuildCache:
    """Content-addressed build artifacts under `root` (default `$CKD_CACHE_DIR/builds`)."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root is not None else cache_root() / "builds"

    @staticmethod
    def key(**parts: object) -> str:
        """sha256 over a canonical JSON encoding of the named parts (source, flags, compiler
        version, ...). Keyword order does not matter; list order does."""
        blob = json.dumps(_canonical(parts), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()

    def entry_dir(self, key: str) -> Path:
        return self.root / key[:2] / key

    def lookup(self, key: str, artifact: str = "a.out") -> tuple[Path | None, CompileInfo] | None:
        """The cached result for `key`, or None when absent or corrupted."""
        entry = self.entry_dir(key)
        try:
            meta = json.loads((entry / META).read_text())
            info = CompileInfo.parse(meta["info"])
        except (OSError, ValueError, KeyError, TypeError, SchemaError):
            return None
        info = info.model_copy(update={"cached": True})
        digest = meta.get("artifact_sha256")
        if digest is None:
            return (None, info) if not info.ok else None
        path = entry / artifact
        try:
            if sha256_file(path) != digest:
                return None
        except OSError:
            return None
        return path, info

    def get_or_build(
        self,
        key: str,
        build: Callable[[Path], CompileInfo],
        artifact: str = "a.out",
    ) -> tuple[Path | None, CompileInfo]:
        """Return the artifact for `key`, building it with `build(tmpdir)` when missing.

        `build` writes `artifact` into the empty directory it is given and returns the
        CompileInfo; the artifact path is None when the build failed.
        """
        hit = self.lookup(key, artifact)
        if hit is not None:
            return hit
        shard = self.root / key[:2]
        shard.mkdir(parents=True, exist_ok=True)
        with _locked(shard / f"{key}.lock"):
            hit = self.lookup(key, artifact)
            if hit is not None:
                return hit
            tmp = Path(tempfile.mkdtemp(prefix=f".{key[:12]}-", dir=shard))
            try:
                work = tmp / "build"
                work.mkdir()
                try:
                    info = build(work)
                except TransientBuildError as exc:
                    return None, exc.info
                built = work / artifact
                meta: dict[str, object] = {"info": json.loads(info.to_json())}
                if info.ok and built.is_file():
                    meta["artifact_sha256"] = sha256_file(built)
                    os.replace(built, tmp / artifact)
                    os.chmod(tmp / artifact, 0o755)
                elif info.ok:
                    info = info.model_copy(
                        update={"ok": False, "diagnostics": f"build produced no {artifact}\n" + info.diagnostics}
                    )
                    meta["info"] = json.loads(info.to_json())
                shutil.rmtree(work, ignore_errors=True)
                (tmp / META).write_text(json.dumps(meta))
                # Readable by others: sandboxed runs execute artifacts under their own uid.
                os.chmod(tmp, 0o755)
                self._publish(tmp, self.entry_dir(key))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        final = self.entry_dir(key) / artifact
        return (final if info.ok else None), info.model_copy(update={"cached": False})

    def _publish(self, tmp: Path, entry: Path) -> None:
        """Move `tmp` to `entry` atomically, replacing a corrupted entry if one is there."""
        try:
            os.rename(tmp, entry)
            return
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
        # A corrupted entry (we hold the lock and lookup rejected it): move it aside first.
        trash = Path(tempfile.mkdtemp(prefix=".trash-", dir=entry.parent))
        os.rename(entry, trash / "old")
        os.rename(tmp, entry)
        shutil.rmtree(trash, ignore_errors=True)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            pass  # no flock here: fall back to racing writers, the atomic rename keeps it safe
        yield
    finally:
        os.close(fd)
