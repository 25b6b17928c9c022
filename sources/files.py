"""Which repository files a source may read, the kernels they define and the headers they need.

Shared by the GitHub and local-folder sources, and free of I/O of its own: both describe their
files as a `Tree` (a listing of entries and a way to read one), so the same policy and the same
include resolution apply to a folder on disk and to a git tree at a pinned commit.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol

DEFAULT_MAX_FILE_BYTES = 512 * 1024
MAX_INCLUDE_FILES = 64
MAX_INCLUDE_BYTES = 2 * 1024 * 1024

KERNEL_EXTENSIONS = frozenset({".cu", ".cuh"})
HEADER_EXTENSIONS = frozenset({".h", ".hpp", ".hxx", ".cuh", ".inl", ".inc"})
# Headers are scanned too: a `__global__` defined in a header makes it a kernel file.
CANDIDATE_EXTENSIONS = KERNEL_EXTENSIONS | HEADER_EXTENSIONS

VENDORED_DIRS = frozenset({
    "third_party", "thirdparty", "vendor", "vendors", "external", "extern", "deps", "3rdparty",
    "node_modules", "build", ".git", "generated",
})
VENDORED_DIR_PREFIXES = ("cmake-build-",)

BINARY_PROBE_BYTES = 8192
GENERATED_PROBE_LINES = 10
_GENERATED_RE = re.compile(r"generated\s+by|do\s+not\s+edit", re.IGNORECASE)

INCLUDE_DIR_NAMES = ("include", "inc", "src", "Common", "common")

RefusalCode = Literal[
    "file_too_large", "binary_file", "not_utf8", "symlink", "vendored", "generated",
    "include_limit", "outside_tree",
]


@dataclass(frozen=True)
class Refusal:
    """A file the policy will not read or use; `code` is what the build counts."""

    path: str
    code: str
    detail: str


@dataclass(frozen=True)
class Entry:
    """One entry of a tree listing. `size` is None when the lister does not know it."""

    kind: Literal["file", "symlink", "submodule"]
    size: int | None = None


class Tree(Protocol):
    """A read-only file tree addressed by POSIX paths relative to its root (no leading `/`)."""

    def entries(self) -> Mapping[str, Entry]:
        """Every entry of the tree; symlinks and submodules are listed, never followed."""
        ...

    def read(self, path: str) -> bytes:
        """The bytes of the regular file `path` (an entry of kind `file`)."""
        ...


# ---------------------------------------------------------------------------------- policy


def is_vendored_dir(name: str) -> bool:
    return name in VENDORED_DIRS or name.startswith(VENDORED_DIR_PREFIXES)


def vendored_part(path: str) -> str | None:
    """The folder of `path` that marks it as vendored or generated, or None."""
    for part in path.split("/")[:-1]:
        if is_vendored_dir(part):
            return part
    return None


def extension(path: str) -> str:
    return posixpath.splitext(path)[1].lower()


def is_candidate(path: str) -> bool:
    """Whether `path` may hold CUDA kernels (by extension only)."""
    return extension(path) in CANDIDATE_EXTENSIONS


@dataclass(frozen=True)
class FilePolicy:
    """Size cap, binary/encoding checks and the vendored/generated rules, each refusal with
    its reason code."""

    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES

    def check_entry(self, path: str, entry: Entry) -> Refusal | None:
        """What can be decided from the listing alone, before any byte is read."""
        if entry.kind == "symlink":
            return Refusal(path, "symlink", f"{path}: a symbolic link; links are never followed")
        folder = vendored_part(path)
        if folder is not None:
            return Refusal(path, "vendored", f"{path}: inside vendored/generated folder {folder!r}")
        if entry.size is not None and entry.size > self.max_file_bytes:
            return self._too_large(path, entry.size)
        return None

    def decode(self, path: str, data: bytes) -> str | Refusal:
        """The text of `data`, or why it is not usable source text."""
        if len(data) > self.max_file_bytes:
            return self._too_large(path, len(data))
        nul = data.find(b"\0", 0, BINARY_PROBE_BYTES)
        if nul >= 0:
            return Refusal(path, "binary_file", f"{path}: binary (NUL byte at offset {nul})")
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            return Refusal(
                path, "not_utf8",
                f"{path}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})",
            )
        head = text.lstrip("\ufeff").splitlines()[:GENERATED_PROBE_LINES]
        for line in head:
            if _GENERATED_RE.search(line):
                return Refusal(
                    path, "generated", f"{path}: generated file ({line.strip()[:80]!r})"
                )
        return text

    def _too_large(self, path: str, size: int) -> Refusal:
        return Refusal(
            path, "file_too_large",
            f"{path}: {size} bytes is over the {self.max_file_bytes}-byte limit",
        )


# ---------------------------------------------------------------------------------- kernels

_KERNEL_RE = re.compile(
    r"__global__\s+(?:[\w:<>,\s*&]+?\s+)?(?:__launch_bounds__\s*\([^)]*\)\s*)?"
    r"(?:[\w:]+::)?(\w+)\s*\(",
)


def kernel_names(text: str) -> list[str]:
    """The names of the `__global__` functions `text` defines, in order, each once."""
    if "__global__" not in text:
        return []  # the common case for headers; spares the parse
    try:
        from validators.analysis import analyze

        names = [k.name for k in analyze(text).kernels]
    except Exception:  # a parser failure must not lose the file
        names = [m.group(1) for m in _KERNEL_RE.finditer(text)]
    return list(dict.fromkeys(names))


# ---------------------------------------------------------------------------------- includes

_INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.MULTILINE)


def parse_includes(text: str) -> list[str]:
    """The names of `#include "x"` and `#include <x>` directives, in order."""
    return [m.group(2).strip() for m in _INCLUDE_RE.finditer(text)]


@dataclass
class Includes:
    """The local headers a file needs, by path relative to the file's own folder."""

    files: dict[str, str] = field(default_factory=dict)
    unresolved: list[str] = field(default_factory=list)
    """Include names found nowhere in the tree (toolkit, system or external headers)."""
    skipped: list[Refusal] = field(default_factory=list)
    """Headers found in the tree but refused (not UTF-8, a symlink, over a cap, ...)."""


