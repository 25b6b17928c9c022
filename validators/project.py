"""Programs of several files: a folder and the nvcc command line that builds it.

`parse_nvcc_line` reads a build command as a shell and nvcc would (words split as a shell splits
them, globs expanded relative to the folder) into its sources and the flags a host build needs;
`load_project` reads the sources and, following their `#include`s, the folder's headers they
use into a `Program` of several files. Backends build every source as its own translation unit.
"""

from __future__ import annotations

import codecs
import glob
import os
import posixpath
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from schemas import Program

UNIT_SUFFIXES = (".cu", ".cpp", ".cc", ".cxx", ".c")
"""`.c` units are C, built by the host C compiler, as nvcc hands them to it."""
HEADER_LIMIT = 2000
"""Local headers followed at most: a folder's include graph past this is not a program's."""
PROJECT_BYTES = 64 << 20
"""Text of all files together at most."""

# Options that take a value (as the next word when not glued with `=`), by what becomes of it.
# Every nvcc option of that shape must be here: otherwise its value is read as a source file
# (`--default-stream per-thread` named a source 'per-thread'). From `nvcc --help` (CUDA 13).
_VALUE_KEPT = {"-I": "-I", "--include-path": "-I", "-isystem": "-I", "--system-include": "-I",
               "-D": "-D", "--define-macro": "-D", "-U": "-U", "--undefine-macro": "-U",
               "-l": "-l", "--library": "-l", "-std": "-std=", "--std": "-std=",
               "--optimize": "-O"}
_VALUE_DROPPED = {"-o", "--output-file", "-gencode", "--generate-code", "-arch",
                  "--gpu-architecture", "-code", "--gpu-code", "-rdc",
                  "--relocatable-device-code", "-L", "--library-path", "-ccbin",
                  "--compiler-bindir", "-maxrregcount", "--maxrregcount", "-Xptxas",
                  "--ptxas-options", "-Xlinker", "--linker-options", "-Xnvlink",
                  "--nvlink-options", "-Xarchive", "--archive-options", "-t", "--threads",
                  "-x", "--x", "-m", "--machine", "-ftz", "-prec-div", "-prec-sqrt", "-fmad",
                  "--ftz", "--prec-div", "--prec-sqrt", "--fmad", "-default-stream",
                  "--default-stream", "-cudart", "--cudart", "-cudadevrt", "--cudadevrt",
                  "-odir", "--output-directory", "-arbin", "--archiver-binary", "-ldir",
                  "--libdevice-directory", "-target-dir", "--target-directory", "-opt-info",
                  "--optimization-info", "-dopt", "--dopt", "-split-compile", "--split-compile",
                  "-split-compile-extended", "--split-compile-extended", "-keep-dir",
                  "--keep-dir", "-time", "--time", "-fdevice-time-trace", "--fdevice-time-trace",
                  "-MF", "--dependency-output", "-MT", "--dependency-target-name",
                  "-diag-suppress", "--diag-suppress", "-diag-warn", "--diag-warn",
                  "-diag-error", "--diag-error", "-static-global-template-stub",
                  "--static-global-template-stub", "-device-entity-has-hidden-visibility",
                  "--device-entity-has-hidden-visibility", "-brief-diag", "--brief-diagnostics",
                  "-device-stack-protector", "--device-stack-protector", "-compress-mode",
                  "--compress-mode", "-hls", "--host-linker-script", "-jtd",
                  "--jump-table-density", "-ftemplate-backtrace-limit",
                  "--ftemplate-backtrace-limit", "-ftemplate-depth", "--ftemplate-depth",
                  "-frandom-seed", "--frandom-seed", "-idp", "--input-drive-prefix", "-ddp",
                  "--dependency-drive-prefix", "-dp", "--drive-prefix", "-run-args",
                  "--run-args", "--entries"}
