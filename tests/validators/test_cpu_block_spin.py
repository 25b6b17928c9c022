"""Threads of one block that wait for each other without a barrier (issue 26): a flag polled
through volatile or atomics, two warps passing a token, a spin-lock around a counter, a loop in a
macro (`cpu_programs/block_spin.cu`, which nvcc 13 builds as it stands). Each of them hung on the
cpu backend (the waiting thread ran on its own, or its warp in lockstep, and the thread that
would set the flag never started), in the plain, ASan and race builds alike. The rewrite half
(which loops get a spin point, which kernels must run as fibers) is checked without a build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu.rewrite import rewrite
from validators.engine import run_program
from validators.sandbox import Limits

PROGRAM = Path(__file__).resolve().parent / "cpu_programs" / "block_spin.cu"
CASES = ["flag_volatile", "flag_atomic", "flag_macro", "token", "lock_warps", "lock_threads", "assert_wait"]

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def run(backend: CpuBackend, variant: str, schedule: str, cases: list[str], seconds: float = 30):
    return run_program(Program(source=PROGRAM.read_text()), backend, cases, variant=variant,
                       schedule=schedule, limits=Limits(cpu_seconds=seconds, wall_seconds=seconds))


@needs_gxx
@pytest.mark.parametrize("variant", ["plain", "asan", "race"])
def test_threads_of_a_block_waiting_for_each_other_finish(backend, variant):
    """Forward (a waiter before its setter), reverse (the other pair) and a random order (where a
    lock holder waits at a warp operation for its own lanes while another warp's lane spins)."""
    for schedule in ("forward", "reverse", "random:1"):
        got = run(backend, variant, schedule, CASES)
        assert got.status == Status.PASSED, (variant, schedule, got.reason, got.outcome and got.outcome.stderr)
        assert got.outcome.stdout.split("\n")[:-1] == [
            f"{case} ok" + ("" if case == "assert_wait" else " (no error)") for case in CASES
        ], (variant, schedule)
    if variant == "plain":
        # A flag nobody sets hangs as on a GPU: the run's time limit ends it, no verdict of ours.
        never = run(backend, variant, "forward", ["never"], seconds=2)
        assert never.status == Status.TIMEOUT, never.reason


@needs_gxx
def test_blocks_of_a_launch_waiting_for_each_other_finish_as_on_a_gpu(backend):
    """Blocks of a normal launch that wait for other blocks of it (HeCBench's ECL-MIS at full size
    hung: 23 of its 24 blocks waited for vertices of blocks that never started). A waiting block
    now has the launch's next blocks started beside it, up to what the emulated device holds at
    once; beyond that a wait for a block not started hangs, as it does on a GPU."""
    for schedule in ("forward", "reverse", "random:2"):
        got = run(backend, "plain", schedule, ["last_sets", "ring"])
        assert got.status == Status.PASSED, (schedule, got.reason, got.outcome and got.outcome.stderr)
        assert got.outcome.stdout.splitlines() == ["last_sets ok (no error)", "ring ok (no error)"]
    beyond = run(backend, "plain", "forward", ["beyond"], seconds=2)
    assert beyond.status == Status.TIMEOUT, beyond.reason


@needs_gxx
@pytest.mark.parametrize("variant", ["asan", "race"])
def test_builds_that_run_one_block_at_a_time_run_waiting_blocks_by_turns(backend, variant):
    """The ASan and race builds keep one copy of what a block owns (the ASan build's __shared__
    is a plain static, the race records are the process's), so they run one block at a time. A
    block that waits for blocks not started hands its turn to the next one (and its __shared__ is
    kept meanwhile); before, such a run stood down and the plain build judged alone, so lost
    updates made after a deliberate wait went unseen."""
    for schedule in ("forward", "reverse", "random:2"):
        got = run(backend, variant, schedule, ["last_sets", "ring", "shared_kept"])
        assert got.status == Status.PASSED, (schedule, got.reason, got.outcome and got.outcome.stderr)
        assert got.outcome.stdout.splitlines() == [
            "last_sets ok (no error)", "ring ok (no error)", "shared_kept ok (no error)"], schedule
    lost = run(backend, variant, "forward", ["lost_after_wait"])
    if variant == "race":
        assert lost.status == Status.FAILED, (lost.reason, lost.outcome and lost.outcome.stderr)
        assert "race in kernel 'lost_after_wait': lost update" in lost.reason, lost.reason
    else:  # the emulator's threads never interleave mid-update: only the race build sees it
        assert lost.status == Status.PASSED, lost.reason
    beyond = run(backend, variant, "forward", ["beyond"], seconds=3)
    assert beyond.status == Status.TIMEOUT, beyond.reason


SOURCE = """\
#define WAIT_SET(f) while (atomicAdd((f), 0) == 0) { }
#define UNTIL(c) do { } while (!(c))
#define KERNEL_LOOP(i, n) for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < (n); i += blockDim.x * gridDim.x)
__device__ void add(double* a, double v) {
  unsigned long long* p = (unsigned long long*)a, old = *p, assumed;
  do { assumed = old; old = atomicCAS(p, assumed, __double_as_longlong(v + __longlong_as_double(assumed))); } while (assumed != old);
}
__global__ void hist(const int* x, int n, int* bins) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) atomicAdd(&bins[x[i]], 1);
}
__global__ void hist_macro(const int* x, int n, int* bins) { KERNEL_LOOP(i, n) atomicAdd(&bins[x[i]], 1); }
__global__ void sum(const double* x, int n, double* s) { for (int i = 0; i < n; ++i) add(s, x[i]); }
__global__ void wait_done(int* f) { bool done = false; while (!done) { if (atomicCAS(f, 0, 1) == 0) { done = true; } } }
__global__ void wait_macro(int* f) { WAIT_SET(f); }
__global__ void wait_argument(int* f) { UNTIL(atomicAdd(f, 0) != 0); }
__global__ void plain_argument(int n) { int i = 0; UNTIL(++i >= n); }
void host(int* x) { hist<<<1, 32>>>(x, 1, x); hist_macro<<<1, 32>>>(x, 1, x); sum<<<1, 32>>>(0, 1, 0);
  wait_done<<<1, 32>>>(x); wait_macro<<<1, 32>>>(x); wait_argument<<<1, 32>>>(x); plain_argument<<<1, 32>>>(1); }
"""


def test_only_loops_whose_leaving_waits_get_a_spin_point_and_their_kernels_run_as_fibers():
    """A loop waits when its exit depends on a volatile or atomic read (its condition, the guard
    of a `break`, a local the loop assigns from one, a macro's argument); a histogram's loop over
    `atomicAdd` does not, and keeps direct mode. Before, every loop whose text named an atomic
    got a spin point, and every kernel without a barrier ran its threads as plain calls."""
    result = rewrite(SOURCE, lockstep=False)
    lines = result.text.splitlines()
    assert len(lines) == len(SOURCE.splitlines())
    marked = [n for n, line in enumerate(lines, 1) if "::cudashim::spin_point()" in line]
    # the macros WAIT_SET and UNTIL (used with an atomic argument), the CAS retry loop, the
    # loop left by a flag a CAS sets; not the histograms' loops (KERNEL_LOOP included)
    assert marked == [1, 2, 6, 13], result.text
    fibers = {launch.kernel: launch.may_sync for launch in result.launches}
    assert fibers == {"hist": False, "hist_macro": False, "sum": True, "wait_done": True, "wait_macro": True,
                      "wait_argument": True, "plain_argument": False}, fibers


SCAN_REFERENCE = """
import numpy as np
def reference(inputs, sizes):
    return {"y": np.cumsum(inputs["x"].astype(np.int64)).astype(np.int32)}
"""


@needs_gxx
def test_a_chained_scan_passes_every_build_of_a_thorough_check(backend):
    """A single-pass scan whose block b waits for block b-1 (`cpu_programs/chained_scan.cu`)
    passes a thorough check in every build: the ASan and race builds run the waiting blocks by
    turns. With more tiles than the device holds, the reverse schedule filled it with the last
    tiles, each waiting for one never started (a timeout); as a GPU dispatches blocks in order,
    the rest of such a launch is taken lowest block first."""
    from schemas import InputCase, Reference, Task, TensorSpec, Tolerance
    from validators.engine import check

    task = Task(
        name="chained_scan",
        description="inclusive prefix sum of x in one launch, block b waiting for block b-1",
        inputs=[TensorSpec(name="x", dtype="int32", shape=["N"])],
        outputs=[TensorSpec(name="y", dtype="int32", shape=["N"])],
        # 64 tiles: more than the 32 blocks of 128 threads the device holds at once
        sizes={"N": 16384},
        cases=[InputCase(name="default", seed=5)],
        reference=Reference(code=SCAN_REFERENCE),
        tolerance=Tolerance(mode="exact"),
    )
    program = Program(source=(PROGRAM.parent / "chained_scan.cu").read_text())
    res = check(task, program, backend=backend, thorough=True)
    assert res.status == Status.PASSED, (res.reason, [(c.case, c.reason) for c in res.cases])
    assert not [n for n in res.notes if "judged it" in n], res.notes  # no build stood in for another
    assert all(sorted(c.schedules) == ["forward", "reverse"] for c in res.cases), res.cases
    # Each block waiting for a later one, which the kernel-work check's forward run meets first.
    later = task.model_copy(update={"sizes": {"N": 3000}})
    res = check(later, program.model_copy(update={"extra_flags": ["-DCHAIN_FROM_LAST=1", "-DN=3000"]}), backend=backend,
                thorough=True)
    assert res.status == Status.PASSED, (res.reason, [(c.case, c.reason) for c in res.cases])
    assert not [n for n in res.notes if "judged it" in n], res.notes
    assert res.kernel_check.startswith("outputs depend on the kernels: they follow the inputs"), res.kernel_check


@needs_gxx
@pytest.mark.parametrize("variant", ["plain", "race"])
def test_a_chained_scan_over_more_tiles_than_the_device_holds_finishes_in_a_random_order(
        backend, variant, tmp_path):
    """Under `random:<seed>` the device filled with tiles from anywhere in the grid, most waiting
    for tiles not started (a timeout); as under `reverse`, a full device whose blocks wait now
    takes the rest of the launch lowest block first, as a GPU dispatches them."""
    import numpy as np

    data = tmp_path / "data"
    data.mkdir()
    x = np.random.default_rng(9).integers(-1000, 1000, 16384).astype(np.int32)
    x.tofile(data / "x.bin")
    for schedule in ("random:3", "random:11"):
        out = tmp_path / f"out-{variant}-{schedule.replace(':', '')}"
        got = run_program(Program(source=(PROGRAM.parent / "chained_scan.cu").read_text()), backend,
                          variant=variant, schedule=schedule, workdir_files=[data], keep_outputs=out,
                          limits=Limits(cpu_seconds=60, wall_seconds=60))
        assert got.status == Status.PASSED, (schedule, got.reason, got.outcome and got.outcome.stderr)
        assert got.outcome.stdout.strip() == "blocks 64"
        np.testing.assert_array_equal(np.fromfile(out / "data" / "y.bin", dtype=np.int32),
                                      np.cumsum(x.astype(np.int64)).astype(np.int32))
