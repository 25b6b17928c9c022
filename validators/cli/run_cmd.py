"""`python -m validators run PROG.cu [-- ARGS...]`: build and run one standalone program.

A program of several files: `--dir DIR --nvcc "nvcc -I include -o t solution.cu test/*.cu"`
(the sources and flags of its build command, globs expanded in DIR) or `--source PATH` repeated;
every source is a translation unit (cpu backend; `validators/project.py`). As for nvcc run in
DIR: `-I` folders and `--nvcc` sources outside DIR are used from where they are (read-only),
an `-I` folder that does not exist is dropped with a build note, and sources that are not UTF-8
are read with those bytes as Latin-1.

For programs such as HeCBench's: the program's folder is on the include path, extra compiler
flags from its Makefile go in with `--flag`/`-X` (repeatable; host flags such as `-fopenmp`
or `-Xcompiler -fopenmp` reach g++ on the cpu backend), `-D NAME=VALUE` defines a macro,
`--with-dir` copies the program's folder into the run directory (for programs that read their
own data files), `--file` copies single files (one named as a file of the folder copy replaces
it, with a note), `--cwd SUBDIR` starts the program in that folder of the copy (relative to
--dir: `--cwd app` runs it as `cd app && ./a.out`, for programs that open `../data/...`),
`--keep-outputs DIR` copies back the files the program wrote. `--variant` (cpu: `plain`,
`asan` or `race`) and `--schedule` (cpu: `forward|reverse|random:SEED`) pick one of the
backend's builds and thread orders; `--thorough` runs every build and schedule a thorough check uses (cpu: ASan and plain forward and reverse,
the race build, memory poisoned differently per build) and passes only if every run passes
(`runs` in `--json`; it stops at the first that does not);
`--no-lockstep` (cpu) runs kernels one thread at a time instead of in warp lockstep. Limits:
`--timeout` (wall clock), `--cpu-time` (default: the timeout times the cores the run may use),
`--memory` (address space and resident memory; default 16 GiB address space). Reports exit
status, output and timings, with the run's own split (start-up, host code, kernels, copies,
exit; `timing` in `--json`) where the runtime reports it. Exit code: 0 when the run was clean, 1 otherwise, 2 bad input or
unusable backend.
"""

from __future__ import annotations

import argparse
import json
import os
import posixpath
import re
from pathlib import Path

from schemas import Status
from validators.backends import BACKEND_NAMES, Backend
from validators.caps import CapExceeded
from validators.cli.errors import fail, internal_error
from validators.cli.project_args import add_project_options, check_folder_readable, project_program
from validators.safe_fs import UnsafePath

OUTPUT_SHOWN = 4000
DEFAULT_ADDRESS_SPACE = 16 << 30
"""Address-space cap of a run: well above what a program that allocates a few GiB maps."""
_SCHEDULE = re.compile(r"^(forward|reverse|random:\d+)$")
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)(?:i?B)?$", re.IGNORECASE)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="build and run a standalone CUDA program in the sandbox",
        description="Build a standalone program (e.g. a HeCBench main.cu) and run it once in "
                    "the sandbox; arguments after -- go to the program.",
    )
    p.add_argument("program", nargs="?",
                   help="the program's main source file (.cu / .cpp); none with --nvcc or "
                        "--source")
    _add_options(p)
    p.add_argument("args", nargs=argparse.REMAINDER, help="-- then the program's arguments")


