"""`python -m validators check --task TASK.json --program PROG.cu` (or a program of several files:
`--dir DIR --nvcc "nvcc ..."` or `--source PATH` repeated, as for `validators run`): validate it.

A `.py` task is a KernelBench problem and a `.py` program an answer defining `ModelNew`:
`validators.kernelbench.verify` checks the pair (the same statuses and exit codes).

Prints a per-case verdict table (or the ValidationResult as JSON with --json) and writes the
result to --out. Exit code: 0 passed, 1 any other verdict, 2 bad input, an unusable backend or
an `error` result (no verdict: the validator's machinery or the task's reference failed).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from schemas import Program, SchemaError, Status, Task, ValidationResult
from validators.backends import BACKEND_NAMES
from validators.cli.errors import fail, internal_error
from validators.cli.project_args import add_project_options

STATUS_STYLE = {
    Status.PASSED: "green", Status.NEEDS_GPU: "yellow", Status.FAILED: "red",
    Status.TIMEOUT: "red", Status.RUNTIME_ERROR: "red", Status.REJECTED: "magenta",
    Status.COMPILE_ERROR: "red", Status.ERROR: "yellow",
}


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "check", help="validate a CUDA program against a task's cases and reference",
        epilog="exit status: 0 passed, 1 another verdict, 2 bad input or no verdict (`error`)",
        description="Build the program, run every case in the sandbox, compare with the "
                    "reference outputs and apply the anti-cheat checks.",
    )
    p.add_argument("--task", required=True, help="task JSON (schemas.Task)")
    p.add_argument("--program", help="the CUDA program (.cu); none with --nvcc or --source")
    add_project_options(p)
    p.set_defaults(flags=[])
    p.add_argument("--backend", default="auto", choices=BACKEND_NAMES)
    p.add_argument("--json", action="store_true", help="print the ValidationResult as JSON")
    p.add_argument("--out", help="write the ValidationResult JSON here")
    p.add_argument("--arch", help="GPU architecture for the cuda backend (default sm_90)")
    p.add_argument("--fast", action="store_true",
                   help="one schedule and build variant per case (not thorough)")
    p.add_argument("--fresh-seed", type=int, metavar="SEED",
                   help="the seed of the case drawn at validation time (reproduces a result "
                        "that recorded it; by default a new one is drawn)")
    kb = p.add_argument_group("KernelBench answers (a .py task and a .py program)")
    kb.add_argument("--allow-torch-only", action="store_true",
                    help="accept forward calls that launch no custom kernel (the other rules "
                         "still hold)")
    kb.add_argument("--no-library-calls", action="store_true",
                    help="refuse forward calls that compute with a CUDA library (cuBLAS, "
                         "cuSPARSE, CUB, Thrust, cuRAND) instead of only their own kernels; by "
                         "default such calls are allowed, as KernelBench does, and named in a note")
    kb.add_argument("--input-salt", type=int, metavar="SALT",
                    help="the secret the inputs are drawn under (reproduces a result's inputs: "
                         "its notes name it; by default a new one is drawn)")
    kb.add_argument("--atol", type=float, help="absolute tolerance of every float output "
                    "(default per dtype: 1e-2 for float32, as KernelBench)")
    kb.add_argument("--rtol", type=float, help="relative tolerance of every float output")


def load_task(path: str) -> Task:
    text = Path(path).read_text(encoding="utf-8")
    return Task.parse(text, origin=path)


def load_program(path: str, extra_flags: list[str] | None = None) -> Program:
    from validators.project import read_source

    p = Path(path)
    # A byte that is not UTF-8 (a Latin-1 `©` in a comment) is read as Latin-1, not refused.
    source = read_source(p)
    name = p.name if p.suffix in (".cu", ".cpp", ".cc") and all(
        c.isalnum() or c in "_.-" for c in p.name) else "main.cu"
    return Program(source=source, filename=name, extra_flags=extra_flags or [])


def one_line(text: str) -> str:
    return "; ".join(ln.strip() for ln in text.splitlines() if ln.strip())


def main(args: argparse.Namespace) -> int:
    from validators.backends import BackendUnavailable, get_backend
    from validators.caps import CapExceeded
    from validators.engine import check
    from validators.sandbox import SandboxError

    several = args.nvcc is not None or bool(args.sources)
    if several and args.program is not None:
        return fail(f"{args.program!r}: give --program or --nvcc/--source, not both")
    if not several and args.program is None:
        return fail("--dir needs --nvcc COMMAND or --source PATH" if args.dir is not None else
                    "no program: give --program PROG.cu, --nvcc COMMAND or --source PATH")
    if args.task.endswith(".py") or (args.program or "").endswith(".py"):
        if several:
            return fail("a KernelBench answer is one .py file: --nvcc/--source are for CUDA programs")
        return check_kernelbench(args)
    try:
        task = load_task(args.task)
    except FileNotFoundError:
        return fail(f"task file not found: {args.task}")
    except (OSError, UnicodeDecodeError) as exc:
        return fail(f"cannot read task file {args.task}: {exc}")
    except SchemaError as exc:
        return fail(one_line(str(exc)))
    include_dirs: list[Path] = []
    if several:
        from validators.cli.project_args import check_folder_readable, project_program
        from validators.project import ProjectError, exposed_include_dirs

        try:
            program, folder, notes = project_program(args)
            check_folder_readable(folder)
        except (ProjectError, OSError, ValueError) as exc:
            return fail(one_line(str(exc)))
        # As for `validators run`: the folder and the folders its -I flags name outside it are
        # the operator's choice, so the sandboxed compiler may read them (one that does not
        # exist is dropped with a note, as nvcc and g++ skip it).
        include_dirs, missing = exposed_include_dirs(program, folder)
        for note in [*notes, *missing]:
            print(f"note: {note}", file=sys.stderr)
    else:
        try:
            program = load_program(args.program)
        except FileNotFoundError:
            return fail(f"program file not found: {args.program}")
        except (OSError, ValueError) as exc:
            return fail(f"cannot read program {args.program}: {one_line(str(exc))}")
    if args.arch:
        os.environ["CKD_CUDA_ARCH"] = args.arch
    try:
        backend = get_backend(args.backend)
        if several:
            if backend.name != "cpu":
                return fail(f"a program of several files builds on the cpu backend only (not yet "
                            f"on {backend.name})")
            backend = backend.with_include_dirs(include_dirs)
        result = check(task, program, backend=backend, thorough=not args.fast,
                       fresh_seed=args.fresh_seed)
    except (BackendUnavailable, SandboxError, CapExceeded) as exc:
        return fail(str(exc))
    except Exception as exc:  # a backend's own failure must not end in a traceback
        return internal_error(exc)
    if args.out:
        Path(args.out).write_text(result.to_json(indent=2) + "\n")
    if args.json:
        print(result.to_json(indent=2))
    else:
        print_table(result, args.program or ", ".join(program.units))
    if result.status == Status.ERROR:  # no verdict: the exit status of our own failures
        return 2
    return 0 if result.status == Status.PASSED else 1


def _read_text(path: str, what: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValueError(f"{what} file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read {what} file {path}: {exc}") from None


def check_kernelbench(args: argparse.Namespace) -> int:
    """A KernelBench problem (.py) and answer (.py): `validators.kernelbench.verify`."""
    from validators.caps import CapExceeded
    from validators.kernelbench import KernelBenchInputError, verify
    from validators.sandbox import SandboxError

    if not (args.task.endswith(".py") and args.program.endswith(".py")):
        return fail("a KernelBench check takes a .py problem (--task) and a .py answer "
                    f"(--program), not {args.task} and {args.program}")
    if args.backend not in ("cpu", "cuda", "auto"):
        return fail(f"KernelBench answers run on the cpu or cuda backend, not {args.backend}")
    for name in ("atol", "rtol"):
        v = getattr(args, name)
        if v is not None and not (v >= 0 and v < float("inf")):
            return fail(f"--{name} must be a finite number >= 0, not {v}")
    try:
        problem = _read_text(args.task, "task")
        answer = _read_text(args.program, "program")
    except ValueError as exc:
        return fail(str(exc))
    backend = args.backend
    if backend == "auto":
        import torch

        backend = "cuda" if torch.cuda.is_available() else "cpu"
    try:
        result = verify(problem, answer, backend=backend, fast=args.fast, atol=args.atol,
                        rtol=args.rtol, allow_torch_only=args.allow_torch_only,
                        allow_library=not args.no_library_calls, input_salt=args.input_salt,
                        fresh_seed=args.fresh_seed, task_name=Path(args.task).stem)
    except KernelBenchInputError as exc:
        return fail(str(exc).replace("problem:", f"{args.task}:", 1)
                    .replace("answer:", f"{args.program}:", 1))
    except (SandboxError, CapExceeded) as exc:
        return fail(str(exc))
    except Exception as exc:
        return internal_error(exc)
    if args.out:
        Path(args.out).write_text(result.to_json(indent=2) + "\n")
    if args.json:
        print(result.to_json(indent=2))
    else:
        print_table(result, args.program)
        console = Console()
        if result.rule:
            console.print(Text(f"rule broken: {result.rule}"))
        if result.sizes:
            scaled = f" (scaled from {result.original_sizes})" if result.original_sizes else ""
            console.print(Text(f"sizes: {result.sizes}{scaled}"))
        if result.weak_task:
            console.print(Text(f"weak task: {result.weak_task}", style="yellow"))
    if result.status == Status.ERROR:
        return 2
    return 0 if result.status == Status.PASSED else 1


def _fmt(v: float | None) -> str:
    return "" if v is None else f"{v:.3g}"


def print_table(result: ValidationResult, program: str) -> None:
    console = Console()
    table = Table(title=f"{program} · task {result.task} · backend {result.backend}")
    for col in ("case", "status", "max abs err", "max rel err", "seconds", "reason"):
        table.add_column(col, overflow="fold")
    for c in result.cases:
        rel = [o.max_rel_error for o in c.outputs if o.max_rel_error is not None]
        table.add_row(c.case, Text(c.status.value, style=STATUS_STYLE[c.status]),
                      _fmt(c.max_abs_error), _fmt(max(rel) if rel else None),
                      f"{c.seconds:.2f}", Text(c.reason))
    console.print(table)
    if result.compile is not None:
        info = result.compile
        regs = ", ".join(f"{r.kernel}: {r.registers} regs" for r in info.resources[:4])
        console.print(Text(f"build: {info.compiler} {'ok' if info.ok else 'failed'} in "
                           f"{info.seconds:.2f}s{' (cached)' if info.cached else ''}"
                           + (f"; {regs}" if regs else "")))
    if result.fresh_seed is not None or result.kernel_check:
        console.print(Text(f"integrity: fresh seed {result.fresh_seed} (--fresh-seed to "
                           f"reproduce); kernels: {result.kernel_check or 'not checked'}"))
    verdict = Text(f"{result.status.value}", style=STATUS_STYLE[result.status] + " bold")
    verdict.append(f"  {result.cases_passed}/{len(result.cases)} cases passed, "
                   f"{result.seconds:.1f}s", style="")
    if result.reason:
        verdict.append(f"  {result.reason}", style="")
    console.print(verdict)
