"""A memo of the most recently used results within a size budget, safe to share between threads
(the builder's stages run items on a thread pool). Used for static analyses and the prompt's
per-file walks: a file with eight kernels is eight records, and each asks about the same text."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """`get(key, size, compute)`: the value kept for `key`, else `compute()` kept under `size`
    units of the budget, the least recently used entries dropped to fit. A value larger than the
    whole budget is computed and not kept. Two threads asking for the same missing key may both
    compute it; the first kept stays."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        self._items: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._used = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, size: int, compute: Callable[[], V]) -> V:
        with self._lock:
            hit = self._items.get(key)
            if hit is not None:
                self._items.move_to_end(key)
                return hit[0]
        value = compute()
        if size > self.budget:
            return value
        with self._lock:
            if key not in self._items:
                self._items[key] = (value, size)
                self._used += size
            while self._used > self.budget:
                _, (_, dropped) = self._items.popitem(last=False)
                self._used -= dropped
        return value

    @property
    def used(self) -> int:
        return self._used

    def __contains__(self, key: Hashable) -> bool:
        with self._lock:
            return key in self._items

    def __len__(self) -> int:
        return len(self._items)
