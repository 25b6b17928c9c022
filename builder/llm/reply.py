"""What one LLM call returns: the text, the tokens it cost, and how it was obtained."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Generic, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class Usage:
    """Tokens and calls, addable so a record (or a build) can sum what its answers cost.

    `calls` counts answers obtained, `cached_calls` those of them read from the response cache
    (their token counts are the original ones, so a rebuild reports what the data cost to make).
    `retries` counts transport retries (429, 5xx, timeouts, dropped connections).
    `usage_missing` counts answers whose server sent no `usage`: their tokens are counted as 0.
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    cached_calls: int = 0
    retries: int = 0
    usage_missing: int = 0

    def __add__(self, other: Usage) -> Usage:
        if not isinstance(other, Usage):
            return NotImplemented
        return Usage(**{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)})

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Reply:
    text: str
    usage: Usage
    cached: bool
    attempts: int
    """HTTP requests made for this answer (0 when it came from the cache)."""
    finish_reason: str
    """As the server said it ("stop", "length", ...); "" when it gave none."""


@dataclass(frozen=True)
class Structured(Generic[M]):
    value: M
    usage: Usage
    attempts: int
    """Answers asked for: 1 when the first one was valid."""
    raw_texts: list[str] = field(default_factory=list)
    """Every answer's text, the valid one last."""
