"""Character spans over a response: the CUDA-sensitive regions CuSeT weights."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Contract

SpanKind = Literal[
    "kernel_body",
    "launch_config",
    "shared_memory",
    "sync",
    "atomic",
    "warp_primitive",
    "thread_index",
]
SPAN_KINDS: tuple[str, ...] = SpanKind.__args__  # type: ignore[attr-defined]
CUDA_MASK_KINDS: frozenset[str] = frozenset({"kernel_body", "launch_config"})
"""The kinds that make up the paper's CUDA mask (kernel bodies, launch configurations)."""


class Span(Contract):
    """Half-open character range `[start, end)` into an exact text."""

    start: int = Field(ge=0)
    end: int = Field(ge=0)
    kind: SpanKind
    label: str = ""
    """Optional name, e.g. the kernel the span belongs to."""

    @model_validator(mode="after")
    def _ordered(self) -> Span:
        if self.end < self.start:
            raise ValueError(f"end ({self.end}) is before start ({self.start})")
        return self

    def text(self, source: str) -> str:
        return source[self.start : self.end]