_EXACT_DROPPED = {"-dc", "--device-c", "-c", "--compile", "-lineinfo", "--generate-line-info",
                  "-g", "-G", "--debug", "--device-debug", "--extended-lambda",
                  "-extended-lambda", "--expt-extended-lambda", "-expt-extended-lambda",
                  "--expt-relaxed-constexpr", "-expt-relaxed-constexpr", "-lcudart", "-lcuda",
                  "-lnvToolsExt", "--resource-usage", "-res-usage", "-Wno-deprecated-gpu-targets",
                  "-use_fast_math", "--use_fast_math", "-extra-device-vectorization",
                  "--extra-device-vectorization", "-restrict", "--restrict", "-keep", "--keep",
                  "-save-temps", "--save-temps", "-allow-unsupported-compiler",
                  "--allow-unsupported-compiler", "-dlto", "--dlink-time-opt", "-lto", "--lto",
                  "-src-in-ptx", "--source-in-ptx", "-keep-device-functions",
                  "--keep-device-functions", "-v", "--verbose", "-dryrun", "--dryrun",
                  "-nodlink", "--no-device-link", "-noprof", "--dont-use-profile",
                  "-err-no", "--display-error-number", "-no-err-no",
                  "--no-display-error-number", "-forward-unknown-to-host-compiler",
                  "--forward-unknown-to-host-compiler", "-forward-unknown-to-host-linker",
                  "--forward-unknown-to-host-linker", "-forward-unknown-opts",
                  "--forward-unknown-opts"}
