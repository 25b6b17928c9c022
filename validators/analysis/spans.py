"""Assembling `schemas.Span` lists: per kind, sorted and non-overlapping."""

from __future__ import annotations

from schemas import Span


def merge(raw: list[tuple[int, int, str, str]]) -> list[Span]:
    """`(start, end, kind, label)` tuples -> spans sorted by `(start, kind)`.

    Within a kind, overlapping or nested ranges merge into one covering range whose label
    joins the distinct labels with `,`; touching ranges stay separate. Empty ranges are dropped.
    """
    by_kind: dict[str, list[tuple[int, int, str]]] = {}
    for start, end, kind, label in raw:
        if end > start:
            by_kind.setdefault(kind, []).append((start, end, label))
    out: list[tuple[int, str, int, str]] = []
    for kind, items in by_kind.items():
        items.sort(key=lambda t: (t[0], -t[1]))
        cur_s, cur_e, cur_l = items[0]
        for s, e, label in items[1:]:
            if s < cur_e:
                cur_e = max(cur_e, e)
                if label and label not in cur_l.split(","):
                    cur_l = f"{cur_l},{label}" if cur_l else label
                continue
            out.append((cur_s, kind, cur_e, cur_l))
            cur_s, cur_e, cur_l = s, e, label
        out.append((cur_s, kind, cur_e, cur_l))
    out.sort()
    # (pydantic's model_construct is slower than validating these four small fields)
    return [Span(start=s, end=e, kind=k, label=label) for s, k, e, label in out]
