"""Licences as people write them: licence files, `SPDX-License-Identifier:` lines, licence text.

A licence text is identified with `licenseclassifier` (a port of google/licensecheck over the
SPDX licence list: it reports the licences whose whole text it finds, never a name mentioned in
passing). A file's licence is the most specific statement found, in this order:

1. the file's own `SPDX-License-Identifier:` lines;
2. a licence text in the file's leading comment;
3. the licence files (`LICENSE`, `LICENCE`, `COPYING`, `UNLICENSE`, any case, with no extension
   or `.md`/`.txt`/`.rst`/`.markdown`) of the nearest folder above it that has one: one folder's
   file covers everything under it unless a deeper folder has its own;
4. a default the caller knows (the repository licence GitHub reports), which also stands for
   root licence files this module cannot identify.

Several licences in one place (two licence files, two texts in one) are joined with `AND`: the
code is taken to be under all of them, the reading that can only refuse more.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from sources.files import Entry, Tree

from .policy import is_unknown, normalise, parse_expression

UNKNOWN = "unknown"
MAX_LICENSE_BYTES = 256 * 1024
LICENSE_STEMS = ("license", "licence", "copying", "unlicense")
LICENSE_EXTENSIONS = ("", ".md", ".txt", ".rst", ".markdown")
# A licence file names the licence; anything it covers is licence text, so a lower share of
# recognised text than licensecheck's default (75%) still identifies it ("see below" prefaces).
FILE_COVERAGE = 40.0
# A file's leading comment often holds a licence text with a project banner around it.
HEADER_COVERAGE = 50.0
HEADER_PROBE_CHARS = 16 * 1024

_SPDX_RE = re.compile(r"SPDX-License-Identifier:\s*(.+)", re.IGNORECASE)
# Comment ends and markdown that can follow an identifier on its line.
_SPDX_TAIL_RE = re.compile(r"\s*(\*/|-->|#>|\*+|`+)?\s*$")


@dataclass(frozen=True)
class Found:
    """A licence and where it was read: `spdx` is an SPDX expression or `unknown`."""

    spdx: str
    origin: str


def is_license_file(name: str) -> bool:
    """Whether a file called `name` (no folder) is a licence file."""
    stem, ext = posixpath.splitext(name.lower())
    if ext not in LICENSE_EXTENSIONS:
        stem, ext = name.lower(), ""
    return stem in LICENSE_STEMS and ext in LICENSE_EXTENSIONS


def _join(ids: list[str]) -> str:
    distinct = list(dict.fromkeys(ids))
    if not distinct:
        return UNKNOWN
    if len(distinct) == 1:
        return distinct[0]
    return " AND ".join(f"({i})" if " " in i else i for i in distinct)


def spdx_tags(text: str) -> str | None:
    """The expression of the `SPDX-License-Identifier:` lines of `text` (several -> AND), or
    None when it has none. A tag that is not an SPDX expression is kept as written, so the
    policy refuses it by name."""
    found = []
    for m in _SPDX_RE.finditer(text):
        value = _SPDX_TAIL_RE.sub("", m.group(1)).strip()
        if value:
            found.append(normalise(value))
    return _join(found) if found else None


def identify_text(text: str, coverage: float = FILE_COVERAGE) -> str | None:
    """The licences whose text `text` holds (several -> AND), or None when none is found."""
    from licenseclassifier import identify_license

    ids = [m.id for m in identify_license(text, coverage_threshold=coverage)]
    return _join(ids) if ids else None


def license_of_file_text(text: str) -> str:
    """The licence a licence file's `text` states: its licence texts, else its SPDX tags, else
    the file's whole content when that is one SPDX expression (`MIT`), else `unknown`."""
    found = identify_text(text) or spdx_tags(text)
    if found:
        return found
    bare = text.strip().strip("#*_` \n")
    if bare and "\n" not in bare and len(bare) <= 200:
        try:
            parsed = parse_expression(bare)
        except ValueError:
            return UNKNOWN
        from license_expression import get_spdx_licensing

        if not get_spdx_licensing().unknown_license_keys(parsed):
            return parsed.render()
    return UNKNOWN


_COMMENT_RE = re.compile(r"\s*(/\*.*?\*/|//[^\n]*|#[^\n]*)", re.DOTALL)