# Options whose value is a file of further options or a file nvcc reads: not followed here.
_UNREAD_FILE = {"-optf", "--options-file"}
_HOST_OPTION = {"-Xcompiler", "--compiler-options"}
# Why a dropped option is harmless on the host: said once per option in the build notes.
_WHY_DROPPED = {
    "-o": "the output's name is the backend's", "--output-file": "the output's name is the backend's",
    "-rdc": "every source is its own translation unit, linked once, as with -rdc=true",
    "--relocatable-device-code": "every source is its own translation unit, linked once",
    "-dc": "every source is its own translation unit, linked once, as with -rdc=true",
    "--extended-lambda": "host lambdas need no flag", "--expt-extended-lambda":
    "host lambdas need no flag", "--expt-relaxed-constexpr": "host constexpr needs no flag",
    "-extended-lambda": "host lambdas need no flag", "-expt-extended-lambda":
    "host lambdas need no flag", "-expt-relaxed-constexpr": "host constexpr needs no flag",
    "-default-stream": "the CPU shim has one default-stream behaviour for every setting",
    "--default-stream": "the CPU shim has one default-stream behaviour for every setting",
    "-g": "a debug build is not a host build's concern", "-G": "device debug information",
    "-diag-suppress": "nvcc's own diagnostics", "--diag-suppress": "nvcc's own diagnostics",
    "-diag-warn": "nvcc's own diagnostics", "--diag-warn": "nvcc's own diagnostics",
    "-diag-error": "nvcc's own diagnostics", "--diag-error": "nvcc's own diagnostics",
    "-v": "nvcc's own output", "--verbose": "nvcc's own output",
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
        if name in _UNREAD_FILE:
            raise ProjectError(f"bad --nvcc {line!r}: {name} names a file of options, which is "
                               "not read here; write its options in --nvcc")
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
                kept = _include_folder(folder, value, notes)
                if kept is None:
                    continue
                value = kept
            flags.append(prefix + value)
        elif word in _HOST_OPTION and i < len(words):
            flags.append(f"--compiler-options={words[i]}")
            i += 1
        else:
            flags.append(word)
    if not sources:
        raise ProjectError(f"bad --nvcc {line!r}: it names no source file (.cu, .cpp)")
    return NvccLine(sources, flags, notes)


def _include_folder(folder: Path, value: str, notes: list[str]) -> str | None:
    """An `-I` folder as the build passes it: relative to `folder` when inside it (the build
    finds the folder's rewritten headers there), absolute when outside it, however it was
    written (`-I../include` names the same folder as `-I/abs/include`, and both are exposed
    read-only to the build); None, with a note, for a folder that does not exist, which nvcc
    and g++ skip (a Makefile's `-I/opt/...` of another machine must not fail the build)."""
    full = (folder / value).resolve()
    if not full.is_dir():
        notes.append(f"cudashim: -I {value} dropped: no such folder (nvcc and g++ skip an "
                     "include folder that does not exist)")
        return None
    try:
        return full.relative_to(folder.resolve()).as_posix()
    except ValueError:
        return str(full)


def _option(word: str, name: str, eq: str, options: dict[str, str] | set[str]) -> str:
    """The value-taking option `word` starts with: `-I dir`, `-Idir`, `-std=c++17`, or ''."""
    # An exact name first: `-odir DIR` is nvcc's -odir, not -o with the glued value 'dir'.
    if name in options:
        return name
    for option in options:
        if name == option or (not eq and len(option) == 2 and word.startswith(option)):
            return option
    return ""


def _source(folder: Path, path: str, line: str | None) -> str:
    """A translation unit's path relative to `folder`. On an nvcc line (`line` given) a unit
    outside the folder (`../x-sycl/src/a.cpp`, as HeCBench's Makefiles share sources between
    programs) is nvcc's to build: it stays relative, with `..`, and `load_project` lays the
    program out from a folder holding both. `--source` paths (no `line`) must be inside."""
    where = f" in --nvcc {line!r}" if line is not None else ""
    full = folder / path
    if not full.is_file():
        raise ProjectError(f"source {path!r}{where} not found in {folder}")
    if not path.endswith(UNIT_SUFFIXES):
        kind = "not a CUDA, C++ or C source"
        raise ProjectError(f"source {path!r}{where} is {kind} (expected "
                           f"{', '.join(UNIT_SUFFIXES)})")
    if line is not None and not _inside(full.resolve(), folder.resolve()):
        return Path(os.path.relpath(full.resolve(), folder.resolve())).as_posix()
    try:
        return _relative(folder, path, "source")
    except ProjectError as exc:
        raise ProjectError(f"{exc}: give --dir a folder that holds every source (a common "
                           "parent), or name the sources in --nvcc") from None


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def source_paths(folder: Path, paths: list[str]) -> list[str]:
    """`--source` paths (relative to `folder` or absolute inside it), checked as nvcc's are."""
    if not paths:
        raise ProjectError("no source file given")
    return [_source(folder, p, None) for p in paths]


def _latin1_byte(exc: UnicodeError) -> tuple[str, int]:
    assert isinstance(exc, UnicodeDecodeError)
    return exc.object[exc.start:exc.end].decode("latin-1"), exc.end


codecs.register_error("validators.latin1", _latin1_byte)


def read_source(path: Path) -> str:
    """A source or header's text. A byte that is not UTF-8 (a Latin-1 `©` in a comment, as in
    HeCBench's eigenvalue or SDKBitMap.h) is read as the Latin-1 character it is: nvcc does
    not care, and `Program` holds valid Unicode only (pydantic refuses the lone surrogates of
    `surrogateescape`, and the cpu backend writes files back as UTF-8). Only such a byte in a
    string literal changes: it is written back as that character's UTF-8."""
    return path.read_bytes().decode("utf-8", errors="validators.latin1")


def _root(folder: Path, sources: list[str]) -> Path:
    """The folder the program's files are laid out from: `folder`, or, when a unit lies outside
    it, the nearest folder holding `folder` and every unit (the build keeps their relative
    places, so a unit's `#include "x.h"` and `../` paths between them resolve as for nvcc)."""
    outside = [p for p in ((folder / s).resolve() for s in sources) if not _inside(p, folder)]
    if not outside:
        return folder
    root = Path(os.path.commonpath([folder, *outside]))
    if root == root.parent:
        raise ProjectError(f"sources {', '.join(map(str, outside))} share no folder with "
                           f"{folder} but /: give --dir a common parent of every source")
    return root


def load_project(folder: Path, sources: list[str], flags: list[str]) -> Program:
    """A program of the folder's `sources` (relative paths) and every header of the folder they
    include, directly or through other headers, found as the preprocessor finds them (a quoted
    name next to the including file first, then the `-I` folders in order)."""
    folder = folder.resolve()
    root = _root(folder, sources)
    if root != folder:
        # Paths from `root`: the units, and the -I folders given relative to `folder`.
        base = folder.relative_to(root).as_posix()
        sources = [(folder / s).resolve().relative_to(root).as_posix() for s in sources]
        flags = [f"{opt}{posixpath.normpath(base + '/' + f[len(opt):])}"
                 if (opt := _include_option(f)) and not Path(f[len(opt):]).is_absolute() else f
                 for f in flags]
    include_dirs = [root / f[2:] for f in flags if f.startswith("-I")]
    # -iquote folders: searched for `#include "..."` only, before the -I folders.
    quote_dirs = [root / f[7:] for f in flags if f.startswith("-iquote")] + include_dirs
    files: dict[str, str] = {}
    total = 0
    pending = list(dict.fromkeys(sources))
    while pending:
        rel = pending.pop(0)
        if rel in files:
            continue
        path = root / rel
        text = read_source(path)
        total += len(text)
        if total > PROJECT_BYTES:
            raise ProjectError(f"the program's files in {folder} exceed "
                               f"{PROJECT_BYTES >> 20} MiB of text")
        files[rel] = text
        if len(files) > len(sources) + HEADER_LIMIT:
            raise ProjectError(f"the sources in {folder} include over {HEADER_LIMIT} local headers")
        for quote, name in _INCLUDE.findall(text.encode("utf-8")):
            quoted = quote == b'"'
            found = _find_header(name.decode("utf-8").strip(), path.parent if quoted else None,
                                 quote_dirs if quoted else include_dirs, root)
            if found is not None and found not in files:
                pending.append(found)
    units = list(dict.fromkeys(sources))
    first = units[0]
    name = PurePosixPath(first).name
    return Program(source=files[first], filename=name if re.fullmatch(
        r"[A-Za-z0-9_.-]+\.(cu|cpp|cc)", name) else "main.cu", extra_flags=list(flags),
        files=files, units=units)


def _include_option(flag: str) -> str:
    """`-I` or `-iquote` when `flag` names an include folder with it (glued), else ''."""
    return next((o for o in ("-iquote", "-I") if flag.startswith(o) and len(flag) > len(o)), "")


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


def exposed_include_dirs(program: Program, folder: Path) -> tuple[list[Path], list[str]]:
    """The folders the sandboxed build may read for `program`: `folder` and every absolute `-I`
    folder outside it (the operator named them: `--nvcc`'s `-I`, relative or absolute, or
    `-X -I...`), read-only; and a note for each absolute `-I` folder that does not exist, which
    is taken out of the program's flags (nvcc and g++ skip it, but the sandbox cannot expose
    it: a Makefile's `-I/opt/nvidia/...` of another machine failed the sandbox's set-up)."""
    dirs: list[Path] = [folder]
    notes: list[str] = []
    flags: list[str] = []
    for f in program.extra_flags:
        path = Path(f[len(opt):]) if (opt := _include_option(f)) else None
        if path is not None and path.is_absolute():
            if not path.is_dir():
                notes.append(f"cudashim: {opt} {path} dropped: no such folder (nvcc and g++ skip an "
                             "include folder that does not exist)")
                continue
            if path != folder and path not in dirs:
                dirs.append(path)
        flags.append(f)
    if len(flags) != len(program.extra_flags):
        program.extra_flags = flags
    return dirs, notes
