"""Gather: read raw records from the configured sources, in source order."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from schemas import Provenance, RawRecord
from sources.base import UnreadableRecord, get_source

from ..item import Item


@dataclass
class Gathered:
    items: list[Item] = field(default_factory=list)
    """Every record read, including rejected ones (duplicate ids)."""
    errors: list[str] = field(default_factory=list)
    """Sources that failed part-way: `source <name>: <reason>`."""


def gather(source_names: Iterable[str], *, limit: int | None = None,
           options: dict[str, dict[str, Any]] | None = None) -> Gathered:
    """Read records from each source in turn until `limit` records were read.

    A record id seen before is rejected (`duplicate_id`) rather than silently merged. A
    source that raises stops only itself; its error is reported and the others go on.
    """
    out = Gathered()
    seen: set[str] = set()
    for name in source_names:
        if limit is not None and len(out.items) >= limit:
            break
        try:
            source = get_source(name, **(options or {}).get(name, {}))
        except Exception as exc:  # checked at preflight; a late failure still stops only this source
            out.errors.append(f"source {name}: {type(exc).__name__}: {exc}".splitlines()[0])
            continue
        try:
            for raw in source.records():
                if isinstance(raw, UnreadableRecord):
                    item = _unreadable(name, raw)
                else:
                    item = Item(raw=raw)
                if raw.id in seen:
                    item.reject("gather", "duplicate_id", f"id {raw.id!r} already read")
                seen.add(raw.id)
                out.items.append(item)
                if limit is not None and len(out.items) >= limit:
                    break
        except Exception as exc:  # a broken source must not stop the others
            out.errors.append(f"source {name}: {type(exc).__name__}: {exc}".splitlines()[0])
    return out


def _unreadable(source: str, bad: UnreadableRecord) -> Item:
    placeholder = RawRecord(
        id=bad.id,
        text="",
        provenance=Provenance(source=source, origin=bad.origin or "?", license="unknown"),
    )
    return Item(raw=placeholder).reject("gather", bad.code or "unreadable", bad.reason)
