"""libcu++'s `cuda::pipeline` on the cpu backend (issue 26): a double-buffered block-scope
pipeline tiling a copy and a computation that reads the whole tile, producer and consumer roles,
a thread-scope pipeline drained by `cuda::pipeline_consumer_wait_prior`, and
`cuda::pipeline_producer_commit` with a barrier (`cpu_programs/libcuxx_pipeline.cu`, which nvcc
builds as it stands; each case checks itself against a host computation). All were `needs_gpu`
before: `<cuda/pipeline>` was an `#error`. A tile read before `consumer_wait` reads the 0xFF
bytes of a copy not yet landed, so the race fails instead of passing by luck."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import run_program
from validators.sandbox import Limits

PROGRAM = Path(__file__).resolve().parent / "cpu_programs" / "libcuxx_pipeline.cu"
CASES = ["double_buffer", "roles", "thread_scope", "commit_to_barrier"]
TILE_THREADS = 64  # the program's TILE: one thread per element

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def run(backend: CpuBackend, cases: list[str], variant: str = "plain", schedule: str = "forward"):
    return run_program(Program(source=PROGRAM.read_text()), backend, cases, variant=variant,
                       schedule=schedule, limits=Limits(cpu_seconds=30, wall_seconds=30))


@needs_gxx
@pytest.mark.parametrize("variant", ["plain", "race"])
def test_block_and_thread_scope_pipelines_compute_their_tiles(backend, variant):
    """Forward (a consumer waits before its producers have run), reverse, a random order, and
    the race build: the stages' barriers order the copies and the reads, so it sees no race."""
    schedules = ["forward", "reverse", "random:1"] if variant == "plain" else ["random:2"]
    for schedule in schedules:
        got = run(backend, CASES, variant, schedule)
        assert got.status == Status.PASSED, (variant, schedule, got.reason, got.outcome and got.outcome.stderr)
        assert got.outcome.stdout.split("\n")[:-1] == [f"{case} ok" for case in CASES], (variant, schedule)


@needs_gxx
def test_a_tile_read_before_consumer_wait_is_caught(backend):
    for schedule in ("forward", "reverse"):
        got = run(backend, ["early"], schedule=schedule)
        assert got.status == Status.RUNTIME_ERROR and got.reason == "exit code 1", (schedule, got.reason)
        assert got.outcome.stdout.strip() == "early failed (2)", got.outcome.stdout


@needs_gxx
def test_a_stage_nobody_commits_is_a_named_deadlock(backend):
    got = run(backend, ["starved"])
    assert got.status == Status.RUNTIME_ERROR, got.reason
    source = PROGRAM.read_text().splitlines()
    line = next(n for n, text in enumerate(source, 1) if "pipe.consumer_wait();" in text
                and "starved" in "".join(source[n - 5:n]))
    assert got.reason.startswith("deadlock: "), got.reason
    assert f"{TILE_THREADS} threads wait at cuda::pipeline::consumer_wait (first at main.cu:{line}" in got.reason
