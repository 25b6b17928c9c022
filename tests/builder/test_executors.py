"""Executors: Ray gives what the in-process executor gives; a worker that dies is pinned on
its record and stage; an address nobody answers fails fast."""

from __future__ import annotations

import os
import socket
import time

import pytest
from builder_helpers import make_raw, scale_program

from builder.cache import StageCache
from builder.executors import ExecutorError, LocalExecutor, RayExecutor, probe_address
from builder.item import Envelope, Item
from builder.stages import Extract
from builder.stages.base import Stage


class CrashOn(Stage):
    """Kills its worker process on records marked `crash` (what a segfault in-process does)."""

    name = "crashy"
    cacheable = False

    def process(self, item: Item) -> Item:
        if item.raw.meta.get("crash"):
            os._exit(3)
        item.raw.meta["ok"] = "1"
        return item


def envelopes() -> list[Envelope]:
    out = []
    for i in range(4):
        raw = make_raw(f"r/{i}", scale_program(float(i)).replace("a * x[i]", f"a * x[i] + {i}.0f"))
        if i == 2:
            raw.meta["crash"] = "1"
        out.append(Envelope(item=Item(raw=raw)))
    return out


def test_free_port_fails_fast():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    t0 = time.perf_counter()
    with pytest.raises(ExecutorError, match=f"127.0.0.1:{port}: no Ray cluster answers"):
        probe_address(f"127.0.0.1:{port}")
    with pytest.raises(ExecutorError, match="expected host:port"):
        probe_address("nonsense")
    assert time.perf_counter() - t0 < 10


def test_ray_matches_local_and_survives_a_dead_worker(tmp_path, monkeypatch):
    # Ray workers import this module's stages by name; local workers inherit PYTHONPATH.
    here = os.path.dirname(os.path.abspath(__file__))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")])))
    envs = [e for e in envelopes() if not e.item.raw.meta.get("crash")]
    local = sorted(LocalExecutor().run([Extract()], envs, StageCache(tmp_path / "a")), key=lambda e: e.item.id)
    ex = RayExecutor(workers=1)
    try:
        remote = sorted(ex.run([Extract()], envs, StageCache(tmp_path / "b")), key=lambda e: e.item.id)
        assert [e.item for e in remote] == [e.item for e in local]
        crashed = {e.item.id: e.item for e in ex.run([Extract(), CrashOn()], envelopes(), StageCache(tmp_path / "b"))}
    finally:
        ex.close()
    assert sorted(crashed) == ["r/0", "r/1", "r/2", "r/3"]
    bad = crashed["r/2"].rejection
    assert bad.reason == "stage_error:crashy" and "worker crashed" in bad.detail
    assert all(crashed[k].raw.meta.get("ok") == "1" for k in ("r/0", "r/1", "r/3"))
    assert crashed["r/2"].analysis is not None  # the stage before the crash kept its work
