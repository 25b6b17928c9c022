"""A KernelBench problem's size plan is stored on disk (`$CKD_CACHE_DIR/kernelbench-plans`):
the next process that checks an answer to the same problem (one `validators check` per answer,
a restarted service) reads it instead of describing the model again. Only the problem's own
failures are stored; a timeout may be the machine's load and is planned again."""

from __future__ import annotations

import pytest

from validators.kernelbench import shapes
from validators.kernelbench.shapes import ShapeError, plan_sizes
from validators.sandbox import sandbox_mode

pytestmark = pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the namespace sandbox")

FITS = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x)

batch_size = 64
dim = 65536

def get_inputs():
    return [torch.rand(batch_size, dim)]

def get_init_inputs():
    return []
"""

# A weight whose sizes are literals of __init__: nothing can scale it.
TOO_LARGE = """import torch
import torch.nn as nn

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(2048, 2048))
    def forward(self, x):
        return x @ self.w

def get_inputs():
    return [torch.rand(4, 2048)]

def get_init_inputs():
    return []
"""


class _NoDescribe:
    def __init__(self, *args, **kwargs) -> None:
        raise AssertionError("the model was described again")


@pytest.fixture
def store(tmp_path, monkeypatch):
    monkeypatch.setenv("CKD_CACHE_DIR", str(tmp_path))
    shapes._remembered_plan.cache_clear()
    yield tmp_path / "kernelbench-plans"
    shapes._remembered_plan.cache_clear()


def _new_process(monkeypatch) -> None:
    """What a fresh process has: nothing remembered in memory, and no describing allowed."""
    shapes._remembered_plan.cache_clear()
    monkeypatch.setattr(shapes, "DescribeSession", _NoDescribe)


def test_a_plan_is_read_back_by_the_next_process(store, monkeypatch):
    plan = plan_sizes(FITS)
    assert plan.scaled and plan.sizes["batch_size"] * plan.sizes["dim"] <= shapes.DEFAULT_MAX_ELEMENTS
    assert len(list(store.glob("*.json"))) == 1
    _new_process(monkeypatch)
    assert plan_sizes(FITS) == plan
    # Another cap is another plan: not the stored one.
    with pytest.raises(AssertionError, match="described again"):
        plan_sizes(FITS, max_elements=1 << 12)


def test_the_problems_own_failure_is_stored(store, monkeypatch):
    with pytest.raises(ShapeError) as first:
        plan_sizes(TOO_LARGE)
    assert first.value.kind == "too_large"
    _new_process(monkeypatch)
    with pytest.raises(ShapeError) as again:
        plan_sizes(TOO_LARGE)
    assert (again.value.kind, str(again.value)) == (first.value.kind, str(first.value))


def test_a_timeout_is_planned_again(store, monkeypatch):
    def slow(source, max_elements, describe):
        raise ShapeError("timeout", "ran out of time (60s, sandbox wall limit)")

    monkeypatch.setattr(shapes, "_plan_sizes", slow)
    with pytest.raises(ShapeError, match="ran out of time"):
        plan_sizes(FITS)
    assert not store.exists() or not list(store.glob("*.json"))
    monkeypatch.undo()
    monkeypatch.setenv("CKD_CACHE_DIR", str(store.parent))
    shapes._remembered_plan.cache_clear()
    assert plan_sizes(FITS).scaled


def test_an_unreadable_stored_plan_is_planned_again(store, monkeypatch):
    plan = plan_sizes(FITS)
    (path,) = store.glob("*.json")
    for garbage in ("{not json", '{"plan": {"source": 1}}', '{"error": {}}', "[]"):
        path.write_text(garbage)
        shapes._remembered_plan.cache_clear()
        assert plan_sizes(FITS) == plan
    assert shapes._load(path) == plan  # written again whole
