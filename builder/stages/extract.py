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


def kernel_code(analysis: Any, focus: str | None = None) -> str:
    """The text of every kernel and device function, in source order: what near dedup
    compares, so shared I/O boilerplate in `main()` does not make distinct kernels look alike.
    With `focus`, only that kernel: the records of one file's kernels must not all look like
    the same file."""
    if focus is not None:
        return "\n".join(analysis.text[k.span.start : k.span.end]
                         for k in analysis.kernels if k.name == focus)
    funcs = sorted([*analysis.kernels, *analysis.device_functions], key=lambda f: f.span.start)
    return "\n".join(analysis.text[f.span.start : f.span.end] for f in funcs)


class Extract(Stage):
    name = "extract"
    version = 2

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

        raw = item.raw
        if raw.module is not None and not raw.text.strip():
            # A task given by a PyTorch module alone: it is deduplicated on the module's code.
            item.analysis = AnalysisSummary()
            item.text_hash = text_hash(raw.module)
            item.minhash = [int(v) for v in minhash(raw.module, self.dedup).hashvalues]
            return item
        analysis = analyze(raw.text)
        item.analysis = summarise(analysis)
        if not analysis.kernels:
            why = "; ".join(analysis.errors[:2]) if analysis.errors else "no __global__ function"
            return item.reject(self.name, "no_kernel", why)
        if raw.focus is not None and raw.focus not in {k.name for k in analysis.kernels}:
            return item.reject(self.name, "no_kernel", f"the record's kernel {raw.focus!r} is not "
                               f"defined in its text (found: {', '.join(item.analysis.kernels)})")
        code = kernel_code(analysis, raw.focus)
        # Exact dedup: the whole text for a program, the kernel itself for one kernel of a file
        # (two files carrying the same kernel are duplicates even if their mains differ).
        item.text_hash = text_hash(code if raw.focus is not None else analysis.text)
        item.minhash = [int(v) for v in minhash(code, self.dedup).hashvalues]
        return item
