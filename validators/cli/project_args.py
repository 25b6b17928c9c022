"""The options that name a program of several files (`--dir`, `--nvcc`, `--source`), shared by
`validators run` and `validators check`, and the program they give."""

from __future__ import annotations

import argparse
from pathlib import Path

from schemas import Program


def add_project_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--dir", metavar="DIR",
                   help="a program of several files: its folder (sources, headers and relative "
                        "-I resolve in it; default: the first --source's folder)")
    p.add_argument("--nvcc", metavar="COMMAND",
                   help="the nvcc command that builds the program, run in --dir, e.g. "
                        "\"nvcc -I include -o test.out solution.cu test/*.cu\": its sources "
                        "(globs expanded as a shell would) are built as translation units")
    p.add_argument("--source", action="append", default=[], dest="sources", metavar="PATH",
                   help="a translation unit of a program of several files (repeatable; "
                        "relative to --dir)")


def check_folder_readable(folder: Path) -> None:
    """The program's folder is bound into the build sandbox as an include directory; where the
    sandbox runs the compiler as a fresh unprivileged uid, a folder closed to other users (e.g.
    a 0700 temporary directory) would fail the build with an unexplained `Permission denied`."""
    from validators.sandbox import sandbox_mode

    mode = folder.stat().st_mode & 0o777
    if mode & 0o005 != 0o005 and sandbox_mode() == "namespaces+uid":
        raise ValueError(f"the program's folder {folder} is not readable by other users (mode "
                         f"{mode:o}); the sandbox builds as an unprivileged user: chmod o+rx it "
                         "or copy the program elsewhere")


def project_program(args: argparse.Namespace) -> tuple[Program, Path, list[str]]:
    """The program of several files --dir/--nvcc/--source name, its folder and the notes on
    the nvcc options dropped."""
    from validators.project import load_project, parse_nvcc_line, source_paths

    if args.nvcc is not None and args.sources:
        raise ValueError("give either --nvcc or --source, not both")
    if args.dir is not None:
        folder = Path(args.dir)
    elif args.sources:
        folder = Path(args.sources[0]).parent
    else:
        folder = Path(".")
    if not folder.is_dir():
        raise ValueError(f"program folder not found: {folder}")
    folder = folder.resolve()
    if args.nvcc is not None:
        line = parse_nvcc_line(args.nvcc, folder)
        sources, flags, notes = line.sources, line.flags, line.notes
    else:
        # Without --dir, each --source is a path from here, inside the first one's folder.
        given = args.sources if args.dir is not None else [
            str(Path(s).resolve()) for s in args.sources]
        sources, flags, notes = source_paths(folder, given), [], []
    # A relative -I of -X is from --dir, else from here, as the sources are.
    base = folder if args.dir is not None else Path.cwd()
    extra = [_include_from(f, base, folder) for f in args.flags]
    # nvcc searches a source's own folder for `#include "..."` only, never for <...>: the folder
    # is on the quoted path alone (a program's own unistd.h or time.h must not stand for the
    # system's, in its includes or in libstdc++'s), after the program's own -I folders. `.` is
    # the folder as laid out for the build (its rewritten headers); the folder itself follows,
    # for a header nothing followed (a computed `#include MACRO`).
    program = load_project(folder, sources, [*flags, *extra, "-iquote.", f"-iquote{folder}"])
    return program, folder, notes


def _include_from(flag: str, base: Path, folder: Path) -> str:
    """`-Ipath` with the path from `base`, relative to `folder` when inside it (the build finds
    the rewritten headers there), absolute otherwise."""
    if not flag.startswith("-I") or len(flag) == 2:
        return flag
    full = (base / flag[2:]).resolve()
    try:
        return "-I" + full.relative_to(folder).as_posix()
    except ValueError:
        return f"-I{full}"
