"""A folder of `.cu` files and their headers as a source: one record per kernel.

`records(path, license=None, include_dirs=None, max_file_bytes=None, split="train")` applies
the file policy and include gathering of `sources.files` to the folder, never following a
symbolic link. The licence is the option (the user knows), else what `sources.licenses.LicenseMap`
finds for each file (its SPDX line, its header's licence text, the nearest licence file above
it), else `unknown`; the build's gather stage refuses what the licence policy does not allow.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path

from schemas import Provenance, RawRecord
from sources.base import SourceError, UnreadableRecord
from sources.files import (
    DEFAULT_MAX_FILE_BYTES,
    FilePolicy,
    KernelFile,
    Refusal,
    ScanSummary,
    include_meta,
    scan_tree,
)
from sources.licenses import Found, LicenseMap

from .license import detect_license, spdx_of_text
from .tree import LocalTree

__all__ = ["LocalTree", "detect_license", "records", "spdx_of_text"]


def _include_dirs(root: Path, include_dirs: Iterable[str | os.PathLike] | str | None) -> list[str]:
    if include_dirs is None:
        return []
    if isinstance(include_dirs, str):
        include_dirs = [d for d in include_dirs.split(",") if d.strip()]
    out = []
    for d in include_dirs:
        p = Path(d)
        full = (p if p.is_absolute() else root / p).resolve()
        try:
            rel = full.relative_to(root.resolve())
        except ValueError:
            raise SourceError(f"local: include dir {str(d)!r} is outside {root}") from None
        out.append(rel.as_posix() if str(rel) != "." else "")
    return out


def records(
    path: str | os.PathLike | None = None,
    license: str | None = None,  # the option's public name
    include_dirs: Iterable[str | os.PathLike] | str | None = None,
    max_file_bytes: int | None = None,
    split: str = "train",
) -> Iterator[RawRecord | UnreadableRecord]:
    """One `RawRecord` per `__global__` function of each file under `path` (ids
    `local/<relative path>#<kernel>`), an `UnreadableRecord` per refused file.

    Options are checked on the call (bad ones raise `SourceError` before anything is read);
    the records come from the returned iterator."""
    if path is None or not str(path).strip():
        raise SourceError("local: give the folder of .cu files (--local-dir DIR)")
    root = Path(path).expanduser()
    if not root.is_dir():
        raise SourceError(f"local: {str(path)!r} is not a folder")
    if split not in ("train", "test"):
        raise SourceError(f"local: split {split!r} must be 'train' or 'test'")
    if max_file_bytes is not None and int(max_file_bytes) <= 0:
        raise SourceError(f"local: max_file_bytes {max_file_bytes!r} must be positive")
    root = root.absolute()
    given = license.strip() if license and license.strip() else None
    forced = Found(given, "--local-license") if given else None
    policy = FilePolicy(int(max_file_bytes) if max_file_bytes else DEFAULT_MAX_FILE_BYTES)
    return _records(root, forced, policy, _include_dirs(root, include_dirs), split)


def _records(
    root: Path, forced: Found | None, policy: FilePolicy, include_dirs: list[str], split: str
) -> Iterator[RawRecord | UnreadableRecord]:
    tree = LocalTree(root)
    licenses = LicenseMap(tree)
    summary = ScanSummary()
    for item in scan_tree(tree, policy, include_dirs, summary):
        origin = str(root / item.path)
        if isinstance(item, Refusal):
            yield UnreadableRecord(
                id=f"local/{item.path}", origin=origin, reason=item.detail, code=item.code
            )
            continue
        found = forced or licenses.for_path(item.path, item.text)
        yield from _kernel_records(item, origin, found, split, len(tree.pruned) + summary.vendored)


def _kernel_records(
    kf: KernelFile, origin: str, found: Found, split: str, vendored: int
) -> Iterator[RawRecord]:
    meta = include_meta(kf)
    meta["vendored_skipped"] = str(vendored)
    meta["license_from"] = found.origin
    provenance = Provenance(source="local", origin=origin, license=found.spdx, path=kf.path)
    for kernel in kf.kernels:
        yield RawRecord(
            id=f"local/{kf.path}#{kernel}", text=kf.text, provenance=provenance, split=split,
            meta=dict(meta), files=dict(kf.includes.files), focus=kernel, kind="kernel",
        )
