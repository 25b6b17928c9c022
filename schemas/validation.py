"""Validation results: the verdict on a program for a task, with per-case details."""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from .base import Contract


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    """Ran, and an output did not match the reference."""
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    NEEDS_GPU = "needs_gpu"
    """Cannot be judged on this backend (a GPU-only feature, or no GPU answered): skipped."""
    REJECTED = "rejected"
    """Caught cheating or breaking the rules (anti-cheat checks, forbidden file access)."""
    ERROR = "error"
    """No verdict on the program: the check itself could not be carried out (see
    `ValidationResult.error_origin`). Never counted as a failure, a reward of 0 or a lower
    pass@k: builds retry it, evaluations leave it out and report it, the service answers it as
    an error."""


class ErrorOrigin(StrEnum):
    """Whose failure an `error` result is."""

    VALIDATOR = "validator"
    """Our machinery: the reference or benchmark harness could not start or crashed in our
    code, the sandbox could not be set up, a worker died. Transient or environmental: retry."""
    TASK = "task"
    """The task's own reference (NumPy, torch, a benchmark's gen.py/compare.py) failed, timed
    out or returned malformed outputs: the task is broken, not the program."""


# Worst first: the overall verdict of several cases is the worst of theirs.
STATUS_SEVERITY: dict[Status, int] = {
    Status.PASSED: 0,
    Status.NEEDS_GPU: 1,
    # Below every verdict on the program: a case that ran and failed says more than one that
    # could not be checked, but an unchecked case is never a pass.
    Status.ERROR: 2,
    Status.FAILED: 3,
    Status.TIMEOUT: 4,
    Status.RUNTIME_ERROR: 5,
    Status.REJECTED: 6,
    Status.COMPILE_ERROR: 7,
}


class KernelResources(Contract):
    """What `ptxas -v` (or an equivalent) reports for one kernel."""

    kernel: str
    registers: int | None = None
    shared_bytes: int | None = None
    stack_bytes: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    constant_bytes: int | None = None


class CompileInfo(Contract):
    """How a program was built: command, time, cache, diagnostics and resource statistics."""

    compiler: str = ""
    """e.g. `nvcc 13.0` or `g++ 12.2 (cpu shim)`."""
    command: list[str] = Field(default_factory=list)
    ok: bool = False
    seconds: float = 0.0
    cached: bool = False
    diagnostics: str = ""
    """Compiler output, truncated."""
    resources: list[KernelResources] = Field(default_factory=list)


class OutputCheck(Contract):
    """The comparison of one output with its reference."""

    name: str
    ok: bool
    reason: str = ""
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    first_mismatch_index: int | None = None
    mismatches: int | None = None
    elements: int | None = None


class CaseResult(Contract):
    case: str
    status: Status
    reason: str = ""
    outputs: list[OutputCheck] = Field(default_factory=list)
    seconds: float = 0.0
    exit_code: int | None = None
    schedules: list[str] = Field(default_factory=list)
    """Thread schedules the case ran under (CPU backend), e.g. `forward`, `reverse`."""
    stdout_tail: str = ""
    stderr_tail: str = ""
    error_origin: ErrorOrigin | None = None
    """Set for an `error` case: whose failure it was."""
    seed: int | None = None
    """The seed the case's inputs were drawn from (for a fresh case, drawn at validation time)."""
    fresh: bool = False
    """True for the case whose seed was drawn at validation time (never published in a task)."""

    @property
    def max_abs_error(self) -> float | None:
        vals = [o.max_abs_error for o in self.outputs if o.max_abs_error is not None]
        return max(vals) if vals else None


class ValidationResult(Contract):
    """The verdict on one program for one task."""

    task: str = ""
    program_digest: str = ""
    backend: str
    status: Status
    reason: str = ""
    compile: CompileInfo | None = None
    cases: list[CaseResult] = Field(default_factory=list)
    features: list[str] = Field(default_factory=list)
    """GPU-only features found by static analysis (why a result is `needs_gpu`)."""
    seconds: float = 0.0
    fresh_seed: int | None = None
    """Seed of the case drawn at validation time: pass it back (`fresh_seed=`, `validators check
    --fresh-seed`) to reproduce this result."""
    kernel_check: str = ""
    """The differential check with every kernel launch a no-op: `depends on the kernels (case
    X)`, or why it was skipped."""
    notes: list[str] = Field(default_factory=list)
    """Checks that did not run as planned, e.g. a slower checking build that hit a time limit
    and whose run was replaced by the plain build's."""
    error_origin: ErrorOrigin | None = None
    """Set for an `error` result: `validator` (ours: retry) or `task` (its reference failed)."""
    rule: str = ""
    """The named rule a `rejected` KernelBench answer broke (`torch_fallback`, `input_mutation`,
    ...: `validators.kernelbench.defences`)."""
    weak_task: str = ""
    """Why the task cannot tell answers apart (its reference output is constant or ignores the
    inputs); empty when it can. A pass on a weak task says little."""
    sizes: dict[str, int] = Field(default_factory=dict)
    """The size constants a KernelBench problem was checked at."""
    original_sizes: dict[str, int] = Field(default_factory=dict)
    """The problem's own sizes, where `sizes` had to scale them down for the backend."""

    @property
    def passed(self) -> bool:
        return self.status == Status.PASSED

    @property
    def cases_passed(self) -> int:
        return sum(c.status == Status.PASSED for c in self.cases)


def worst_status(statuses: list[Status]) -> Status:
    if not statuses:
        return Status.PASSED
    return max(statuses, key=lambda s: STATUS_SEVERITY[s])
