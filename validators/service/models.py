"""Request and response bodies of the HTTP API (pydantic; they are also the OpenAPI schema)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from schemas import ValidationResult

MAX_COMPLETIONS = 256
"""Completions one score request may carry; the client splits larger batches."""


def _check_text(value: Any, where: str) -> None:
    """Refuse a string that is not Unicode text: JSON can carry a lone UTF-16 surrogate
    (`"\\ud800"`), which no worker, file or log can take. Found here, in the request's own
    validation, it is a 422 naming the item before any work or slot is spent on it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise ValueError(f"{where}: not valid Unicode text (a lone surrogate "
                             f"{value[exc.start]!r} at character {exc.start})") from None
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_text(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_text(key, f"{where} key")
            _check_text(item, f"{where}.{key}")


class _Body(BaseModel):
    # A misspelt field (`task_name` for `task_id`) must be an error, not silently ignored.
    model_config = ConfigDict(extra="forbid")

    @field_validator("*", mode="after")
    @classmethod
    def _text_only(cls, value: Any, info: ValidationInfo) -> Any:
        _check_text(value, info.field_name or "body")
        return value


class ProgramBody(_Body):
    source: str = Field(min_length=1, description="the CUDA program's text")
    filename: str = Field(default="main.cu", pattern=r"^[A-Za-z0-9_.-]+\.(cu|cpp|cc)$")
    extra_flags: list[str] = Field(default_factory=list)


class ValidateRequest(_Body):
    """A program and its task: either `task_id` (one of `GET /v1/tasks`) or `task`, a task
    in the `schemas.Task` format."""

    program: ProgramBody | str = Field(
        description="the program: its source text, or an object with source and filename")
    task_id: str | None = None
    task: dict[str, Any] | None = Field(default=None, description="an inline schemas.Task")
    thorough: bool = Field(default=False, description="every build variant and schedule")

    @model_validator(mode="after")
    def _one_task(self) -> ValidateRequest:
        if (self.task_id is None) == (self.task is None):
            raise ValueError("give exactly one of task_id and task")
        return self

    def program_body(self) -> ProgramBody:
        if isinstance(self.program, str):
            return ProgramBody(source=self.program)
        return self.program


class ScoreRequest(_Body):
    """Model completions for one task; the program is the first fenced code block of each (of a
    KernelBench task, the first ```python block, else the first block without a language).
    reward = alpha * correct + beta * compiled + speed * min(speed-up, speed_cap) * correct."""

    task_id: str
    completions: list[str] = Field(min_length=1, max_length=MAX_COMPLETIONS)
    alpha: float | None = Field(default=None, description="weight of correct (server default)")
    beta: float | None = Field(default=None, description="weight of compiled (server default)")
    speed: float = Field(default=0.0, ge=0.0, description=(
        "gamma: weight of the speed-up over the reference (cuda only)"))
    speed_cap: float | None = Field(default=None, gt=0.0, description=(
        "r_max: the speed-up counted at most (server default, --speed-cap)"))
    thorough: bool | None = Field(default=None, description=(
        "the server decides the check behind a reward (`--score-check`, thorough by "
        "default): leave it out; a value other than the server's is refused (422)"))


class ScoreItem(BaseModel):
    index: int
    program_found: bool
    compiled: bool
    correct: bool
    reward: float | None
    """None when there is no verdict on the program (`status` `error`, `service_timeout`,
    `service_error`): our failure must not reach a policy as a reward of 0."""
    status: str
    """A `schemas.Status` value, `no_code_block`, or `service_timeout`/`service_error`."""
    reason: str = ""
    error_origin: str | None = None
    """For `error`: `validator` (ours: retry) or `task` (its reference failed)."""
    speedup: float | None = None


Check = Literal["thorough", "fast"]
"""`thorough`: every build variant (the cpu backend's AddressSanitizer and race builds, which
start memory poisoned) and schedule; `fast`: one build, one schedule. Both run the fresh case
and the kernel-dependence run."""


class ValidateResponse(ValidationResult):
    """The verdict, with the check that gave it; the fresh case's values are withheld
    (`validators.disclosure`)."""

    check: Check


class ScoreResponse(BaseModel):
    task_id: str
    backend: str
    check: Check
    """The check behind every reward of the answer: the server's, never the request's."""
    alpha: float
    beta: float
    speed: float = 0.0
    speed_cap: float
    """r_max: the speed-up counted at most."""
    kind: str = "task"
    """`task` (a CUDA program per completion) or `kernelbench` (a Python `ModelNew` answer)."""
    results: list[ScoreItem]


class TaskInfo(BaseModel):
    id: str
    kind: str = "task"
    """`task` or `kernelbench` (answers are Python `ModelNew` modules)."""
    description: str
    cases: int
    inputs: list[str]
    outputs: list[str]


class TasksResponse(BaseModel):
    source: str
    tasks: list[TaskInfo]


class ErrorBody(BaseModel):
    error: str
    detail: list[dict[str, Any]] | None = None