def leading_comment(text: str) -> str:
    """The comments at the top of a source file (before its first line of code), markers off."""
    out = []
    pos = 0
    head = text[:HEADER_PROBE_CHARS]
    while True:
        m = _COMMENT_RE.match(head, pos)
        if m is None or m.group(1).startswith("#") and not m.group(1).startswith("# "):
            break  # `#include` / `#pragma` is code; `# ` only appears in script-style headers
        body = m.group(1)
        body = body[2:-2] if body.startswith("/*") else body.lstrip("/#")
        out.append(re.sub(r"(?m)^\s*\*+ ?", "", body))
        pos = m.end()
    return "\n".join(out)


def license_of_source(text: str) -> Found | None:
    """What a source file says of its own licence (steps 1 and 2), or None."""
    tags = spdx_tags(text[:HEADER_PROBE_CHARS])
    if tags:
        return Found(tags, "SPDX-License-Identifier")
    header = leading_comment(text)
    if header.strip():
        got = identify_text(header, HEADER_COVERAGE)
        if got:
            return Found(got, "licence text in the file's header comment")
    return None


class LicenseMap:
    """The licence of each file of a `Tree` (module docstring). Licence files are read only
    when a file under them asks, once each."""

    def __init__(
        self,
        tree: Tree,
        default: Found | None = None,
        read_text: Callable[[str], str | None] | None = None,
    ):
        self.tree = tree
        self.default = default
        self._read_text = read_text
        self._by_dir: dict[str, list[str]] = {}
        for path, entry in tree.entries().items():
            if entry.kind == "file" and is_license_file(posixpath.basename(path)):
                self._by_dir.setdefault(posixpath.dirname(path), []).append(path)
        self._dir_license: dict[str, Found] = {}

    def license_files(self) -> Mapping[str, list[str]]:
        """Folder -> its licence files."""
        return self._by_dir

    def for_path(self, path: str, text: str | None = None) -> Found:
        """The licence of the file `path` whose text is `text` (read from the file when None)."""
        if text is not None:
            own = license_of_source(text)
            if own is not None:
                return Found(own.spdx, f"{path}: {own.origin}")
        folder = posixpath.dirname(path)
        while True:
            if folder in self._by_dir:
                found = self._folder(folder)
                if folder == "" and found.spdx == UNKNOWN and self.default is not None:
                    # The default describes the root (GitHub's reading of the same file).
                    return Found(self.default.spdx, f"{self.default.origin}; {found.origin}")
                return found
            if not folder:
                break
            folder = posixpath.dirname(folder)
        if self.default is not None:
            return self.default
        return Found(UNKNOWN, "no licence file, no SPDX-License-Identifier")

    def _folder(self, folder: str) -> Found:
        if folder not in self._dir_license:
            ids, origins = [], []
            for path in sorted(self._by_dir[folder]):
                text = self._read(path)
                spdx = UNKNOWN if text is None else license_of_file_text(text)
                ids.append(spdx)
                origins.append(path if spdx != UNKNOWN else f"{path} (text not identified)")
            # One unidentified licence file leaves its folder unknown rather than falling back
            # to a sibling's or a parent's licence: it may restrict what the others allow.
            spdx = UNKNOWN if any(is_unknown(i) for i in ids) else _join(ids)
            self._dir_license[folder] = Found(spdx, ", ".join(origins))
        return self._dir_license[folder]

    def _read(self, path: str) -> str | None:
        if self._read_text is not None:
            return self._read_text(path)
        entry = self.tree.entries().get(path, Entry("file"))
        if entry.size is not None and entry.size > MAX_LICENSE_BYTES:
            return None
        try:
            data = self.tree.read(path)
        except Exception:  # an unreadable licence file leaves its folder unknown
            return None
        return data[:MAX_LICENSE_BYTES].decode("utf-8", "replace")


def detect_license(root: Path) -> Found:
    """The licence the licence files directly in the folder `root` state (`unknown` if none)."""
    root = Path(root)
    names = sorted(p.name for p in root.iterdir() if p.is_file() and not p.is_symlink()
                   and is_license_file(p.name)) if root.is_dir() else []
    if not names:
        return Found(UNKNOWN, f"no licence file in {root}")
    tree = _Files(root, names)
    found = LicenseMap(tree).for_path("x")
    return Found(found.spdx, ", ".join(str(root / n) for n in names))


class _Files:
    """Named regular files of one folder as a `Tree`."""

    def __init__(self, root: Path, names: list[str]):
        self._root = root
        self._entries = {n: Entry("file", (root / n).stat().st_size) for n in names}

    def entries(self) -> Mapping[str, Entry]:
        return self._entries

    def read(self, path: str) -> bytes:
        with open(self._root / path, "rb") as fh:
            return fh.read(MAX_LICENSE_BYTES)
