"""The build manifest: what a build did, stage by stage."""

from __future__ import annotations

from datetime import datetime

from pydantic import Field

from .base import Contract


class StageStats(Contract):
    name: str
    records_in: int = 0
    records_out: int = 0
    seconds: float = 0.0
    cached: int = 0
    """Records whose result came from the stage cache."""
    cache_discarded: int = 0
    """Cache entries found damaged (checksum or parse failure), discarded and recomputed."""
    rejected: dict[str, int] = Field(default_factory=dict)
    """Reason -> count of records this stage dropped."""


class ShardInfo(Contract):
    split: str
    path: str
    records: int
    sha256: str


class BuildManifest(Contract):
    created_at: datetime
    tool_version: str
    config: dict[str, str | int | float | bool | list[str] | None] = Field(default_factory=dict)
    backend: str
    sources: list[str]
    stages: list[StageStats] = Field(default_factory=list)
    shards: list[ShardInfo] = Field(default_factory=list)
    splits: dict[str, int] = Field(default_factory=dict)
    environment: dict[str, str] = Field(default_factory=dict)
    """Compiler and library versions that produced the verdicts."""
    synthesis: dict[str, int | float | str] = Field(default_factory=dict)
    """What the LLM stages cost and did: calls (and how many came from the response cache),
    prompt and completion tokens, repair rounds, and the share of original kernel text kept."""
    archive: dict[str, int] = Field(default_factory=dict)
    """What became of the rows of an archive of verified answers (the AI CUDA Engineer's):
    `rows`, `refused:not_correct`, `verified`, `passed`, `failed:<status>[:<rule>]`,
    `needs_gpu`, `no_verdict:<origin>`, `not_verified:<reason>`, `per_task_limit`, `kept`.
    Empty when the build read none."""
