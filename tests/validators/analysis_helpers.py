"""Invariants every `Analysis` must satisfy, shared by the analysis tests."""

from __future__ import annotations

from schemas import SPAN_KINDS
from validators.analysis import FEATURES, Analysis


def check_invariants(a: Analysis) -> None:
    n = len(a.text)
    keys = [(s.start, s.kind) for s in a.spans]
    assert keys == sorted(keys), "spans not sorted by (start, kind)"
    last_end: dict[str, int] = {}
    for s in a.spans:
        assert s.kind in SPAN_KINDS
        assert 0 <= s.start < s.end <= n, (s, n)
        assert s.start >= last_end.get(s.kind, 0), f"overlapping {s.kind} spans at {s.start}"
        last_end[s.kind] = s.end
    assert a.features == sorted(set(a.features))
    assert set(a.features) <= set(FEATURES)
    assert {h.feature for h in a.feature_hits} == set(a.features)
    for h in a.feature_hits:
        assert 0 <= h.span.start <= h.span.end <= n
    for f in a.kernels + a.device_functions:
        assert f.span.start <= f.body.start < f.body.end <= f.span.end <= n
        assert a.text[f.body.start] == "{" and a.text[f.body.end - 1] == "}"
    for x in a.launches:
        assert a.text[x.config_span.start : x.config_span.start + 3] == "<<<"
        assert a.text[x.config_span.end - 3 : x.config_span.end] == ">>>"
        assert x.call_span.start <= x.config_span.start < x.config_span.end <= x.call_span.end
    assert not any(e.startswith("analysis failed") for e in a.errors), a.errors
