"""Annotate: the CUDA-sensitive spans of the response (kernel bodies, launch configurations,
shared memory, syncs...) from the static analysis, as character offsets into the response."""

from __future__ import annotations

from typing import Any

from ..fingerprint import code_fingerprint
from ..item import Item
from .base import Stage
from .kernelbench_form import KERNELBENCH, response_spans


class Annotate(Stage):
    name = "annotate"
    version = 1

    def __init__(self, format: str = "program"):
        self.format = format
        """`kernelbench`: the response is Python; spans are those of its CUDA strings."""

    def config(self) -> dict[str, Any]:
        cfg = {"analysis": code_fingerprint("validators.analysis")}
        if self.format != "program":  # the default's keys stay those of earlier builds
            cfg["format"] = self.format
        return cfg

    def process(self, item: Item) -> Item:
        from validators.analysis import analyze

        if item.program is None:
            return item.reject(self.name, "not_specified", "no program to annotate")
        if self.format == KERNELBENCH:
            try:
                item.spans = response_spans(item.program.source)
            except ValueError as exc:
                return item.reject(self.name, "no_cuda_source", str(exc))
            return item
        analysis = analyze(item.program.source)
        if analysis.text != item.program.source:
            # Offsets are only meaningful if they index the response itself.
            return item.reject(self.name, "text_mismatch", "analysis decoded a different text")
        item.spans = sorted(analysis.spans, key=lambda s: (s.start, s.end, s.kind))
        return item
