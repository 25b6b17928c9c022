"""Build settings (what `python -m builder run` takes)."""

from __future__ import annotations

import json
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
    gpu_per_validation: float = 0.25
    """The share of a GPU each validation task requests on `cuda` (`--gpu-per-validation`):
    most of a check is nvcc on the CPU, so several share one GPU and builds overlap runs."""
    shard_records: int = 5000
    cache_dir: Path | None = None
    """Stage cache; default `<out>/.cache`."""
    source_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Source name -> the options its `records()` takes (from the `--github-*`, `--hf-*`, ...
    flags)."""
    licenses: str | None = None
    """Allowed SPDX ids, comma-separated (`--licenses`); None: `sources.licenses.DEFAULT_ALLOWED`.
    Gather refuses every record of any source whose licence they do not cover."""
    llm: Any = None
    """`builder.llm.LLMConfig`, or None: records without a task are rejected `no_task_specifier`."""
    repair_rounds: int = 1
    """LLM-written programs that fail validation get this many rounds with the verdict fed back."""
    min_kernel_kept: float = 0.9
    """An LLM program must keep at least this share of the original kernel's characters."""
    portable_only: bool = False
    """Drop programs that pass only by relying on behaviour CUDA leaves undefined (their
    validation carries a portability note; `--portable-only`)."""
    per_task: int = 3
    """Attempts kept per task of a source that holds many (the AI CUDA Engineer archive): the
    passing ones with the fastest recorded runtimes (`--per-task`)."""
    format: str = "program"
    """What a record is (`--format`): `program`, the standalone CUDA program of the file
    convention; `kernelbench`, the KernelBench problem as the prompt and a `ModelNew` answer
    (Python, CUDA inline) as the response (`builder.stages.kernelbench_form`)."""
    decontaminate: list[Path] = field(default_factory=list)
    """Benchmark files/folders whose items must not leak into the dataset (code and prompts)."""

    @property
    def cache_root(self) -> Path:
        return self.cache_dir if self.cache_dir is not None else self.out / ".cache"

    def manifest_config(self) -> dict[str, Any]:
        d = asdict(self)
        d["out"] = str(self.out)
        d["cache_dir"] = str(self.cache_root)
        # Nested settings as JSON text: the manifest's config is flat. No secrets live here
        # (API keys are read from the environment by name).
        d["source_options"] = json.dumps(self.source_options, sort_keys=True, default=str)
        d["llm"] = json.dumps(self.llm.params(), sort_keys=True, default=str) if self.llm else None
        d["decontaminate"] = [str(p) for p in self.decontaminate]
        return d
