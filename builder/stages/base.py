"""What a per-record stage is, and how one runs over an item with the cache.

A stage is a small class with a `name`, a `version` (bump it when its output changes for the
same input), `config()` (the settings its result depends on) and `process(item) -> item`,
which fills the stage's field or rejects the item. `process` is a plain function of the
item: no Ray, no cache, no timing; `apply_stage` adds those.
"""

from __future__ import annotations

import time
import traceback
from abc import ABC, abstractmethod
from typing import Any

from ..cache import StageCache, cache_key
from ..item import Envelope, Item, StageEvent


class Stage(ABC):
    name: str = "stage"
    version: int = 1
    cacheable: bool = True
    """Cheap stages may skip the cache; expensive ones (validate) must not."""

    def config(self) -> dict[str, Any]:
        """Settings the result depends on (part of the cache key)."""
        return {}

    @abstractmethod
    def process(self, item: Item) -> Item:
        """Return the item with this stage's field filled, or rejected with a reason."""

    def key(self, item: Item) -> str:
        return cache_key(self.name, self.version, item.digest(), self.config())

    def keep(self, result: Item) -> bool:
        """Whether `result` may be cached: False for outcomes of the moment (a timeout on a
        busy machine) that a resumed build should compute again."""
        return True


def stage_error_message(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:500]


def apply_stage(stage: Stage, env: Envelope, cache: StageCache | None) -> Envelope:
    """Run `stage` on one envelope: reuse a cached result, or compute and cache it.

    A rejected item passes through untouched. An exception inside the stage rejects the
    record with reason `stage_error:<stage>` (the message in the detail) and is not cached,
    so a re-run tries again.
    """
    item = env.item
    if not item.alive:
        return env
    t0 = time.perf_counter()
    event = StageEvent(stage=stage.name)
    key = stage.key(item) if (cache is not None and stage.cacheable) else None
    if key is not None:
        found = cache.get(stage.name, key)
        if found.discarded:
            event.cache_discarded = True
            event.note = found.discarded
        if found.body is not None:
            try:
                out = Item.model_validate_json(found.body)
                if out.id != item.id:
                    raise ValueError(f"cached item is {out.id!r}, expected {item.id!r}")
            except ValueError as exc:
                # Checksum was fine but the content does not parse (e.g. written by an
                # incompatible version): recompute like any damaged entry.
                event.cache_discarded = True
                event.note = f"cache entry {key[:12]} discarded: {str(exc).splitlines()[0]}"
            else:
                event.cached = True
                event.seconds = time.perf_counter() - t0
                return Envelope(item=out, events=[*env.events, event])
    work = item.model_copy(deep=True)
    try:
        out = stage.process(work)
    except Exception as exc:  # one bad record must not stop the build
        out = item.model_copy(deep=True).reject(
            stage.name, f"stage_error:{stage.name}", stage_error_message(exc)
        )
        event.note = traceback.format_exc(limit=3)[-2000:]
    else:
        if key is not None and stage.keep(out):
            cache.put(stage.name, key, out.model_dump_json())
    event.seconds = time.perf_counter() - t0
    return Envelope(item=out, events=[*env.events, event])
