"""Programs of several files: a folder and the nvcc command line that builds it.

`parse_nvcc_line` reads a build command as a shell and nvcc would (words split as a shell splits
them, globs expanded relative to the folder) into its sources and the flags a host build needs;
`load_project` reads the sources and, following their `#include`s, the folder's headers they
use into a `Program` of several files. Backends build every source as its own translation unit.
"""

from __future__ import annotations

import glob
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from schemas import Program

UNIT_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx")
HEADER_LIMIT = 2000
"""Local headers followed at most: a folder's include graph past this is not a program's."""
PROJECT_BYTES = 64 << 20
"""Text of all files together at most."""

# Options that take a value (as the next word when not glued with `=`), by what becomes of it.
_VALUE_KEPT = {"-I": "-I", "--include-path": "-I", "-isystem": "-I", "-D": "-D",
               "--define-macro": "-D", "-U": "-U", "--undefine-macro": "-U", "-l": "-l",
               "--library": "-l", "-std": "-std=", "--std": "-std="}
_VALUE_DROPPED = {"-o", "--output-file", "-gencode", "--generate-code", "-arch",
                  "--gpu-architecture", "-code", "--gpu-code", "-rdc",
                  "--relocatable-device-code", "-L", "--library-path", "-ccbin",
                  "--compiler-bindir", "-maxrregcount", "--maxrregcount", "-Xptxas",
                  "--ptxas-options", "-Xlinker", "--linker-options", "-Xnvlink", "-t",
                  "--threads", "-x", "--x", "-m", "--machine", "-ftz", "-prec-div",
                  "-prec-sqrt", "-fmad", "--ftz", "--prec-div", "--prec-sqrt", "--fmad"}
_EXACT_DROPPED = {"-dc", "--device-c", "-c", "--compile", "-lineinfo", "--generate-line-info",
                  "-g", "-G", "--extended-lambda", "--expt-extended-lambda",
                  "--expt-relaxed-constexpr", "-lcudart", "-lcuda", "-lnvToolsExt"}
_HOST_OPTION = {"-Xcompiler", "--compiler-options"}
# Why a dropped option is harmless on the host: said once per option in the build notes.
_WHY_DROPPED = {
    "-o": "the output's name is the backend's", "--output-file": "the output's name is the backend's",
    "-rdc": "every source is its own translation unit, linked once, as with -rdc=true",
    "--relocatable-device-code": "every source is its own translation unit, linked once",
    "-dc": "every source is its own translation unit, linked once, as with -rdc=true",
    "--extended-lambda": "host lambdas need no flag", "--expt-extended-lambda":
    "host lambdas need no flag", "--expt-relaxed-constexpr": "host constexpr needs no flag",
}
_SHELL_OPERATORS = {"&&", "||", ";", "|", "&", ">", ">>", "<", "2>", "2>&1"}
_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\r\n]+)[>"]', re.MULTILINE)


class ProjectError(ValueError):
    """A build command or folder that names no buildable program; the message says why."""


@dataclass
class NvccLine:
    sources: list[str]
    """Translation units, `/`-separated paths relative to the folder, in the command's order."""
    flags: list[str]
    """Flags for the build: `-I` relative to the folder, `-D`, `-U`, `-l`, `-std=`, `-O`, and
    every other option as written (the backend keeps or drops each with a note)."""
    notes: list[str] = field(default_factory=list)
    """One line per option dropped here, with the reason."""


def _relative(folder: Path, path: str, what: str) -> str:
    """`path` (relative to `folder`, or absolute inside it) as a `/`-separated relative path."""
    full = (folder / path).resolve()
    try:
        return full.relative_to(folder.resolve()).as_posix()
    except ValueError:
        raise ProjectError(f"{what} {path!r} is outside the program's folder {folder}") from None


def _expand(folder: Path, word: str) -> list[str]:
    """A word as a shell expands it in `folder`: a glob matching nothing stays as written."""
    if not glob.has_magic(word):
        return [word]
    found = sorted(glob.glob(word, root_dir=folder))
    return found or [word]


def parse_nvcc_line(line: str, folder: Path) -> NvccLine:
    """The sources and flags of one nvcc command run in `folder`."""
    try:
        words = shlex.split(line)
    except ValueError as exc:
        raise ProjectError(f"bad --nvcc {line!r}: {exc}") from None
    if words and Path(words[0]).name in ("nvcc", "nvc++", "clang++", "g++", "c++"):
        words = words[1:]
    joined = next((w for w in words if w in _SHELL_OPERATORS), None)
    if joined is not None:
        raise ProjectError(f"bad --nvcc {line!r}: {joined!r} joins several commands; give the "
                           "one nvcc command that builds the program")
    flags: list[str] = []
    notes: list[str] = []
    sources: list[str] = []
    dropped: set[str] = set()

    def drop(option: str, word: str) -> None:
        if option not in dropped:
            dropped.add(option)
            why = _WHY_DROPPED.get(option, "GPU code generation, not a host build's concern")
            notes.append(f"cudashim: nvcc option {word} dropped ({why})")

    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-"):
            for path in _expand(folder, word):
                sources.append(_source(folder, path, line))
            continue
        if word in _EXACT_DROPPED:
            drop(word, word)
            continue
        name, eq, glued = word.partition("=")
        option, kind = _option(word, name, eq, _VALUE_KEPT), "kept"
        if not option:
            option, kind = _option(word, name, eq, _VALUE_DROPPED), "dropped"
        if option:
            if eq:
                value = glued
            elif word != option:
                value = word[len(option):]
            elif i < len(words):
                value, i = words[i], i + 1
            else:
                raise ProjectError(f"bad --nvcc {line!r}: {word} needs a value")
            if kind == "dropped":
                drop(option, word)
                continue
            prefix = _VALUE_KEPT[option]
            if prefix == "-I":
                path = Path(value)
                inside = not path.is_absolute() or (folder.resolve() in path.resolve().parents
                                                    or path.resolve() == folder.resolve())
                value = _relative(folder, value, "include folder") if inside else value
            flags.append(prefix + value)
        elif word in _HOST_OPTION and i < len(words):
            flags.append(f"--compiler-options={words[i]}")
            i += 1
        else:
            flags.append(word)
    if not sources:
        raise ProjectError(f"bad --nvcc {line!r}: it names no source file (.cu, .cpp)")
    return NvccLine(sources, flags, notes)


def _option(word: str, name: str, eq: str, options: dict[str, str] | set[str]) -> str:
    """The value-taking option `word` starts with: `-I dir`, `-Idir`, `-std=c++17`, or ''."""
    for option in options:
        if name == option or (not eq and len(option) == 2 and word.startswith(option)):
            return option
    return ""


def _source(folder: Path, path: str, line: str | None) -> str:
    where = f" in --nvcc {line!r}" if line is not None else ""
    full = folder / path
    if not full.is_file():
        raise ProjectError(f"source {path!r}{where} not found in {folder}")
    if not path.endswith(UNIT_SUFFIXES):
        kind = "a C source" if path.endswith(".c") else "not a CUDA or C++ source"
        raise ProjectError(f"source {path!r}{where} is {kind} (expected "
                           f"{', '.join(UNIT_SUFFIXES)})")
    return _relative(folder, path, "source")


def source_paths(folder: Path, paths: list[str]) -> list[str]:
    """`--source` paths (relative to `folder` or absolute inside it), checked as nvcc's are."""
    if not paths:
        raise ProjectError("no source file given")
    return [_source(folder, p, None) for p in paths]


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="surrogateescape")


