"""What the decontamination package reads and reports: benchmark items and matches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Language = Literal["cuda", "python"]
"""How a code text is tokenised: which comment syntax is removed before matching."""


class DecontamError(Exception):
    """A benchmark path that cannot be used; the message is one line naming the path and why."""


@dataclass(frozen=True)
class BenchmarkItem:
    """One benchmark problem: the code a model would be asked to write (or is shown) and the
    prompts it is asked with. Several rows of one task (CUDABench's five input scales) make
    one item."""

    benchmark: str
    item_id: str
    code: list[str] = field(default_factory=list)
    prompts: list[str] = field(default_factory=list)
    language: Language = "cuda"
    """The language of every text in `code` (KernelBench and TritonBench are `python`)."""


@dataclass(frozen=True)
class LoadedBenchmark:
    """The items of one `--decontaminate` path and what was skipped while reading it."""

    path: str
    format: str
    items: list[BenchmarkItem]
    notes: list[str] = field(default_factory=list)
    """One line per kind of skipped input (malformed JSONL lines, files that are not tasks)."""


@dataclass(frozen=True)
class Match:
    """A benchmark item that a record's code or prompt overlaps with."""

    benchmark: str
    item_id: str
    kind: Literal["code", "prompt"]
    overlap: float
    """The fraction of the item's distinctive n-grams that occur in the record."""
    ngram: str
    """The longest run of tokens the record shares with the item (shortened for display)."""
    run: int = 0
    """Length of that shared run, in tokens (code) or words (prompt)."""
    shared: int = 0
    """How many distinct distinctive n-grams of the item the record contains."""
    part: Literal["kernel", "code", "module", "prompt"] = "code"
    """The item's part that matched (`builder.decontam.parts.Part`): its kernels and device
    functions, its CUDA code without functions, its Python module, or its prompts."""

    def describe(self) -> str:
        unit = "words" if self.kind == "prompt" else "tokens"
        return (
            f"{self.benchmark} item {self.item_id} ({self.part}): {self.overlap:.0%} of its "
            f"{self.part} n-grams, longest shared run {self.run} {unit} ({self.ngram!r})"
        )
