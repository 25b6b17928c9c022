"""Touching files on behalf of untrusted code: never follow a link, only regular files, bounded.

Everything the validator reads from, copies out of, walks or removes in a directory that an
untrusted program (or an untrusted folder: a scraped repository, a benchmark's files) shaped
goes through here. A program can plant symbolic links (to root-only files, to `/dev/zero`),
FIFOs that block a reader, directories nested 100,000 deep, a million empty files, or
directories without permissions; none of these may make the validator read outside the run,
hang, recurse until Python's stack runs out, or leave anything behind.

- Paths are resolved one component at a time from a directory file descriptor with
  `O_NOFOLLOW` (a link anywhere on the path, not only at its end, is refused).
- Reads check `S_ISREG` on the opened descriptor (not on a name that can change) and stop at
  a byte bound.
- Walks and removals are iterative (an explicit stack), bounded in entries where they report
  sizes, and never raise for what they meet.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class UnsafePath(OSError):
    """A path the validator refuses to touch: a link, not a regular file, or too large."""


def _parts(rel: str | Path) -> list[str]:
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or Path(rel).is_absolute() or ".." in parts:
        raise UnsafePath(errno.EINVAL, f"not a relative path inside the run: {rel}")
    return parts


def open_beneath(root: Path, rel: str | Path, flags: int = os.O_RDONLY) -> int:
    """A descriptor for `root/rel` reached without following any symbolic link below `root`."""
    parts = _parts(rel)
    fd = os.open(root, _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = nxt
        return os.open(parts[-1], flags | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=fd)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise UnsafePath(exc.errno, f"{rel}: a symbolic link or not a directory on the path") from exc
        raise
    finally:
        os.close(fd)


def read_regular(root: Path, rel: str | Path, max_bytes: int) -> bytes:
    """The bytes of the regular file `root/rel` (links, FIFOs, devices and files larger than
    `max_bytes` raise UnsafePath)."""
    fd = open_beneath(root, rel)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UnsafePath(errno.EINVAL, f"{rel} is not a regular file")
        if st.st_size > max_bytes:
            raise UnsafePath(errno.EFBIG, f"{rel} is {st.st_size} bytes, over the {max_bytes}-byte limit")
        chunks, left = [], max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > max_bytes:
            raise UnsafePath(errno.EFBIG, f"{rel} grew past the {max_bytes}-byte limit")
        return data
    finally:
        os.close(fd)


def stat_beneath(root: Path, rel: str | Path) -> os.stat_result | None:
    """lstat of `root/rel` reached without following links; None when it is not there."""
    parts = _parts(rel)
    try:
        fd = open_beneath(root, Path(*parts[:-1])) if len(parts) > 1 else os.open(root, _DIR_FLAGS)
    except OSError:
        return None
    try:
        return os.stat(parts[-1], dir_fd=fd, follow_symlinks=False)
    except OSError:
        return None
    finally:
        os.close(fd)


@dataclass
class Usage:
    """What a bounded walk saw."""

    bytes: int = 0
    entries: int = 0
    truncated: bool = False


def tree_usage(root: Path, max_entries: int = 1_000_000) -> Usage:
    """Bytes (allocated blocks) and entries under `root`, stopping at `max_entries`
    (`truncated`); never raises, never follows links, and works at any depth (it moves by
    directory descriptors and `..`, so no path grows past PATH_MAX and no stack past Python's)."""
    usage = Usage()
    try:
        fd = os.open(root, _DIR_FLAGS)
    except OSError:
        return usage
    pending: list[list[str]] = [_scan(fd, usage)]
    try:
        while pending:
            if usage.entries > max_entries:
                usage.truncated = True
                break
            if pending[-1]:
                name = pending[-1].pop()
                try:
                    nfd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    continue
                os.close(fd)
                fd = nfd
                pending.append(_scan(fd, usage))
            else:
                pending.pop()
                if pending:
                    up = os.open("..", _DIR_FLAGS, dir_fd=fd)
                    os.close(fd)
                    fd = up
    except OSError:
        pass
    finally:
        os.close(fd)
    return usage


def _scan(fd: int, usage: Usage) -> list[str]:
    """Count a directory's entries into `usage`; the names of its subdirectories."""
    subdirs: list[str] = []
    try:
        with os.scandir(fd) as it:
            for entry in it:
                usage.entries += 1
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                usage.bytes += st.st_blocks * 512
                if stat.S_ISDIR(st.st_mode):
                    subdirs.append(entry.name)
    except OSError:
        pass
    return subdirs


def walk_entries(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """(path, lstat) of every entry under `root`, directories before their contents; iterative."""
    stack = [str(root)]
    while stack:
        path = stack.pop()
        try:
            it = os.scandir(path)
        except OSError:
            continue
        with it:
            for entry in it:
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                yield entry.path, st
                if stat.S_ISDIR(st.st_mode):
                    stack.append(entry.path)


def remove_tree(root: Path) -> bool:
    """Remove `root` and everything under it, whatever its depth, count, permissions or links
    (links are removed, never followed). True when it is gone.

    It walks by directory descriptors and `..` (no path grows past PATH_MAX, no recursion) and
    must only be used once nothing else writes in the tree (the run is over)."""
    root_s = str(root)
    try:
        if not stat.S_ISDIR(os.lstat(root_s).st_mode):
            os.unlink(root_s)
            return True
        os.chmod(root_s, 0o700)
        fd = os.open(root_s, _DIR_FLAGS)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    names: list[str] = []
    try:
        while True:
            sub = _clear_files(fd)
            if sub is not None:
                try:
                    os.chmod(sub, 0o700, dir_fd=fd)  # a directory (lstat said so): no link
                    nfd = os.open(sub, _DIR_FLAGS, dir_fd=fd)
                except OSError:
                    break
                os.close(fd)
                fd = nfd
                names.append(sub)
                continue
            if not names:
                break
            up = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = up
            os.rmdir(names.pop(), dir_fd=fd)
    except OSError:
        pass
    finally:
        os.close(fd)
    try:
        os.rmdir(root_s)
    except OSError:
        pass
    return not os.path.lexists(root_s)


def _clear_files(fd: int) -> str | None:
    """Unlink every non-directory entry of the directory `fd`; the name of one subdirectory
    left (None when there is none)."""
    with os.scandir(fd) as it:
        for entry in it:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                return entry.name
            try:
                os.unlink(entry.name, dir_fd=fd)
            except FileNotFoundError:
                pass
    return None


@dataclass
class CopyReport:
    """What `copy_untrusted` copied and what it refused (with the reason)."""

    files: int = 0
    bytes: int = 0
    skipped: list[str] = field(default_factory=list)


def copy_untrusted(src: Path, dest_dir: Path, *, max_bytes: int, max_files: int,
                   name: str | None = None) -> CopyReport:
    """Copy the file or folder `src` into `dest_dir/<name or src's name>`: regular files and
    directories only (links, FIFOs and devices are skipped and named in the report), opened
    without following links, in total at most `max_bytes` and `max_files` (past either, an
    UnsafePath naming the limit)."""
    report = CopyReport()
    src = Path(src)
    target = Path(dest_dir) / (name or src.name)
    try:
        top = os.lstat(src)
    except OSError as exc:
        raise UnsafePath(exc.errno or errno.ENOENT, f"cannot read {src}: {exc.strerror}") from exc
    if stat.S_ISLNK(top.st_mode):
        raise UnsafePath(errno.ELOOP, f"{src} is a symbolic link; give the file it points to")
    if stat.S_ISREG(top.st_mode):
        _copy_file(str(src), target, report, max_bytes, max_files)
        return report
    if not stat.S_ISDIR(top.st_mode):
        raise UnsafePath(errno.EINVAL, f"{src} is not a regular file or a folder")
    target.mkdir(parents=True, exist_ok=True)
    stack = [(str(src), target)]
    while stack:
        path, dest = stack.pop()
        try:
            it = os.scandir(path)
        except OSError as exc:
            report.skipped.append(f"{path}: {exc.strerror}")
            continue
        with it:
            for entry in sorted(it, key=lambda e: e.name):
                try:
                    st = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(st.st_mode):
                    (dest / entry.name).mkdir(exist_ok=True)
                    stack.append((entry.path, dest / entry.name))
                elif stat.S_ISREG(st.st_mode):
                    _copy_file(entry.path, dest / entry.name, report, max_bytes, max_files)
                else:
                    kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
                    report.skipped.append(f"{entry.path}: {kind}")
    return report


def _copy_file(src: str, dest: Path, report: CopyReport, max_bytes: int, max_files: int) -> None:
    if report.files + 1 > max_files:
        raise UnsafePath(errno.EFBIG, f"more than {max_files} files to copy (limit)")
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            report.skipped.append(f"{src}: not a regular file")
            return
        budget = max_bytes - report.bytes
        out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                      st.st_mode & 0o755 | 0o600)
        try:
            copied = 0
            while True:
                chunk = os.read(fd, min(1 << 20, budget - copied + 1))
                if not chunk:
                    break
                copied += len(chunk)
                if copied > budget:
                    raise UnsafePath(errno.EFBIG, f"copying {src} passes the {max_bytes}-byte limit")
                os.write(out, chunk)
        finally:
            os.close(out)
        report.files += 1
        report.bytes += copied
    finally:
        os.close(fd)
