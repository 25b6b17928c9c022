"""The full default build, end to end on the built-in corpus (`slow`). A file of its own: the
suite runs a file per process at a time, and this build is the longest single test."""

from __future__ import annotations

import json

import pytest
from test_build import _WHY_NOT, check_dataset, run_build

pytestmark = pytest.mark.skipif(_WHY_NOT is not None, reason=str(_WHY_NOT))


@pytest.mark.slow
def test_full_default_build(tmp_path):
    """Cold stage cache; the validators' build and reference caches are the session's
    (`$CKD_CACHE_DIR`), so tests that check built-in programs after it find their builds. That
    every correct built-in program passes the thorough checks is this test's alone (the
    acceptance table of tests/validators/test_cpu_corpus.py checks the mutants)."""
    from validators.build_cache import cache_root

    out = tmp_path / "full"
    proc = run_build(out, cache_root(), timeout=1800)
    rows = check_dataset(out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["splits"]["test"] >= 10
    assert manifest["splits"]["train"] >= 30
    assert len(rows) == sum(manifest["splits"].values())
    assert "kept" in proc.stdout
    # Every built-in task is kept: each one passed all five cases on the cpu backend under both
    # schedules and the ASan build (this is the corpus's own end-to-end check), and exactly the
    # held-out tasks form the test split.
    from sources.builtin import HELD_OUT, load_tasks

    names = {task.name for task, _ in load_tasks()}
    by_split = {}
    for r in rows:
        by_split.setdefault(r["split"], set()).add(r["task_name"])
    assert set().union(*by_split.values()) == names
    assert by_split["test"] == set(HELD_OUT)
