"""The envelope a record travels in through the pipeline.

An `Item` holds only content (what a stage computed), never timing, so that its JSON is a
stable input for the content-addressed stage cache. Timing and cache facts travel beside it
in a `Trace`.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field

from schemas import ChatMessage, Program, RawRecord, Span, Task, ValidationResult


class Rejection(BaseModel):
    """Why a record left the pipeline: `reason` is a short code counted in the manifest,
    `detail` the per-record specifics (which record it duplicates, the exception text...)."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    reason: str
    detail: str = ""

    def message(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else self.reason


class AnalysisSummary(BaseModel):
    """What extract keeps of the static analysis of the record's text."""

    model_config = ConfigDict(extra="forbid")

    kernels: list[str] = Field(default_factory=list)
    device_functions: list[str] = Field(default_factory=list)
    launches: list[str] = Field(default_factory=list)
    """Kernel name of every `<<<...>>>` launch, in source order."""
    features: list[str] = Field(default_factory=list)
    errors: list[str] = Field(default_factory=list)


class Synthesis(BaseModel):
    """What the LLM did for a record: who wrote it, at what cost, and how faithful to the
    original kernel the program stayed. Counted in the manifest; kept with the record."""

    model_config = ConfigDict(extra="forbid")

    specifier: str
    model: str = ""
    prompt_version: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    attempts: int = 0
    """Answers asked for at specify (1 + the re-asks after invalid answers)."""
    repair_rounds: int = 0
    """Rounds of 'here is the verdict, fix the program' after a failed validation."""
    kernel_kept: float | None = None
    """Share of the original kernel's characters kept in the program (None: no original kernel,
    e.g. a task given by a PyTorch module alone)."""

    def add_usage(self, usage: object) -> None:
        for k in ("prompt_tokens", "completion_tokens", "calls", "cached_calls"):
            setattr(self, k, getattr(self, k) + int(getattr(usage, k, 0) or 0))


class Item(BaseModel):
    """A record on its way through the stages; each stage fills its own field."""

    model_config = ConfigDict(extra="forbid")

    raw: RawRecord
    analysis: AnalysisSummary | None = None
    text_hash: str | None = None
    """sha256 of the normalised text (extract), the exact-dedup key."""
    minhash: list[int] | None = None
    """MinHash signature of the kernel code (extract), the near-dedup key."""
    task: Task | None = None
    program: Program | None = None
    prompt: str | None = None
    messages: list[ChatMessage] | None = None
    validation: ValidationResult | None = None
    spans: list[Span] | None = None
    synthesis: Synthesis | None = None
    rejection: Rejection | None = None

    @property
    def id(self) -> str:
        return self.raw.id

    @property
    def alive(self) -> bool:
        return self.rejection is None

    def digest(self) -> str:
        return hashlib.sha256(self.model_dump_json().encode()).hexdigest()

    def reject(self, stage: str, reason: str, detail: str = "") -> Item:
        self.rejection = Rejection(stage=stage, reason=reason, detail=detail)
        return self


class StageEvent(BaseModel):
    """What happened to one record in one stage (volatile: not part of the cache key)."""

    model_config = ConfigDict(extra="forbid")

    stage: str
    seconds: float = 0.0
    cached: bool = False
    cache_discarded: bool = False
    """A cached result was found corrupted, discarded and recomputed."""
    note: str = ""


class Envelope(BaseModel):
    """An item with the events of the stages it went through; what executors move around."""

    model_config = ConfigDict(extra="forbid")

    item: Item
    events: list[StageEvent] = Field(default_factory=list)

    def to_row(self) -> dict[str, str]:
        return {"id": self.item.id, "envelope": self.model_dump_json()}

    @classmethod
    def from_row(cls, row: dict[str, str]) -> Envelope:
        return cls.model_validate_json(row["envelope"])
