"""The sizes a problem is checked at: its own when they fit, else the shared scaling rule's.

The rule is `validators.module_scaling`'s (literal dimensions included): the same one the
dataset builder uses for KernelBench tasks, so a verdict here and a task there agree on sizes.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from validators.build_cache import cache_root
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


STORED_ERRORS = frozenset({"syntax_error", "not_a_module", "import_error", "needs_cuda",
                           "unsupported_dtype", "too_large"})
"""Plan failures that are the problem's own and the same on every try, so they are stored.
A timeout or an out-of-memory describe may be the machine's load, and is tried again."""


def plan_sizes(source: str, *, max_elements: int = DEFAULT_MAX_ELEMENTS) -> ShapePlan:
    """The sizes to check `source` at. Raises ShapeError. Remembered per problem text in this
    process, and on disk under `$CKD_CACHE_DIR/kernelbench-plans`: an evaluation or a reward
    verifies many answers to one problem, often one `validators check` process each, and the
    plan (the module's own shapes, described at seed 0, 1-5 s; minutes for some level-3
    models) is the same for each of them."""
    return copy.deepcopy(_remembered_plan(source, max_elements))


@functools.lru_cache(maxsize=128)
def _remembered_plan(source: str, max_elements: int) -> ShapePlan:
    path = _stored_path(source, max_elements)
    stored = _load(path)
    if isinstance(stored, ShapeError):
        raise stored
    if stored is not None:
        return stored
    try:
        # One sandboxed process (torch imported once) for the first look and any scaling.
        with DescribeSession() as session:
            plan = _plan_sizes(source, max_elements, session)
    except ShapeError as exc:
        if exc.kind in STORED_ERRORS:
            _store(path, {"error": {"kind": exc.kind, "reason": str(exc)}})
        raise
    _store(path, {"plan": dataclasses.asdict(plan)})
    return plan


@functools.cache
def _planner_digest() -> str:
    """The planner's own code and torch's version: a change to either plans afresh."""
    import torch

    from validators import module_scaling, torch_module

    h = hashlib.sha256(torch.__version__.encode())
    for mod in (module_scaling, torch_module):
        h.update(Path(mod.__file__).read_bytes())
    h.update(Path(__file__).read_bytes())
    return h.hexdigest()


def _stored_path(source: str, max_elements: int) -> Path:
    key = hashlib.sha256(json.dumps([source, max_elements, _planner_digest()]).encode())
    return cache_root() / "kernelbench-plans" / f"{key.hexdigest()}.json"


def _load(path: Path) -> ShapePlan | ShapeError | None:
    """A stored plan or problem failure; None when absent or unreadable (planned again)."""
    try:
        data = json.loads(path.read_text())
        if "error" in data:
            return ShapeError(str(data["error"]["kind"]), str(data["error"]["reason"]))
        return ShapePlan(**data["plan"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _store(path: Path, data: dict) -> None:
    # Written whole and renamed into place: a reader in another process sees all or nothing.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    except OSError:
        return  # an unwritable cache only costs the next process a plan
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(data, f)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)


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
