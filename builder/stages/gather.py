"""Gather: read raw records from the configured sources, in source order, and apply the licence
policy (`sources.licenses.LicensePolicy`) to every one, so that a record the build may not use
never reaches a stage that costs (extract, the LLM, validation)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from schemas import Provenance, RawRecord
from sources.base import UnreadableRecord, get_source
from sources.licenses import LicensePolicy

from ..item import Item


@dataclass
class Gathered:
    items: list[Item] = field(default_factory=list)
    """Every record read, including rejected ones (duplicate ids)."""
    errors: list[str] = field(default_factory=list)
    """Sources that failed part-way: `source <name>: <reason>`."""


def gather(source_names: Iterable[str], *, limit: int | None = None,
           options: dict[str, dict[str, Any]] | None = None,
           licenses: Iterable[str] | str | None = None) -> Gathered:
    """Read records from each source in turn until `limit` records were read.

    A record id seen before is rejected (`duplicate_id`) rather than silently merged. A record
    whose licence the policy refuses (`licenses`: the allowed SPDX ids, default
    `sources.licenses.DEFAULT_ALLOWED`) is rejected with the policy's code (`license_unknown`,
    `license_copyleft`, `license_not_allowed`). A source that raises stops only itself; its
    error is reported and the others go on.
    """
    policy = LicensePolicy(licenses)
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
                elif item.rejection is None:
                    _apply_policy(policy, item)
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


def _apply_policy(policy: LicensePolicy, item: Item) -> None:
    lic = item.raw.provenance.license
    refused = policy.refusal(lic)
    if refused is None:
        return
    where = item.raw.meta.get("license_from")
    detail = f"{lic or 'none'}: {refused.reason}" + (f" (from {where})" if where else "")
    item.reject("gather", refused.code, detail)
