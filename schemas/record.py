"""What sources yield and what the dataset holds."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import Field, model_validator

from .base import Contract
from .span import Span
from .task import CASES_PER_TASK, Task
from .validation import CompileInfo, Status


class Provenance(Contract):
    """Where a kernel came from and under which licence it may be redistributed."""

    source: str = Field(min_length=1)
    """The source module, e.g. `builtin`, `github`, `hf`, `kernelbench`, `local`."""
    origin: str = Field(min_length=1)
    """A URL, dataset id or path that locates the original."""
    license: str = Field(min_length=1)
    """SPDX identifier (or `unknown`, which the builder filters out)."""
    repo: str | None = None
    commit: str | None = None
    path: str | None = None
    authors: list[str] = Field(default_factory=list)
    retrieved_at: datetime | None = None
    notes: str = ""
    url: str | None = None
    """A link to the exact original (a blob URL at the pinned commit, a dataset row)."""
    stars: int | None = None
    """Repository stars when the source knows them (GitHub), for filtering by popularity."""


class RawRecord(Contract):
    """What a source yields: CUDA text with provenance; possibly a ready task and program."""

    id: str = Field(min_length=1)
    text: str
    provenance: Provenance
    task: Task | None = None
    """Sources that already know the task (builtin, kernelbench) give it here."""
    split: Literal["train", "test"] = "train"
    meta: dict[str, str] = Field(default_factory=dict)
    files: dict[str, str] = Field(default_factory=dict)
    """Companion files the text needs to compile, by path relative to the text's own folder
    (e.g. `../common.h`, `kernels/1_naive.cuh`): the local headers it includes, transitively."""
    focus: str | None = None
    """The `__global__` function this record is about when its text defines several (one record
    per kernel); None means the whole text."""
    module: str | None = None
    """A PyTorch module file (KernelBench style: `Model`, `get_inputs`, `get_init_inputs`) that
    defines the task; it becomes the reference (run on the CPU inside the sandbox)."""
    kind: Literal["program", "kernel", "module"] = "program"
    """What `text` is: a standalone `program` (or task-carrying record), CUDA `kernel` code that
    an LLM wraps into a program (a file of kernels, a PyTorch extension), or empty with the
    task given by `module` alone."""


class ChatMessage(Contract):
    role: Literal["system", "user", "assistant"]
    content: str


class CaseSummary(Contract):
    case: str
    status: Status
    max_abs_error: float | None = None
    max_rel_error: float | None = None
    seconds: float = 0.0
    seed: int | None = None
    fresh: bool = False
    """Its seed was drawn at validation time (never published in the task)."""


class ValidationSummary(Contract):
    """The part of a ValidationResult a dataset record keeps."""

    backend: str
    status: Status
    cases: list[CaseSummary] = Field(default_factory=list)
    compile: CompileInfo | None = None
    schedules: list[str] = Field(default_factory=list)
    validated_at: datetime | None = None
    fresh_seed: int | None = None
    """Reproduces the fresh case (`validators check --fresh-seed`)."""
    kernel_check: str = ""
    """What the kernel-dependence check found, or why it was skipped."""
    portability: list[str] = Field(default_factory=list)
    """Behaviour CUDA leaves undefined that the program relies on and the backend ran as GPUs
    do (e.g. threads that exited not holding a barrier): one line each, naming where."""


class SynthesisInfo(Contract):
    """How an LLM took part in a record (absent for records that carried their own task)."""

    specifier: str
    model: str = ""
    prompt_version: str = ""
    kernel_kept: float | None = None
    """Share of the original kernel's characters kept in the response (None: no original)."""
    repair_rounds: int = 0
    attempts: int = 0


class DatasetRecord(Contract):
    """One prompt/response pair of the dataset, with everything needed to trust and reuse it."""

    id: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    messages: list[ChatMessage] = Field(min_length=2)
    response: str = Field(min_length=1)
    spans: list[Span] = Field(default_factory=list)
    task: Task
    validation: ValidationSummary
    provenance: Provenance
    split: Literal["train", "test"] = "train"
    synthesis: SynthesisInfo | None = None

    @model_validator(mode="after")
    def _consistent(self) -> DatasetRecord:
        if len(self.task.cases) != CASES_PER_TASK:
            raise ValueError(
                f"task {self.task.name!r} has {len(self.task.cases)} cases; a dataset record "
                f"needs exactly {CASES_PER_TASK}"
            )
        n = len(self.response)
        for i, s in enumerate(self.spans):
            if s.end > n:
                raise ValueError(f"spans.{i} ends at {s.end}, past the response ({n} chars)")
        if self.messages[-1].role != "assistant" or self.messages[-1].content != self.response:
            raise ValueError("the last message must be the assistant's response")
        return self