def _add_options(p: argparse.ArgumentParser) -> None:
    add_project_options(p)
    p.add_argument("--backend", default="auto", choices=BACKEND_NAMES)
    p.add_argument("--timeout", type=float, default=60.0, help="wall-clock seconds for the run")
    p.add_argument("--arch", help="GPU architecture for the cuda backend (default sm_90)")
    p.add_argument("--flag", "-X", action="append", default=[], dest="flags",
                   help="extra compiler flag (repeatable), e.g. -X=-std=c++17")
    p.add_argument("-D", action="append", default=[], dest="defines", metavar="NAME=VALUE")
    p.add_argument("--with-dir", action="store_true",
                   help="copy the program's folder into the run directory")
    p.add_argument("--file", action="append", default=[], dest="files",
                   help="copy this file into the run directory (repeatable); it replaces a "
                        "file of the same name that --with-dir copies, with a note")
    p.add_argument("--cwd", metavar="SUBDIR",
                   help="with --with-dir: start the program in this folder of the run directory "
                        "(relative to --dir, inside it), as `cd SUBDIR && ./a.out` runs it; "
                        "default: the run directory itself")
    p.add_argument("--expect", metavar="TEXT",
                   help="the run passes only if stdout contains TEXT (e.g. PASS for HeCBench)")
    p.add_argument("--variant", default="plain",
                   help="build variant (cpu: plain, asan or race, the lost-update detector; "
                        "cuda: plain or a compute-sanitizer tool)")
    p.add_argument("--schedule", default="forward",
                   help="thread order on the cpu backend: forward, reverse or random:SEED")
    p.add_argument("--thorough", action="store_true",
                   help="run under every checking build and schedule a thorough check uses (cpu: "
                        "ASan, plain and race builds, both schedules, poisoned memory); passes only "
                        "if every run passes")
    p.add_argument("--no-lockstep", action="store_true",
                   help="cpu: run every kernel one thread at a time, without the warp-lockstep "
                        "copies of kernels with uniform loops")
    p.add_argument("--cpu-time", metavar="SECONDS",
                   help="CPU seconds for the run, all threads together, or 'none' (default: "
                        "--timeout times the cores the run may use)")
    p.add_argument("--memory", metavar="SIZE",
                   help="address space and resident memory of the run, e.g. 8G, or 'none' "
                        "(default: 16G of address space)")
    p.add_argument("--keep-outputs", metavar="DIR",
                   help="copy the files the program wrote in its run directory into DIR")
    p.add_argument("--json", action="store_true", help="print a JSON report")


def _split_remainder(args: argparse.Namespace) -> list[str]:
    """Options written after PROG land in the remainder: parse those before `--` here."""
    rest = list(args.args)
    cut = rest.index("--") if "--" in rest else len(rest)
    before, after = rest[:cut], rest[cut + 1:]
    if before:
        opts = argparse.ArgumentParser(prog="python -m validators run PROG", add_help=False)
        _add_options(opts)
        for action in opts._actions:  # keep what was parsed before PROG unless repeated
            if isinstance(action.default, list):
                action.default = list(getattr(args, action.dest))
            elif action.dest in vars(args):
                action.default = getattr(args, action.dest)
        opts.parse_args(before, namespace=args)
    return after


def _defines(items: list[str]) -> dict[str, int | str]:
    out: dict[str, int | str] = {}
    for item in items:
        name, _, value = item.partition("=")
        if not name.isidentifier():
            raise ValueError(f"bad -D {item!r}: expected NAME=VALUE")
        out[name] = value or "1"
    return out


def _size(text: str) -> int | None:
    """Bytes of `--memory` ('8G', '512M', '1073741824', 'none')."""
    if text.lower() == "none":
        return None
    m = _SIZE.match(text.strip())
    if not m:
        raise ValueError(f"bad --memory {text!r}: expected a size such as 8G, 512M or none")
    scale = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}[m.group(2).upper()]
    size = int(float(m.group(1)) * scale)
    if size <= 0:
        raise ValueError(f"bad --memory {text!r}: must be more than 0 bytes")
    return size


def _cpu_seconds(text: str | None, timeout: float) -> float | None:
    if text is None:
        return timeout * max(1, len(os.sched_getaffinity(0)))
    if text.lower() == "none":
        return None
    try:
        seconds = float(text)
    except ValueError:
        raise ValueError(f"bad --cpu-time {text!r}: expected seconds or none") from None
    if seconds <= 0:
        raise ValueError(f"bad --cpu-time {text!r}: must be more than 0 seconds")
    return seconds


def _limits(args: argparse.Namespace) -> dict[str, object]:
    """Sandbox limit overrides from --timeout, --cpu-time and --memory."""
    if args.timeout <= 0:
        raise ValueError(f"bad --timeout {args.timeout}: must be more than 0 seconds")
    out: dict[str, object] = {
        "wall_seconds": args.timeout,
        "cpu_seconds": _cpu_seconds(args.cpu_time, args.timeout),
        "memory_bytes": DEFAULT_ADDRESS_SPACE,
    }
    if args.memory is not None:
        out["memory_bytes"] = out["rss_bytes"] = _size(args.memory)
    return out


