"""Caps on what the validator itself does for an input, checked before anything is allocated.

The sandbox bounds what a program does; these bound the validator's own process, which runs
unsandboxed: it draws a case's inputs, reads outputs back and compares them (in float64), so a
task asking for 10^12 elements, a negative size, a 50 MB program or a 3 MB argument list must
be refused up front with an error naming the input and the limit, never reach NumPy, the
parser or `execve`.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from schemas import InputCase, Program, Task

MIB = 1 << 20


class CapExceeded(ValueError):
    """An input is larger than a cap (the message names the input, its size and the cap)."""


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise CapExceeded(f"{name}={value!r} is not an integer") from exc


@dataclass(frozen=True)
class Caps:
    """Limits on inputs to the validator. Each can be raised with an environment variable
    (`CKD_MAX_<FIELD>`, e.g. `CKD_MAX_CASE_ELEMENTS`) or by passing a Caps."""

    program_bytes: int = 2 * MIB
    """Source size of one program (the static analysis and the compiler see all of it)."""
    tensor_elements: int = 1 << 25
    """Elements of one input or output tensor (33.5 M)."""
    case_elements: int = 1 << 26
    """Elements of all inputs and outputs of one case together: the validator holds them,
    the reference outputs and a float64 copy of both while comparing."""
    args_bytes: int = 128 * 1024
    """Total bytes of a run's argument list (the kernel's own limit is about 2 MiB)."""
    args_count: int = 4096
    copy_bytes: int = 256 * MIB
    """Bytes copied into a run directory from an untrusted folder (`validators run --with-dir`)."""
    copy_files: int = 4096

    @classmethod
    def from_env(cls) -> Caps:
        return cls(**{f.name: _env_int(f"CKD_MAX_{f.name.upper()}", f.default)  # type: ignore[arg-type]
                      for f in dataclasses.fields(cls)})


def program_reason(program: Program, caps: Caps) -> str:
    """Why the program is refused before analysis, or ''."""
    size = len(program.sources_text().encode("utf-8", "surrogatepass"))
    if size > caps.program_bytes:
        return (f"program is {size / MIB:.1f} MiB, over the {caps.program_bytes / MIB:.1f} MiB "
                f"limit (CKD_MAX_PROGRAM_BYTES)")
    return ""


def check_case(task: Task, case: InputCase, caps: Caps) -> None:
    """Raise CapExceeded when a case's sizes are negative, unresolved or too large."""
    sizes = task.case_sizes(case)
    for k, v in sizes.items():
        if not isinstance(v, int) or v < 0:
            raise CapExceeded(f"task {task.name!r} case {case.name!r}: size {k}={v!r} is negative "
                              f"or not an integer")
    total = 0
    for spec in [*task.inputs, *task.outputs]:
        n = 1
        for d in spec.shape:
            value = sizes.get(d) if isinstance(d, str) else d
            if value is None:
                raise CapExceeded(f"task {task.name!r} case {case.name!r}: tensor {spec.name!r} "
                                  f"uses size {d!r}, which has no value")
            if value < 0:
                raise CapExceeded(f"task {task.name!r} case {case.name!r}: tensor {spec.name!r} "
                                  f"has a negative dimension ({value})")
            n *= int(value)  # Python ints: 10^12 and beyond do not overflow here
        if n > caps.tensor_elements:
            raise CapExceeded(
                f"task {task.name!r} case {case.name!r}: tensor {spec.name!r} has {n:,} elements, "
                f"over the {caps.tensor_elements:,}-element limit (CKD_MAX_TENSOR_ELEMENTS)")
        total += n
    if total > caps.case_elements:
        raise CapExceeded(
            f"task {task.name!r} case {case.name!r}: {total:,} elements in all tensors, over the "
            f"{caps.case_elements:,}-element limit (CKD_MAX_CASE_ELEMENTS)")


def check_task(task: Task, caps: Caps) -> None:
    for case in task.cases:
        check_case(task, case, caps)


def check_args(argv: list[str], caps: Caps) -> None:
    """Raise CapExceeded for an argument list too long to pass (before any resource exists)."""
    if len(argv) > caps.args_count:
        raise CapExceeded(f"{len(argv)} program arguments, over the {caps.args_count} limit "
                          f"(CKD_MAX_ARGS_COUNT)")
    size = sum(len(a.encode("utf-8", "surrogateescape")) + 1 for a in argv)
    if size > caps.args_bytes:
        raise CapExceeded(f"program arguments total {size:,} bytes, over the {caps.args_bytes:,}-"
                          f"byte limit (CKD_MAX_ARGS_BYTES)")