def load_project(folder: Path, sources: list[str], flags: list[str]) -> Program:
    """A program of the folder's `sources` (relative paths) and every header of the folder they
    include, directly or through other headers, found as the preprocessor finds them (a quoted
    name next to the including file first, then the `-I` folders in order)."""
    folder = folder.resolve()
    include_dirs = [folder / f[2:] for f in flags if f.startswith("-I")]
    files: dict[str, str] = {}
    total = 0
    pending = list(dict.fromkeys(sources))
    while pending:
        rel = pending.pop(0)
        if rel in files:
            continue
        path = folder / rel
        text = _read(path)
        total += len(text)
        if total > PROJECT_BYTES:
            raise ProjectError(f"the program's files in {folder} exceed "
                               f"{PROJECT_BYTES >> 20} MiB of text")
        files[rel] = text
        if len(files) > len(sources) + HEADER_LIMIT:
            raise ProjectError(f"the sources in {folder} include over {HEADER_LIMIT} local headers")
        for quote, name in _INCLUDE.findall(text.encode("utf-8", "surrogateescape")):
            found = _find_header(name.decode("utf-8", "surrogateescape").strip(),
                                 path.parent if quote == b'"' else None, include_dirs, folder)
            if found is not None and found not in files:
                pending.append(found)
    units = list(dict.fromkeys(sources))
    first = units[0]
    name = PurePosixPath(first).name
    return Program(source=files[first], filename=name if re.fullmatch(
        r"[A-Za-z0-9_.-]+\.(cu|cpp|cc)", name) else "main.cu", extra_flags=list(flags),
        files=files, units=units)


def _find_header(name: str, beside: Path | None, include_dirs: list[Path],
                 folder: Path) -> str | None:
    """The folder-relative path the preprocessor would open for `name`, when it is in the
    folder; None for a system header or one outside the folder (built from where it is)."""
    for d in ([beside] if beside is not None else []) + include_dirs:
        candidate = (d / name).resolve()
        if candidate.is_file():
            try:
                return candidate.relative_to(folder).as_posix()
            except ValueError:
                return None
    return None
