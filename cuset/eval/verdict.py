"""One sample validated: runs in a worker process, so it imports nothing heavy at module level.

Verdicts: `compiled` = a code block existed and the program built (status is neither
`compile_error` nor `needs_gpu`); `passed` = status `passed`. A `needs_gpu` sample (the backend
cannot judge it: a GPU-only feature on the cpu backend) gets neither compile nor function credit,
so the figures are a lower bound, and the summary counts these samples separately so a reader
sees how much went unjudged. An `error` sample (our machinery, or the task's reference, failed:
no verdict on the program, including a validation that crashed its worker) is left out of
pass@k, reported apart, and validated again on resume.

KernelBench: a code block that is not a `ModelNew` module (a syntax error, no `ModelNew`) is a
`compile_error` (`not_a_kernelbench_answer`), and an answer whose module does not import is a
`runtime_error` that did not compile (KernelBench's compiled is "the module loaded"); an answer
rejected by a rule (`torch_fallback` for one that launches no kernel of its own, ...) built and
ran, so it counts as compiled and not passed.
"""

from __future__ import annotations

from dataclasses import dataclass

from .benchmarks import EvalTask

NO_CODE_BLOCK = "no_code_block"
EMPTY_CODE_BLOCK = "empty_code_block"
NOT_AN_ANSWER = "not_a_kernelbench_answer"


ERROR = "error"


@dataclass(frozen=True)
class Verdict:
    status: str
    reason: str
    compiled: bool
    passed: bool

    @property
    def error(self) -> bool:
        """No verdict on the program (see the module docstring)."""
        return self.status == ERROR


def error_verdict(reason: str) -> Verdict:
    return Verdict(ERROR, reason, False, False)


def _verdict(status: str, reason: str) -> Verdict:
    if status == ERROR:
        return error_verdict(reason)
    return Verdict(status, reason, status not in ("compile_error", "needs_gpu"), status == "passed")


def no_program(program: str | None) -> Verdict | None:
    """The verdict for a completion without a usable program, None when there is one."""
    if program is None:
        return Verdict("compile_error", NO_CODE_BLOCK, False, False)
    if not program.strip():
        return Verdict("compile_error", EMPTY_CODE_BLOCK, False, False)
    return None


def validate(task: EvalTask, program: str | None, backend: str,
             per_scale_reference: bool = False, fast: bool = False) -> Verdict:
    """Validate `program` for `task`. For CUDABench every chosen scale must pass; the first scale
    that does not decides the verdict. `per_scale_reference`: check each scale's own bench.cu
    (the harness check) instead of `program`. `fast`: KernelBench's quick check (one checking
    variant instead of three); other benchmarks have no such option and ignore it."""
    missing = no_program(program)
    if missing is not None:
        return missing
    assert program is not None
    if task.kind == "kernelbench":
        return _kernelbench(task, program, backend, fast)
    if task.kind == "cudabench":
        from validators import cudabench

        assert task.cudabench is not None
        for sc in task.cudabench.scales:
            source = sc.bench_cu if per_scale_reference else program
            r = cudabench.check(sc, source, backend=backend)
            if r.status != "passed":
                return _verdict(str(r.status), f"scale {sc.row_id}: {r.reason}".strip())
        return _verdict("passed", "")
    from schemas import Program
    from validators.engine import check

    assert task.task is not None
    r = check(task.task, Program(source=program), backend=backend)
    return _verdict(str(r.status), r.reason)


def _kernelbench(task: EvalTask, program: str, backend: str, fast: bool) -> Verdict:
    from validators.kernelbench import KernelBenchInputError, verify
    from validators.kernelbench.verify import IMPORT_FAILED

    assert task.kernelbench is not None
    try:
        r = verify(task.kernelbench.source, program, backend=backend, fast=fast,
                   task_name=task.id)
    except KernelBenchInputError as exc:
        # The problem was read when the benchmark loaded, so what is left is the answer: a
        # block that is not a ModelNew module is the model's failure to produce one.
        return Verdict("compile_error", f"{NOT_AN_ANSWER}: {exc}", False, False)
    if r.status == "runtime_error" and r.reason.startswith(IMPORT_FAILED):
        # KernelBench's "compiled" is "the answer's module loaded"; the service's reward reads
        # it the same way, so a model gets one answer from both.
        return Verdict(str(r.status), r.reason, False, False)
    return _verdict(str(r.status), r.reason)
