"""Filter: keep only records that are trustworthy training data.

A record stays when it passed every one of its five cases on the backend that judged it,
its response has kernel-body and launch-configuration spans (the paper's CUDA mask), its
licence is known, and it assembles into a valid `DatasetRecord`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from schemas import CASES_PER_TASK, ErrorOrigin, Status

from ..item import Item
from ..records import make_record
from .archive import is_archive
from .base import Stage

UNKNOWN_LICENSES = frozenset({"unknown", "noassertion", "none", ""})


@dataclass(frozen=True)
class FilterConfig:
    required_spans: tuple[str, ...] = ("kernel_body", "launch_config")
    cases: int = CASES_PER_TASK
    reject_licenses: frozenset[str] = field(default=UNKNOWN_LICENSES)
    portable_only: bool = False
    """Reject a pass that relies on behaviour CUDA leaves undefined (a portability note)."""
    kernelbench: bool = False
    """Every verdict is the KernelBench verifier's (`--format kernelbench`): judged by seeds."""


class Filter(Stage):
    name = "filter"
    version = 1

    def __init__(self, cfg: FilterConfig = FilterConfig()):
        self.cfg = cfg

    def config(self) -> dict[str, Any]:
        return {
            "required_spans": list(self.cfg.required_spans),
            "cases": self.cfg.cases,
            "reject_licenses": sorted(self.cfg.reject_licenses),
            **({"portable_only": True} if self.cfg.portable_only else {}),
            **({"kernelbench": True} if self.cfg.kernelbench else {}),
        }

    def process(self, item: Item) -> Item:
        v = item.validation
        if v is None:
            return item.reject(self.name, "not_validated")
        if v.status == Status.ERROR:
            # No verdict on the program, counted apart from every verdict: ours is retried by
            # a resumed build; the task's (its reference failed) marks a broken task.
            why = "task_error" if v.error_origin == ErrorOrigin.TASK else "validator_error"
            return item.reject(self.name, why, v.reason[:500])
        if v.status != Status.PASSED:
            return item.reject(self.name, f"validation_{v.status.value}", v.reason[:500])
        passed = [c for c in v.cases if c.status == Status.PASSED]
        if is_archive(item) or self.cfg.kernelbench:
            # The KernelBench verifier runs two input sets per seed: every call must pass, on
            # at least as many seeds as a program's cases.
            seeds = {c.seed for c in passed}
            if len(passed) != len(v.cases) or len(seeds) < self.cfg.cases:
                return item.reject(
                    self.name, "cases_incomplete",
                    f"{len(passed)} of {len(v.cases)} calls passed on {len(seeds)} seeds; "
                    f"every call on {self.cfg.cases} seeds required",
                )
        elif len(v.cases) != self.cfg.cases or len(passed) != self.cfg.cases:
            return item.reject(
                self.name, "cases_incomplete",
                f"{len(passed)} of {len(v.cases)} cases passed; {self.cfg.cases} required",
            )
        unportable = [n for n in v.notes if n.startswith("portability:")]
        if self.cfg.portable_only and unportable:
            return item.reject(self.name, "not_portable", "; ".join(unportable)[:500])
        kinds = {s.kind for s in item.spans or []}
        for kind in self.cfg.required_spans:
            if kind not in kinds:
                return item.reject(self.name, f"no_{kind}_span")
        lic = item.raw.provenance.license.strip().lower()
        if lic in self.cfg.reject_licenses:
            return item.reject(self.name, "license_unknown", item.raw.provenance.license)
        make_record(item)  # raises (-> stage_error:filter) when the record would be invalid
        return item