def _check_variant_and_schedule(args: argparse.Namespace, backend: Backend) -> None:
    variants = {"plain", *backend.variants(thorough=True)}
    if args.variant not in variants:
        raise ValueError(f"bad --variant {args.variant!r}: the {backend.name} backend builds "
                         f"{', '.join(sorted(variants))}")
    if not _SCHEDULE.match(args.schedule):
        raise ValueError(f"bad --schedule {args.schedule!r}: expected forward, reverse or "
                         "random:SEED")




def _start_folder(args: argparse.Namespace, folder: Path) -> str | None:
    """--cwd as `run_program` takes it (None: the run directory): a folder of `folder` that
    --with-dir copies, named relative to it without leaving it."""
    if args.cwd is None:
        return None
    rel = posixpath.normpath(args.cwd.replace(os.sep, "/")) if args.cwd else ""
    if not rel or rel.startswith("/") or rel == ".." or rel.startswith("../"):
        raise ValueError(f"bad --cwd {args.cwd!r}: give a folder inside the program's folder "
                         f"{folder}, relative to it (no absolute path, no '..' out of it)")
    if rel == ".":
        return None
    if not args.with_dir:
        raise ValueError(f"--cwd {args.cwd!r} needs --with-dir: the run directory has the "
                         "program's folders only as --with-dir copies them")
    full = folder / rel
    if not full.is_dir():
        raise ValueError(f"bad --cwd {args.cwd!r}: there is no folder {rel} in the program's "
                         f"folder {folder}")
    if full.resolve() != folder.resolve() / rel:
        raise ValueError(f"bad --cwd {args.cwd!r}: {full} is reached through a link, which "
                         "--with-dir does not copy into the run directory")
    return rel


def _run_dir_entries(folder: Path | None, files: list[Path]) -> tuple[list[Path], list[str]]:
    """What is copied into the run directory: the entries of `folder` (--with-dir; None
    without it) and the --file `files`, each at its own name, and a note for each --file that
    replaces a file of the folder copy. A --file is the operator's choice of that one file
    while --with-dir copies the folder wholesale, so the named file wins (the folder's other
    files with it, as `cp -r DIR/. run/ && cp FILE run/` leaves them); a --file in place of a
    folder of the copy, or two --file of one name, are refused, naming both."""
    named: dict[str, Path] = {}
    for f in files:
        first = named.setdefault(f.name, f)
        if first.resolve() != f.resolve():
            raise ValueError(f"--file {first} and --file {f} would both be copied into the run "
                             f"directory as {f.name!r}: give one of them")
    entries: list[Path] = []
    notes: list[str] = []
    for entry in sorted(folder.iterdir()) if folder is not None else []:
        f = named.get(entry.name)
        if f is None:
            entries.append(entry)
        elif f.resolve() == entry.resolve():
            continue  # the folder's own file, named again: copied once
        elif entry.is_dir() and not entry.is_symlink():
            raise ValueError(f"--file {f} would take the place of the folder {entry} that "
                             f"--with-dir copies as {entry.name!r}: give the file another name")
        else:
            notes.append(f"--file {f} replaces {entry.name!r} of the --with-dir copy of "
                         f"{folder} in the run directory")
    return [*entries, *named.values()], notes


def _build_notes(diagnostics: str) -> list[str]:
    """What the backend changed about the build (flags replaced or not passed to the compiler)."""
    return [line for line in diagnostics.splitlines() if line.startswith("cudashim: ")]






def main(args: argparse.Namespace) -> int:
    try:
        prog_args = _split_remainder(args)
    except SystemExit:
        return 2
    if args.nvcc is not None or args.sources:
        if args.program is not None:
            return fail(f"{args.program!r}: with --nvcc or --source the program's files come "
                        "from them (its arguments go after --)")
        return _run(args, prog_args, None)
    if args.dir is not None:
        return fail("--dir needs --nvcc COMMAND or --source PATH")
    if args.program is None:
        return fail("no program: give PROG.cu, --nvcc COMMAND or --source PATH")
    prog_path = Path(args.program)
    if not prog_path.is_file():
        return fail(f"program file not found: {args.program}")
    return _run(args, prog_args, prog_path)




