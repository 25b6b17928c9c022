"""Decontamination against benchmarks: loaders for benchmark files, an n-gram index of their
code and prompts, and the matching rule (see `index.py` for the rule and its sources)."""

from .index import DecontamConfig, DecontamIndex
from .loaders import load_benchmark, load_benchmarks
from .model import BenchmarkItem, DecontamError, LoadedBenchmark, Match

__all__ = [
    "BenchmarkItem",
    "DecontamConfig",
    "DecontamError",
    "DecontamIndex",
    "LoadedBenchmark",
    "Match",
    "build_index",
    "load_benchmark",
    "load_benchmarks",
]


def build_index(paths: list[str], cfg: DecontamConfig | None = None
                ) -> tuple[DecontamIndex, list[LoadedBenchmark]]:
    """Load every `--decontaminate` path (raising `DecontamError` on the first bad one) and
    index all their items together, so template text shared across files is recognised."""
    loaded = load_benchmarks(paths)
    return DecontamIndex([it for lb in loaded for it in lb.items], cfg), loaded