class _Dirs:
    """The folders of a tree, for the include-folder heuristics."""

    def __init__(self, paths: Iterable[str]):
        self.dirs: set[str] = {""}
        for p in paths:
            d = posixpath.dirname(p)
            while d and d not in self.dirs:
                self.dirs.add(d)
                d = posixpath.dirname(d)

    def heuristic(self, path: str) -> list[str]:
        """The root, then `include`/`inc`/`src`/`Common`/`common` folders on the way from the
        root to `path` (as ancestors, or as children of an ancestor), nearest first."""
        ancestors = [""]
        d = posixpath.dirname(path)
        chain = []
        while d:
            chain.append(d)
            d = posixpath.dirname(d)
        ancestors += reversed(chain)
        found: list[str] = []
        for a in reversed(ancestors):
            if posixpath.basename(a) in INCLUDE_DIR_NAMES:
                found.append(a)
            for name in INCLUDE_DIR_NAMES:
                child = posixpath.join(a, name) if a else name
                if child in self.dirs:
                    found.append(child)
        return list(dict.fromkeys(["", *found]))


def _inside(base: str, name: str) -> str | None:
    """`base/name` normalised, or None if it would leave the tree."""
    if name.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", name):
        return None
    joined = posixpath.normpath(posixpath.join(base, name) if base else name)
    if joined == ".." or joined.startswith("../") or joined.startswith("/"):
        return None
    return joined


