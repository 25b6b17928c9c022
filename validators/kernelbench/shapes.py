"""The sizes a problem is checked at: its own when they fit, else the shared scaling rule's.

The rule is `validators.module_scaling`'s (literal dimensions included): the same one the
dataset builder uses for KernelBench tasks, so a verdict here and a task there agree on sizes.
"""

from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field

from validators.torch_module import DescribeSession, module_constants

DEFAULT_MAX_ELEMENTS = 1 << 18
"""Per tensor, as for tasks (`validators.module_scaling.DEFAULT_MAX_ELEMENTS`): ten emulated forward calls
under three checking variants stay within minutes on two cores."""


class ShapeError(Exception):
    """The problem cannot run at any size the cpu backend can afford, or not at all."""

    def __init__(self, kind: str, reason: str) -> None:
        super().__init__(reason)
        self.kind = kind


@dataclass
class ShapePlan:
    source: str
    """The problem's source at the sizes used (the original text when nothing was scaled)."""
    original_sizes: dict[str, int]
    sizes: dict[str, int]
    scaled: bool
    scaling: str = ""
    """How the sizes were chosen, for the result."""
    largest: int = 0
    notes: list[str] = field(default_factory=list)


def plan_sizes(source: str, *, max_elements: int = DEFAULT_MAX_ELEMENTS) -> ShapePlan:
    """The sizes to check `source` at. Raises ShapeError. Remembered per problem text in this
    process: an evaluation or a reward verifies many answers to one problem, and the plan (the
    module's own shapes, described at seed 0) is the same for each of them."""
    return copy.deepcopy(_remembered_plan(source, max_elements))


@functools.lru_cache(maxsize=128)
def _remembered_plan(source: str, max_elements: int) -> ShapePlan:
    # One sandboxed process (torch imported once) for the first look and any scaling after it.
    with DescribeSession() as session:
        return _plan_sizes(source, max_elements, session)


def _plan_sizes(source: str, max_elements: int, describe: DescribeSession) -> ShapePlan:
    original = module_constants(source)
    desc = describe(source, [original], device="meta")[0]
    if not desc.ok and desc.kind in ("syntax_error", "not_a_module", "import_error"):
        raise ShapeError(desc.kind, desc.reason)
    if desc.ok and desc.max_elements() <= max_elements:
        return ShapePlan(source=source, original_sizes=original, sizes=dict(original),
                         scaled=False, largest=desc.max_elements(),
                         scaling=f"original sizes (largest tensor {desc.max_elements()} "
                                 f"elements, cap {max_elements})")
    from validators.module_scaling import ModuleTaskError, scale_module

    try:
        scaled = scale_module(source, max_elements=max_elements, describe=describe)
    except ModuleTaskError as exc:
        raise ShapeError(exc.reason, exc.detail) from None
    return ShapePlan(source=scaled.code, original_sizes=dict(scaled.original_sizes),
                     sizes=dict(scaled.sizes), scaled=scaled.scaled, scaling=scaled.record)
