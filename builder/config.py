"""Build settings (what `python -m builder run` takes)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def default_workers() -> int:
    return max(1, min(os.cpu_count() or 1, 2))


@dataclass
class BuildConfig:
    sources: list[str] = field(default_factory=lambda: ["builtin"])
    backend: str = "auto"
    out: Path = Path("out/dataset")
    workers: int = field(default_factory=default_workers)
    limit: int | None = None
    resume: bool = True
    """False (`--fresh`): drop the stage cache and previous outputs first."""
    address: str | None = None
    executor: str = "ray"
    near_dup_threshold: float = 0.85
    thorough: bool = True
    """Every schedule and build variant the backend offers (e.g. reverse order, ASan)."""
    shard_records: int = 5000
    cache_dir: Path | None = None
    """Stage cache; default `<out>/.cache`."""

    @property
    def cache_root(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else self.out / ".cache"

    def manifest_config(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"] = str(self.out)
        d["cache_dir"] = str(self.cache_root)
        return d
