"""Grid-wide synchronisation (cooperative launches) on the CPU shim, checked against NumPy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec, Tolerance
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import check, run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

SUM_REFERENCE = """
import numpy as np
def reference(inputs, sizes):
    return {"out": np.array([inputs["x"].astype(np.float64).sum()], dtype=np.float32)}
"""

JACOBI_REFERENCE = """
import numpy as np
def reference(inputs, sizes):
    a = inputs["u"].astype(np.float32)
    q, h = np.float32(0.25), np.float32(0.5)
    for _ in range(20):
        b = a.copy()
        b[1:-1] = q * a[:-2] + h * a[1:-1] + q * a[2:]
        a = b
    return {"v": a}
"""


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def source(name: str, flags: list[str] | None = None) -> Program:
    return Program(source=(PROGRAMS / name).read_text(), extra_flags=flags or [])


def sum_task() -> Task:
    return Task(
        name="grid_sum",
        description="sum of x in one cooperative launch",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="out", dtype="float32", shape=[1])],
        sizes={"N": 100000},
        cases=[
            InputCase(name="default", seed=1),
            InputCase(name="small", seed=2, sizes={"N": 777}),
        ],
        reference=Reference(code=SUM_REFERENCE),
        tolerance=Tolerance(mode="allclose", atol=1e-2, rtol=1e-4),
    )


def jacobi_task() -> Task:
    return Task(
        name="jacobi",
        description="20 Jacobi sweeps with a grid.sync() between sweeps",
        inputs=[TensorSpec(name="u", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="v", dtype="float32", shape=["N"])],
        sizes={"N": 3000},
        cases=[InputCase(name="default", seed=3)],
        reference=Reference(code=JACOBI_REFERENCE),
        tolerance=Tolerance(mode="allclose", atol=1e-5, rtol=1e-5),
    )


def assert_passed(res) -> None:
    assert res.status == Status.PASSED, (
        res.reason,
        [(c.case, c.reason) for c in res.cases],
        res.compile.diagnostics[-2000:] if res.compile else "",
    )


def test_grid_sync_is_a_supported_feature(backend):
    assert backend.unsupported_features(["grid_sync"]) == []


def test_grid_reduction_passes_every_schedule_and_asan(backend):
    res = check(sum_task(), source("grid_sync_reduce.cu"), backend=backend, thorough=True)
    assert_passed(res)
    assert "grid_sync" in res.features
    assert sorted(res.cases[0].schedules) == ["forward", "reverse"]


def test_grid_reduction_without_grid_sync_is_caught(backend):
    prog = source("grid_sync_reduce.cu", ["-DNO_GRID_SYNC"])
    # Forward: block 0 runs first and adds partials nobody has written yet.
    res = check(sum_task(), prog, backend=backend, thorough=False)
    assert res.status == Status.FAILED, res.reason
    assert "schedule-dependent" not in res.reason
    # Reverse: block 0 runs last and happens to be right, so the two schedules disagree.
    both = CpuBackend(cache=backend.cache, schedules=["forward", "reverse"])
    res = check(sum_task(), prog, backend=both, thorough=False)
    assert res.status == Status.FAILED
    assert "schedule-dependent" in res.reason, res.reason


def test_jacobi_sweeps_pass_every_schedule_and_asan(backend):
    assert_passed(check(jacobi_task(), source("grid_sync_jacobi.cu"), backend=backend))


def test_jacobi_without_grid_sync_is_caught(backend):
    prog = source("grid_sync_jacobi.cu", ["-DNO_GRID_SYNC"])
    res = check(jacobi_task(), prog, backend=backend, thorough=False)
    assert res.status == Status.FAILED, res.reason


def misuse(backend, mode: int):
    return run_program(source("grid_sync_misuse.cu"), backend, defines={"MODE": mode})


def test_too_large_cooperative_grid_is_refused(backend):
    run = misuse(backend, 1)
    assert run.status == Status.PASSED, run.reason
    # 256-thread blocks: 2048 / 256 = 8 blocks on each of the 4 emulated SMs.
    assert run.outcome.stdout.strip() == (
        "per_sm 8 sms 4 fits cudaSuccess too_large cudaErrorCooperativeLaunchTooLarge "
        "last cudaErrorCooperativeLaunchTooLarge"
    )


def test_grid_sync_in_a_normal_launch_is_a_runtime_error(backend):
    run = misuse(backend, 2)
    assert run.status == Status.RUNTIME_ERROR
    assert run.reason.startswith(
        "grid.sync() at main.cu:20 in kernel 'step', which was not launched with "
        "cudaLaunchCooperativeKernel"
    ), run.reason


def test_a_thread_exiting_before_grid_sync_does_not_hold_it(backend):
    """As GPUs since Volta do (undefined in CUDA): the rest of its block reaches the barrier and
    the run says so. A whole block that exits still deadlocks the grid (next test)."""
    run = misuse(backend, 3)
    assert run.status == Status.PASSED, run.reason
    assert any("grid.sync() at main.cu:20" in n and "31 of 32" in n for n in run.notes), run.notes


def test_block_exiting_before_grid_sync_is_a_deadlock(backend):
    run = misuse(backend, 4)
    assert run.status == Status.RUNTIME_ERROR
    assert run.reason.startswith(
        "deadlock: in kernel 'step': grid.sync() at main.cu:20 reached by 96 of 128 threads"
    ), run.reason
    assert "block (2,0,0) had exited" in run.reason


def test_grid_group_numbers(backend):
    run = misuse(backend, 5)
    assert run.status == Status.PASSED, run.reason
    lines = run.outcome.stdout.strip().splitlines()
    expected = [f"{r} 24 3 {r // 8} 1" for r in range(24)]
    assert lines == [*expected, "normal launch is_valid 0"]


def test_a_kernel_cast_to_void_pointer_runs_cooperatively(backend):
    """Once needs_gpu (the cast lost the kernel's parameter types): every thread wrote 1, synced
    with the whole grid, and added 1."""
    run = misuse(backend, 6)
    assert run.status == Status.PASSED, run.reason
    assert run.outcome.stdout.split() == ["cudaSuccess", str(2 * 128)]


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_blocks_waiting_on_each_other_before_grid_sync_finish(backend, schedule):
    """Cooperative blocks are co-resident on a GPU, so a block may spin on a flag another block
    sets (a token passed round the ring of blocks) before grid.sync(): the spinning block must let
    the others run. The blocks ran one after another to their grid.sync(), so the first block to
    spin waited for ever. The grid is the size the occupancy API reports; one more is refused."""
    run = run_program(source("coop_spin.cu"), backend, schedule=schedule)
    assert run.status == Status.PASSED, run.reason
    lines = run.outcome.stdout.strip().splitlines()
    for line, how in zip(lines[:2], ["volatile", "atomic"], strict=True):
        words = line.split()
        assert words[:6] == [how, "launch", "cudaSuccess", "sync", "cudaSuccess", "agree"], line
        assert words[6] == words[8] and int(words[6]) > 0, line  # every thread saw the full ring
    grid = lines[2].split()
    assert grid[1] == "1" and int(grid[3]) == int(grid[5]) * int(grid[7].rstrip(",")) > 1, lines[2]
    assert grid[-1] == "cudaErrorCooperativeLaunchTooLarge", lines[2]
    assert lines[3] == "normal launch cudaSuccess bins right 8 of 8"


@pytest.mark.parametrize("variant", ["asan", "plain"])
def test_a_cooperative_block_keeps_its_shared_memory_across_the_others_turns(backend, variant):
    """A block's __shared__ values live through grid.sync() and through a spin that hands the
    turn to other blocks (`cpu_programs/grid_sync_shared.cu`). The ASan build's __shared__ is one
    plain static for every block (so ASan sees overruns of it): the last block to run before the
    grid.sync() left its tile in every block's (512 of 512 values wrong; 448 in the relay)."""
    for schedule in ("forward", "reverse", "random:4"):
        run = run_program(source("grid_sync_shared.cu"), backend, ["sweeps", "relay"], variant=variant,
                          schedule=schedule)
        assert run.status == Status.PASSED, (schedule, run.reason, run.outcome and run.outcome.stdout)
        assert run.outcome.stdout.splitlines() == ["sweeps PASS", "relay PASS"], schedule
