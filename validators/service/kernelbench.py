"""KernelBench tasks in the service: a job checks a completion's Python answer (`ModelNew`)
against the problem with `validators.kernelbench.verify`, in a worker process.

"Compiled", for the reward, means the answer's CUDA extensions built and its module imported:
an answer that is no KernelBench answer at all (not Python, no `ModelNew`) is a `compile_error`
here, as a program that does not build is for a CUDA task.
"""

from __future__ import annotations

import hashlib
from typing import Any

from schemas import ErrorOrigin, Status, ValidationResult

JOB_KIND = "kernelbench"


def job(task_id: str, problem: str, answer: str, thorough: bool) -> dict[str, Any]:
    """The pool job that checks `answer` against the KernelBench `problem`."""
    return {"kind": JOB_KIND, "task_id": task_id, "problem": problem, "answer": answer,
            "thorough": thorough}


def run_job(job: dict[str, Any], backend: str) -> ValidationResult:
    """Run in a worker: the verdict on the job's answer (never raises for a bad answer)."""
    from validators.kernelbench import KernelBenchInputError, verify
    from validators.kernelbench.files import read_answer, read_problem

    name, answer = job["task_id"], job["answer"]
    try:
        read_problem(job["problem"], origin=f"task {name}")
    except KernelBenchInputError as exc:  # loaded at start, so only a changed file gets here
        return ValidationResult(task=name, backend=backend, status=Status.ERROR,
                                reason=str(exc), error_origin=ErrorOrigin.TASK)
    try:
        read_answer(answer, origin="the answer")
    except KernelBenchInputError as exc:
        return ValidationResult(task=name, backend=backend, status=Status.COMPILE_ERROR,
                                reason=f"not a KernelBench answer: {exc}",
                                program_digest=hashlib.sha256(answer.encode()).hexdigest())
    try:
        return verify(job["problem"], answer, backend=backend, fast=not job["thorough"],
                      task_name=name, program_seconds=job.get("program_seconds"))
    except KernelBenchInputError as exc:  # the answer read above: what is left is the problem
        return ValidationResult(task=name, backend=backend, status=Status.ERROR,
                                reason=str(exc), error_origin=ErrorOrigin.TASK)


def compiled(result: dict[str, Any]) -> bool:
    """Whether a KernelBench answer built its extensions and imported (`result` as JSON)."""
    from validators.kernelbench.verify import IMPORT_FAILED

    if result.get("compile") is not None and not result["compile"].get("ok"):
        return False
    status = result["status"]
    if status in (Status.COMPILE_ERROR, Status.NEEDS_GPU, Status.ERROR):
        return False
    return not (status == Status.RUNTIME_ERROR
                and str(result.get("reason", "")).startswith(IMPORT_FAILED))