def gather_includes(
    tree: Tree,
    path: str,
    text: str,
    policy: FilePolicy | None = None,
    include_dirs: Iterable[str] = (),
    *,
    max_files: int = MAX_INCLUDE_FILES,
    max_bytes: int = MAX_INCLUDE_BYTES,
    read_text: Callable[[str], str | Refusal] | None = None,
    folders: _Dirs | None = None,
) -> Includes:
    """The headers `path` (whose text is `text`) includes, transitively, that exist in `tree`.

    Each include resolves relative to the including file's folder, then in `include_dirs`
    (tree paths), then in the heuristic folders (`_Dirs.heuristic`). Every header passes
    `policy`; refused ones are listed in `skipped`, never included as text. `read_text` lets a
    caller share decoded texts between files (it must apply the same policy), `folders` the
    folder index of the tree.
    """
    policy = policy or FilePolicy()
    entries = tree.entries()
    dirs = folders or _Dirs(p for p, e in entries.items() if e.kind == "file")
    extra = [d.strip("/") for d in include_dirs]
    home = posixpath.dirname(path)
    out = Includes()
    seen: set[str] = {path}
    refused: set[str] = set()
    unresolved: dict[str, None] = {}
    total = 0
    queue: list[tuple[str, str]] = [(path, text)]

    def read(p: str) -> str | Refusal:
        if read_text is not None:
            return read_text(p)
        refusal = policy.check_entry(p, entries[p])
        return refusal if refusal is not None else policy.decode(p, tree.read(p))

    while queue:
        current, current_text = queue.pop(0)
        folder = posixpath.dirname(current)
        for name in parse_includes(current_text):
            bases = [folder, *extra, *dirs.heuristic(current)]
            target: str | None = None
            for base in dict.fromkeys(bases):
                candidate = _inside(base, name)
                if candidate is not None and candidate in entries:
                    target = candidate
                    break
            if target is None:
                unresolved.setdefault(name, None)
                continue
            if target in seen or target in refused:
                continue
            entry = entries[target]
            if entry.kind == "submodule":
                unresolved.setdefault(name, None)
                continue
            if len(seen) - 1 >= max_files:
                refused.add(target)
                out.skipped.append(Refusal(
                    target, "include_limit",
                    f"{target}: not gathered, {path} already has {max_files} headers",
                ))
                continue
            got = read(target)
            if isinstance(got, Refusal):
                refused.add(target)
                out.skipped.append(got)
                continue
            size = len(got.encode("utf-8"))
            if total + size > max_bytes:
                refused.add(target)
                out.skipped.append(Refusal(
                    target, "include_limit",
                    f"{target}: not gathered, headers of {path} would pass {max_bytes} bytes",
                ))
                continue
            total += size
            seen.add(target)
            out.files[posixpath.relpath(target, home or ".")] = got
            queue.append((target, got))
    out.unresolved = list(unresolved)
    return out


# ---------------------------------------------------------------------------------- scanning


@dataclass
class KernelFile:
    """A candidate file that defines kernels, with the headers it needs."""

    path: str
    text: str
    kernels: list[str]
    includes: Includes


@dataclass
class ScanSummary:
    files_seen: int = 0
    """Candidate files looked at (by extension), vendored ones included."""
    kernel_files: int = 0
    kernels: int = 0
    headers_gathered: int = 0
    vendored: int = 0
    submodules: int = 0
    refusals: dict[str, int] = field(default_factory=dict)


def scan_tree(
    tree: Tree,
    policy: FilePolicy | None = None,
    include_dirs: Iterable[str] = (),
    summary: ScanSummary | None = None,
) -> Iterator[KernelFile | Refusal]:
    """Every candidate file of `tree` in path order: a `KernelFile` for one that defines
    kernels, a `Refusal` for one the policy refuses (vendored files are only counted, in
    `summary`), nothing for a file without kernels."""
    policy = policy or FilePolicy()
    summary = summary if summary is not None else ScanSummary()
    entries = tree.entries()
    include_dirs = list(include_dirs)
    texts: dict[str, str | Refusal] = {}
    folders = _Dirs(p for p, e in entries.items() if e.kind == "file")

    def read_text(p: str) -> str | Refusal:
        # Shared headers (helper_cuda.h) are read and decoded once per tree.
        if p not in texts:
            refusal = policy.check_entry(p, entries[p])
            texts[p] = refusal if refusal is not None else policy.decode(p, tree.read(p))
        return texts[p]

    for p in sorted(entries):
        entry = entries[p]
        if entry.kind == "submodule":
            summary.submodules += 1
            continue
        if not is_candidate(p):
            continue
        summary.files_seen += 1
        got = read_text(p)
        if isinstance(got, Refusal):
            summary.refusals[got.code] = summary.refusals.get(got.code, 0) + 1
            if got.code == "vendored":
                summary.vendored += 1
                continue
            yield got
            continue
        names = kernel_names(got)
        if not names:
            continue
        includes = gather_includes(
            tree, p, got, policy, include_dirs, read_text=read_text, folders=folders
        )
        summary.kernel_files += 1
        summary.kernels += len(names)
        summary.headers_gathered += len(includes.files)
        yield KernelFile(p, got, names, includes)


def include_meta(kernel_file: KernelFile) -> dict[str, str]:
    """The `RawRecord.meta` entries both sources give a kernel record."""
    inc = kernel_file.includes
    return {
        "kernels": ",".join(kernel_file.kernels),
        "unresolved_includes": ",".join(inc.unresolved),
        "skipped_includes": ",".join(f"{r.path}:{r.code}" for r in inc.skipped),
    }
