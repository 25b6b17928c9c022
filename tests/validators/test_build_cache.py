"""The build cache: content addressing, concurrency, failed builds, corruption."""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
import time
from pathlib import Path

from schemas import CompileInfo
from validators.build_cache import BuildCache, TransientBuildError


def _builder(log: Path, payload: bytes = b"binary", ok: bool = True, delay: float = 0.0):
    def build(tmp: Path) -> CompileInfo:
        with open(log, "a") as f:
            f.write(f"{os.getpid()}\n")
        time.sleep(delay)
        if ok:
            (tmp / "a.out").write_bytes(payload)
        return CompileInfo(compiler="fake", ok=ok, diagnostics="" if ok else "error: broken")

    return build


def test_key_is_canonical_and_sensitive():
    k1 = BuildCache.key(source="x", flags=["-O3"], compiler="nvcc 13")
    assert k1 == BuildCache.key(compiler="nvcc 13", flags=["-O3"], source="x")
    assert k1 != BuildCache.key(source="x", flags=["-O2"], compiler="nvcc 13")
    assert k1 != BuildCache.key(source="y", flags=["-O3"], compiler="nvcc 13")
    assert k1 != BuildCache.key(source="x", flags=["-O3"], compiler="nvcc 12")
    assert len(k1) == 64


def test_miss_then_hit(tmp_path):
    cache = BuildCache(tmp_path / "c")
    log = tmp_path / "log"
    key = BuildCache.key(source="a")
    path, info = cache.get_or_build(key, _builder(log))
    assert info.ok and not info.cached and path.read_bytes() == b"binary"
    path2, info2 = cache.get_or_build(key, _builder(log))
    assert info2.cached and path2 == path
    assert len(log.read_text().split()) == 1


def test_failed_build_is_cached(tmp_path):
    cache = BuildCache(tmp_path / "c")
    log = tmp_path / "log"
    key = BuildCache.key(source="broken")
    path, info = cache.get_or_build(key, _builder(log, ok=False))
    assert path is None and not info.ok and "broken" in info.diagnostics
    path, info = cache.get_or_build(key, _builder(log, ok=True))
    assert path is None and not info.ok and info.cached
    assert len(log.read_text().split()) == 1


def test_transient_failure_not_cached(tmp_path):
    cache = BuildCache(tmp_path / "c")
    key = BuildCache.key(source="slow")

    def timeout(tmp: Path) -> CompileInfo:
        raise TransientBuildError(CompileInfo(ok=False, diagnostics="timeout"))

    path, info = cache.get_or_build(key, timeout)
    assert path is None and info.diagnostics == "timeout"
    path, info = cache.get_or_build(key, _builder(tmp_path / "log"))
    assert info.ok and path is not None


def test_ok_build_without_artifact_is_a_failure(tmp_path):
    cache = BuildCache(tmp_path / "c")
    path, info = cache.get_or_build(BuildCache.key(s=1), lambda tmp: CompileInfo(ok=True))
    assert path is None and not info.ok and "no a.out" in info.diagnostics


def test_corrupted_entry_is_rebuilt(tmp_path):
    cache = BuildCache(tmp_path / "c")
    log = tmp_path / "log"
    key = BuildCache.key(source="c")
    path, _ = cache.get_or_build(key, _builder(log))
    path.write_bytes(b"tampered")
    path2, info = cache.get_or_build(key, _builder(log))
    assert not info.cached and path2.read_bytes() == b"binary"
    (cache.entry_dir(key) / "meta.json").write_text("{not json")
    path3, info = cache.get_or_build(key, _builder(log))
    assert not info.cached and path3.read_bytes() == b"binary"
    assert len(log.read_text().split()) == 3


def _race(root: str, log: str, start: float, out: mp.Queue) -> None:
    while time.time() < start:
        time.sleep(0.001)
    cache = BuildCache(Path(root))
    path, info = cache.get_or_build(BuildCache.key(source="race"), _builder(Path(log), delay=0.2))
    out.put((str(path), path.read_bytes(), info.cached))


def test_processes_racing_on_one_key_build_once(tmp_path):
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    start = time.time() + 0.3
    procs = [ctx.Process(target=_race, args=(str(tmp_path / "c"), str(tmp_path / "log"), start, q))
             for _ in range(6)]
    for p in procs:
        p.start()
    results = [q.get(timeout=30) for _ in procs]
    for p in procs:
        p.join(timeout=30)
    assert len(set(r[0] for r in results)) == 1
    assert all(r[1] == b"binary" for r in results)
    assert sorted(r[2] for r in results) == [False] + [True] * 5
    assert len((tmp_path / "log").read_text().split()) == 1  # built exactly once


def test_threads_racing_on_one_key_build_once(tmp_path):
    cache = BuildCache(tmp_path / "c")
    log = tmp_path / "log"
    results = []

    def go():
        results.append(cache.get_or_build(BuildCache.key(source="t"), _builder(log, delay=0.1)))

    threads = [threading.Thread(target=go) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(log.read_text().split()) == 1
    assert sum(not info.cached for _, info in results) == 1


def test_default_root_uses_env(tmp_path, monkeypatch):
    monkeypatch.setenv("CKD_CACHE_DIR", str(tmp_path / "x"))
    assert BuildCache().root == tmp_path / "x" / "builds"