def _run(args: argparse.Namespace, prog_args: list[str], prog_path: Path | None) -> int:
    """Build and run the program: `prog_path`'s file, or with None the several files --nvcc or
    --source name."""
    from validators.backends import BackendUnavailable, get_backend
    from validators.cli.check_cmd import load_program
    from validators.engine import DEFAULT_LIMITS, RunDirError, run_program, thorough_plan
    from validators.project import ProjectError, exposed_include_dirs
    from validators.run_outputs import check_destination
    from validators.sandbox import SandboxError

    missing = [f for f in args.files if not Path(f).is_file()]
    if missing:
        return fail(f"file not found: {missing[0]}")
    nvcc_notes: list[str] = []
    if args.arch:
        os.environ["CKD_CUDA_ARCH"] = args.arch
    keep = Path(args.keep_outputs) if args.keep_outputs else None
    try:
        defines = _defines(args.defines)
        limits = DEFAULT_LIMITS.with_overrides(_limits(args))
        if keep is not None:
            check_destination(keep)
        if prog_path is not None:
            folder = prog_path.resolve().parent
            # nvcc searches a source's own folder for `#include "..."` only: on the cpu backend
            # -iquote says so, and the folder's own unistd.h does not shadow the system's <...>
            # (nvcc itself takes no -iquote, so the cuda backend keeps -I).
            chosen = get_backend(args.backend)
            own = "-iquote" if chosen.name == "cpu" else "-I"
            program = load_program(str(prog_path), extra_flags=[f"{own}{folder}", *args.flags])
        else:
            program, folder, nvcc_notes = project_program(args)
        check_folder_readable(folder)
        # The program's folder (and any folder outside it its -I flags name) is on the include
        # path by the operator's choice (this command), so the sandboxed compiler may read it;
        # an -I folder that does not exist is dropped with a note, as nvcc and g++ skip it.
        exposed, missing = exposed_include_dirs(program, folder)
        nvcc_notes += missing
        backend = (chosen if prog_path is not None else get_backend(args.backend)).with_include_dirs(exposed)
        if program.units and backend.name != "cpu":
            raise ValueError(f"a program of several files builds on the cpu backend only (not "
                             f"yet on {backend.name})")
        _check_variant_and_schedule(args, backend)
        if args.thorough and (args.variant != "plain" or args.schedule != "forward"):
            raise ValueError("give --thorough or --variant/--schedule, not both (--thorough runs "
                             "every build and schedule)")
        if args.no_lockstep:
            if not hasattr(backend, "lockstep"):
                raise ValueError(f"--no-lockstep: the {backend.name} backend has no lockstep copies")
            backend.lockstep = False
        start = _start_folder(args, folder)
        files, run_dir_notes = _run_dir_entries(folder if args.with_dir else None,
                                                [Path(f) for f in args.files])
    except (BackendUnavailable, SandboxError) as exc:
        return fail(str(exc))
    except ProjectError as exc:
        return fail(str(exc))
    except (OSError, ValueError) as exc:
        return fail(str(exc).splitlines()[0])
    plan = thorough_plan(backend) if args.thorough else [(args.variant, args.schedule, None)]
    runs: list[dict[str, object]] = []
    said: list[str] = []
    run = None
    try:
        for n, (variant, schedule, poison) in enumerate(plan):
            one = run_program(program, backend, prog_args, limits=limits, workdir_files=files,
                              defines=defines, variant=variant,  # type: ignore[arg-type]
                              schedule=schedule, keep_outputs=keep if n == len(plan) - 1 else None,
                              extra_env=backend.poison_env(poison) if poison is not None else None,
                              cwd=start)
            fallback = backend.fallback_variant(variant)
            out_of_time = one.outcome is not None and (
                one.outcome.timed_out or one.outcome.limit_hit in ("cpu", "memory"))
            # As a check does: a checking build that alone runs out of time (the race detector
            # records every write) after the build it stands in for ran is replaced by it.
            ran_before = fallback in {v for v, _, _ in plan[:n]}
            if (len(plan) > 1 and fallback is not None and fallback != variant
                    and out_of_time and ran_before):
                stopped = one.reason
                one = run_program(program, backend, prog_args, limits=limits, workdir_files=files,
                                  defines=defines, variant=fallback,  # type: ignore[arg-type]
                                  schedule=schedule, keep_outputs=keep if n == len(plan) - 1 else None,
                                  cwd=start)
                one.notes.insert(0, f"the {variant} build's {schedule} run stopped ({stopped}); "
                                    f"the {fallback} build's run judged it instead")
                variant = fallback
            if (args.expect and one.status == Status.PASSED and one.outcome is not None
                    and args.expect not in one.outcome.stdout):
                one.status, one.reason = Status.FAILED, f"stdout does not contain {args.expect!r}"
            runs.append({"variant": variant, "schedule": schedule, "status": one.status.value,
                         "reason": one.reason})
            if run is None or (run.status == Status.PASSED and one.status != Status.PASSED):
                run = one  # the first run that did not pass decides, or the last
                if one.status != Status.PASSED and len(plan) > 1:
                    run.reason = f"{one.reason} [{variant}/{schedule}]".strip()
            elif run.status == Status.PASSED:
                run = one
            # Every run's notes: the run reported may be a later one than the run that said them.
            said += [note for note in one.notes if note not in said]
            if one.status != Status.PASSED:
                break  # decided: the remaining builds would only repeat it, at a higher cost
    except (SandboxError, CapExceeded, UnsafePath, RunDirError) as exc:
        return fail(str(exc))
    except Exception as exc:  # a backend's own failure must not end in a traceback
        return internal_error(exc)
    assert run is not None
    out = run.outcome
    notes = [*run_dir_notes, *said]
    report = {
        "program": str(prog_path) if prog_path is not None else str(folder),
        "sources": program.units or [program.filename], "backend": backend.name, "variant": args.variant,
        "schedule": args.schedule, "status": run.status.value,
        # --thorough: every build and schedule run, in order (the first that failed decides).
        "runs": runs,
        "reason": run.reason, "build_seconds": round(run.build_seconds, 3),
        "build_cached": run.compile.cached, "run_seconds": round(run.run_seconds, 3),
        "exit_code": out.exit_code if out else None, "signal": out.signal if out else None,
        "timed_out": out.timed_out if out else False, "limit_hit": out.limit_hit if out else None,
        "stdout": out.stdout[-OUTPUT_SHOWN:] if out else "",
        "stderr": out.stderr[-OUTPUT_SHOWN:] if out else run.compile.diagnostics[-OUTPUT_SHOWN:],
        "build_notes": [*nvcc_notes, *_build_notes(run.compile.diagnostics)],
        "limits": {"wall_seconds": limits.wall_seconds, "cpu_seconds": limits.cpu_seconds,
                   "memory_bytes": limits.memory_bytes, "rss_bytes": limits.rss_bytes},
        "outputs": [str(keep / f) for f in run.outputs] if keep else [],
        # Where the run's time went (validators/run_timing.py); null where the runtime wrote no
        # report (killed before exit, or a statically linked CUDA runtime on cuda).
        "timing": run.timing.as_dict() if run.timing else None,
        # The folder the program started in (--cwd), relative to the run directory.
        "cwd": start or ".",
        # How the run directory was laid out (a --file replacing a file of the --with-dir
        # copy), then behaviour CUDA leaves undefined that the backend ran as GPUs do (cpu:
        # portability).
        "notes": notes,
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        shown = args.program if prog_path is not None else (
            f"{folder} ({len(program.units)} sources)")
        print(f"{run.status.value}: {shown} on {backend.name}"
              + (f" ({run.reason})" if run.reason else ""))
        print(f"build {run.build_seconds:.2f}s{' (cached)' if run.compile.cached else ''}, "
              f"run {run.run_seconds:.2f}s, exit code {report['exit_code']}"
              + (f", signal {out.signal}" if out and out.signal else "")
              + (f", limit hit: {out.limit_hit}" if out and out.limit_hit else ""))
        if run.timing is not None:
            t = run.timing
            print(f"run split: start-up {t.startup_s:.2f}s, host {t.host_s:.2f}s, kernels "
                  f"{t.kernels_s:.2f}s ({t.launches} launches), copies {t.copies_s:.2f}s, exit "
                  f"{t.exit_s:.2f}s")
        if len(runs) > 1:
            print("runs: " + ", ".join(f"{r['variant']}/{r['schedule']} {r['status']}"
                                       for r in runs))
        for note in notes:
            print(f"note: {note}")
        if report["build_notes"] and run.status != Status.COMPILE_ERROR:
            print("--- build notes ---\n" + "\n".join(report["build_notes"]))
        if keep is not None:
            print(f"{len(run.outputs)} output file(s) kept in {keep}"
                  + "".join(f"\n  {f}" for f in run.outputs[:20]))
        if report["stdout"]:
            print("--- stdout ---\n" + report["stdout"].rstrip())
        if report["stderr"]:
            print("--- stderr ---\n" + report["stderr"].rstrip())
    return 0 if run.status == Status.PASSED else 1
