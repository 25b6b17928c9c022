"""libcu++'s synchronisation objects on the cpu backend (issue 26): `cuda::barrier` (split
arrive/wait, a `__shared__` barrier initialised by thread 0, a completion function,
`arrive_and_drop`, `cuda::memcpy_async` with a barrier), `cuda::latch`, block- and device-scope
semaphores, a device-scope barrier shared by the blocks of a cooperative launch, and a
`cuda::std::barrier` shared by host threads that have launched kernels
(`cpu_programs/libcuxx_sync.cu`, which nvcc 13 builds as it stands; each case checks itself
against a host computation). All of them were `needs_gpu` before: `<cuda/barrier>`, `<cuda/latch>`
and `<cuda/semaphore>` were left out of the shim because a wait would block the block's other
threads. The rewrite half (such kernels run as fibers, never directly or in warp lockstep) is
checked without a build."""

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

PROGRAM = Path(__file__).resolve().parent / "cpu_programs" / "libcuxx_sync.cu"
CASES = ["producer_consumer", "completion", "drop", "latch", "semaphore", "semaphore_device",
         "memcpy_async", "grid_cooperative", "host_threads"]

needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def run(backend: CpuBackend, cases: list[str], variant: str = "plain", schedule: str = "forward",
        seconds: float = 30, env: dict[str, str] | None = None):
    return run_program(Program(source=PROGRAM.read_text()), backend, cases, variant=variant,
                       schedule=schedule, limits=Limits(cpu_seconds=seconds, wall_seconds=seconds),
                       extra_env=env)


@needs_gxx
@pytest.mark.parametrize("variant", ["plain", "race"])
def test_barriers_latches_and_semaphores_work_at_block_scope(backend, variant):
    """Every schedule in the plain build (forward: a waiter before the threads it waits for;
    reverse: the other way round; a random order), and the race build, whose run must pass too:
    the semaphore's hand-over orders the counter's plain increments, so the detector sees no lost
    update. (The ASan build passes as well; it is left out here to keep the file cheap.)"""
    schedules = ["forward", "reverse", "random:1"] if variant == "plain" else ["random:2"]
    for schedule in schedules:
        got = run(backend, CASES, variant, schedule)
        assert got.status == Status.PASSED, (variant, schedule, got.reason, got.outcome and got.outcome.stderr)
        assert got.outcome.stdout.split("\n")[:-1] == [f"{case} ok" for case in CASES], (variant, schedule)


@needs_gxx
def test_a_barrier_expecting_more_arrivals_than_the_block_makes_is_a_named_deadlock(backend):
    got = run(backend, ["deadlock"])
    assert got.status == Status.RUNTIME_ERROR, got.reason
    assert got.reason.startswith("deadlock: "), got.reason
    source = PROGRAM.read_text().splitlines()
    line = next(n for n, text in enumerate(source, 1) if "bar.arrive_and_wait();" in text
                and "deadlock" in "".join(source[n - 6:n]))
    assert f"64 threads wait at cuda::barrier::arrive_and_wait (first at main.cu:{line}" in got.reason


@needs_gxx
def test_a_copy_read_before_its_barrier_phase_completes_is_caught(backend):
    """`cuda::memcpy_async` with a barrier: the destination is undefined until the phase
    completes. It reads as 0xFF bytes until then (as the pipeline primitives' copies do), so a
    kernel that reads it before waiting fails its own check instead of passing by luck."""
    got = run(backend, ["memcpy_async_early"])
    assert got.status == Status.RUNTIME_ERROR and got.reason == "exit code 1", got.reason
    assert got.outcome.stdout.strip() == "memcpy_async_early failed (2)", got.outcome.stdout


@needs_gxx
def test_a_device_scope_barrier_across_the_blocks_of_a_normal_launch_needs_a_gpu(backend):
    """Its blocks are not promised to be co-resident: on the shim a block would wait for blocks
    that run after it. The same kernel passes in a cooperative launch (the first test)."""
    source = PROGRAM.read_text().splitlines()
    start = next(n for n, text in enumerate(source) if text.startswith("__global__ void grid_barrier("))
    line = next(n for n, text in enumerate(source[start:], start + 1) if "arrive_and_wait" in text)
    reasons = set()
    # One worker: the first block waits for arrivals no block can make while it runs. Two: a
    # second block may use the barrier while the first waits, or the first may be found waiting
    # first, by the workers' timing. Either way the report is one, word for word.
    for workers in ("1", "2"):
        got = run(backend, ["grid_normal"], env={"CUDASHIM_WORKERS": workers})
        assert got.status == Status.NEEDS_GPU, got.reason
        reasons.add(got.reason)
    assert reasons == {f"cuda::barrier at main.cu:{line} synchronises blocks of a launch that are not "
                       "co-resident (libcu++ synchronisation across blocks needs co-resident blocks: "
                       "a GPU, or an object of device or system scope in a "
                       "cudaLaunchCooperativeKernel launch)"}, reasons


SOURCE = """\
#include <cuda/barrier>
#include <cuda/latch>
#include <cuda/semaphore>
using Bar = cuda::barrier<cuda::thread_scope_block>;
typedef cuda::latch<cuda::thread_scope_block> Latch;
__device__ void meet(Bar* b) { b->arrive_and_wait(); }
__global__ void through_alias(Bar* b, int* o) { Bar& r = *b; o[threadIdx.x] = 1; auto t = r.arrive(); r.wait(std::move(t)); }
__global__ void through_call(Bar* b, int* o) { o[threadIdx.x] = 1; meet(b); }
__global__ void with_latch(Latch* l, int* o) { for (int i = 0; i < 4; ++i) o[i] += i; l->count_down(); l->wait(); }
__global__ void with_semaphore(cuda::binary_semaphore<cuda::thread_scope_block>* s, int* o) { for (int i = 0; i < 4; ++i) { s->acquire(); o[0] += i; s->release(); } }
__global__ void plain(int* o) { for (int i = 0; i < 4; ++i) o[threadIdx.x] += i; }
void host(Bar* b, Latch* l, cuda::binary_semaphore<cuda::thread_scope_block>* s, int* o) {
  through_alias<<<1, 32>>>(b, o); through_call<<<1, 32>>>(b, o); with_latch<<<1, 32>>>(l, o);
  with_semaphore<<<1, 32>>>(s, o); plain<<<1, 32>>>(o); }
"""


def test_kernels_using_them_run_as_fibers_never_directly_or_in_lockstep():
    """A thread waiting on a barrier, latch or semaphore must be a fiber that can hand its turn
    over: a kernel naming one (through a type alias or a function it calls too) is not
    barrier-free, so it gets no direct mode and no warp-lockstep copy; a plain loop keeps both."""
    result = rewrite(SOURCE, lockstep=True)
    fibers = {launch.kernel: launch.may_sync for launch in result.launches}
    assert fibers == {"through_alias": True, "through_call": True, "with_latch": True,
                      "with_semaphore": True, "plain": False}, fibers
    assert "__cudashim_ls_plain" in result.text
    for kernel in ("through_alias", "through_call", "with_latch", "with_semaphore"):
        assert f"__cudashim_ls_{kernel}" not in result.text, kernel
