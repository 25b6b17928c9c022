"""Extract: static analysis of the record's text; files with no kernel leave here."""

from __future__ import annotations

from typing import Any

from ..fingerprint import code_fingerprint
from ..item import AnalysisSummary, Item
from .base import Stage
from .dedup import DedupConfig, minhash
from .normalise import text_hash


def summarise(analysis: Any) -> AnalysisSummary:
    return AnalysisSummary(
        kernels=[k.name for k in analysis.kernels],
        device_functions=[f.name for f in analysis.device_functions],
        launches=[launch.kernel for launch in analysis.launches],
        features=list(analysis.features),
        errors=list(analysis.errors)[:20],
    )


def kernel_code(analysis: Any) -> str:
    """The text of every kernel and device function, in source order: what near dedup
    compares, so shared I/O boilerplate in `main()` does not make distinct kernels look alike."""
    funcs = sorted([*analysis.kernels, *analysis.device_functions], key=lambda f: f.span.start)
    return "\n".join(analysis.text[f.span.start : f.span.end] for f in funcs)


class Extract(Stage):
    name = "extract"
    version = 1

    def __init__(self, dedup: DedupConfig | None = None):
        self.dedup = dedup or DedupConfig()

    def config(self) -> dict[str, Any]:
        return {
            "analysis": code_fingerprint("validators.analysis"),
            "num_perm": self.dedup.num_perm,
            "shingle": self.dedup.shingle,
            "seed": self.dedup.seed,
        }

    def process(self, item: Item) -> Item:
        from validators.analysis import analyze

        analysis = analyze(item.raw.text)
        item.analysis = summarise(analysis)
        item.text_hash = text_hash(analysis.text)
        if not analysis.kernels:
            why = "; ".join(analysis.errors[:2]) if analysis.errors else "no __global__ function"
            return item.reject(self.name, "no_kernel", why)
        item.minhash = [int(v) for v in minhash(kernel_code(analysis), self.dedup).hashvalues]
        return item
