"""The race build (`race` variant): lost updates between CUDA threads are reported with the
kernel, both threads, both source lines and the memory; ordered or same-value writes are not."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec
from validators.backends.cpu import CpuBackend
from validators.cpu.toolchain import compile_program
from validators.engine import DEFAULT_LIMITS, Engine, case_variants, with_fresh_case

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

SOURCE = (Path(__file__).resolve().parent / "cpu_programs" / "races.cu").read_text()


def line_of(marker: str) -> int:
    return next(i for i, text in enumerate(SOURCE.splitlines(), 1) if marker in text)


@pytest.fixture(scope="module")
def exe(tmp_path_factory) -> Path:
    out = compile_program(SOURCE, tmp_path_factory.mktemp("race") / "b", variant="race")
    assert out.ok, out.diagnostics
    return out.exe


def run(exe: Path, kernel: str, schedule: str = "forward") -> subprocess.CompletedProcess:
    env = {**os.environ, "CUDASHIM_SCHEDULE": schedule}
    return subprocess.run([str(exe), kernel], capture_output=True, text=True, timeout=60, env=env,
                          cwd=exe.parent)


RACY = {
    # kernel: (memory named in the report, marker of the racing line)
    "shared_hist": ("shared memory: __shared__ bins", "RACE-SHARED"),
    "cross_block_sum": ("global memory: device allocation #2 (4096 bytes)", "RACE-GLOBAL"),
    "check_then_store_max": ("global memory: device allocation #2", "RACE-MAX"),
    "device_variable": ("global memory (a __device__ variable", "RACE-DEVICE-VAR"),
    "dynamic_shared": ("shared memory: dynamic shared memory", "RACE-DYNAMIC"),
    "lanes_unsynced": ("shared memory: __shared__ s", "RACE-LANES"),
    "file_shared_unsynced": ("shared memory (a __shared__ variable declared at file scope)",
                             "RACE-FILE-SHARED"),
    # PolyBench-ACC's mvt: a benign first store used to make the location its writer's own.
    "zero_first_step": ("global memory: device allocation #2 (4096 bytes)", "RACE-ZERO-FIRST"),
}


@pytest.mark.parametrize("kernel", sorted(RACY))
@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_lost_updates_are_reported_with_kernel_lines_and_memory(exe, kernel, schedule):
    memory, marker = RACY[kernel]
    proc = run(exe, kernel, schedule)
    assert proc.returncode == 87, proc.stdout + proc.stderr
    report = proc.stderr
    assert f"race in kernel '{kernel}': lost update of {memory}" in report, report
    line = line_of(marker)
    # both writes are named, each with its thread and source line
    assert len(re.findall(rf"thread \(\d+,0,0\) of block \(\d+,0,0\) wrote [^,]*at main\.cu:{line} ",
                          report)) == 2, report


CLEAN = {
    "same_value_flag": "out=1 ",  # many threads store the value already there: benign
    "tree_reduce": "out=510 ",  # each level's writes are separated by __syncthreads()
    "shuffle_reduce": "out=510 ",  # lanes combine through shuffles, lane 0 adds atomically
    "syncwarp_ordered": "out=20 ",  # lanes of one warp take turns around __syncwarp()
    "barrier_ordered": "out=7 ",
    "locked_update": "out=16 ",  # an atomicCAS lock hands the location from block to block
    "last_block": "out=16 ",  # partial results published with __threadfence() + atomicInc
    "two_launches": "out=4 ",  # kernel boundaries order everything
    "grid_stride": "out=0 1",
    "shared_per_block": "out=1 2",  # shared memory is per block, though the emulator reuses it
    "file_shared_per_block": "out=1 2",  # the same for __shared__ declared at file scope
    "phases": "out=2 ",  # grid.sync() orders a cooperative grid's phases
    "device_heap": "out=0 1",  # each thread's malloc'd block, reused after free()
}


@pytest.mark.parametrize("kernel", sorted(CLEAN))
def test_ordered_and_same_value_writes_pass(exe, kernel):
    proc = run(exe, kernel, "reverse")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert CLEAN[kernel] in proc.stdout
    assert "cudashim: race" not in proc.stderr


HIST_TASK = Task(
    name="hist8", description="count the bytes of x into 8 bins by their low 3 bits",
    inputs=[TensorSpec(name="x", dtype="uint8", shape=["N"])],
    outputs=[TensorSpec(name="bins", dtype="int32", shape=[8])],
    sizes={"N": 1024}, cases=[InputCase(name="a", seed=1)],
    reference=Reference(code=(
        "import numpy as np\n"
        "def reference(inputs, sizes):\n"
        "    return {'bins': np.bincount(inputs['x'] & 7, minlength=8).astype(np.int32)}\n")),
)
HIST_PROGRAM = r"""
#include <cstdio>
#define N 1024
__global__ void hist(const unsigned char* x, int* bins) {
  __shared__ int local[8];
  if (threadIdx.x < 8) local[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) UPDATE;
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
int main() {
  static unsigned char x[N]; static int bins[8];
  FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 1, N, f) != N) return 1; fclose(f);
  unsigned char* dx; int* db; cudaMalloc(&dx, sizeof x); cudaMalloc(&db, sizeof bins);
  cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice); cudaMemset(db, 0, sizeof bins);
  hist<<<N / 256, 256>>>(dx, db);
  cudaMemcpy(bins, db, sizeof bins, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/bins.bin", "wb"); fwrite(bins, 4, 8, o); fclose(o); return 0; }
"""


def test_engine_fails_a_lost_update_that_every_schedule_computes_right():
    engine = Engine(CpuBackend())
    good = Program(source=HIST_PROGRAM.replace("UPDATE", "atomicAdd(&local[x[i] & 7], 1)"))
    res = engine.check(HIST_TASK, good, thorough=True)
    assert res.status == Status.PASSED, res.reason
    assert all(c.schedules == ["forward", "reverse"] for c in res.cases)

    racy = Program(source=HIST_PROGRAM.replace("UPDATE", "local[x[i] & 7]++"))
    # without the race build, every schedule and ASan agree with the reference
    blind = Engine(CpuBackend(race=False)).check(HIST_TASK, racy, thorough=True)
    assert blind.status == Status.PASSED, blind.reason
    res = engine.check(HIST_TASK, racy, thorough=True)
    assert res.status == Status.FAILED
    assert re.search(r"race in kernel 'hist': lost update of shared memory: __shared__ local "
                     r"\(line 5\).* at main\.cu:9 .* at main\.cu:9 ", res.reason), res.reason


def test_schedules_are_shared_between_the_plain_and_race_builds():
    be = CpuBackend()
    variants, schedules = be.variants(thorough=True), be.schedules(thorough=True)
    assert variants == ["asan", "plain", "race"]
    runs = [(v, s) for v in variants for s in be.schedules_for(v, variants, schedules)]
    assert runs == [("asan", "forward"), ("asan", "reverse"), ("plain", "forward"),
                    ("race", "reverse")]
    assert be.schedules_for("race", variants, ["forward"]) == ["forward"]
    assert CpuBackend(race=False).variants(thorough=True) == ["asan", "plain"]


class SlowRaceBackend(CpuBackend):
    """The real backend, whose race build also defines SLOW_CHECK_BUILD: a stand-in for a
    program the detector's bookkeeping slows past the time limit."""

    def build(self, program, defines, *, variant="plain"):
        if variant == "race":
            defines = {**defines, "SLOW_CHECK_BUILD": 1}
        return super().build(program, defines, variant=variant)


def test_a_race_build_out_of_time_is_replaced_by_the_plain_build_and_noted():
    slow = HIST_PROGRAM.replace("UPDATE", "atomicAdd(&local[x[i] & 7], 1)").replace(
        "int main() {",
        "#include <unistd.h>\nint main() {\n#ifdef SLOW_CHECK_BUILD\n  sleep(30);\n#endif")
    engine = Engine(SlowRaceBackend(), limits=DEFAULT_LIMITS.with_overrides({"wall_seconds": 4.0}))
    res = engine.check(HIST_TASK, Program(source=slow), thorough=True)
    assert res.status == Status.PASSED, res.reason
    assert res.notes and all(
        re.search(r"the race build's reverse run stopped \(timed out.*\); the plain build's run "
                  r"judged it instead", n) for n in res.notes), res.notes


def test_the_fresh_case_is_drawn_among_the_random_cases_by_its_seed():
    task = HIST_TASK.model_copy(update={"cases": [
        InputCase(name="a", seed=1), InputCase(name="big", seed=2, sizes={"N": 4096}),
        InputCase(name="b", seed=3)]})
    chosen = {with_fresh_case(task, seed)[1].name for seed in range(64)}
    assert chosen == {"a+fresh", "big+fresh", "b+fresh"}
    cases, fresh = with_fresh_case(task, 99)
    assert with_fresh_case(task, 99)[1] == fresh and fresh.seed == 99  # reproducible
    # the others keep their place and their published seeds
    assert [c.name.removesuffix("+fresh") for c in cases] == ["a", "big", "b"]
    assert [c.seed for c in cases if c is not fresh] == [
        c.seed for c in task.cases if f"{c.name}+fresh" != fresh.name]


def test_the_race_build_runs_on_the_cases_built_like_the_first():
    task = HIST_TASK.model_copy(update={"cases": [
        InputCase(name="a", seed=1), InputCase(name="big", seed=2, sizes={"N": 4096}),
        InputCase(name="b", seed=3)]})
    plan = case_variants(task, task.cases, ["asan", "plain", "race"], frozenset({"race"}))
    by_name = {c.name: v for c, v in zip(task.cases, plan, strict=True)}
    # `b` shares the first case's build, `big` would need another
    assert by_name["a"] == by_name["b"] == ["asan", "plain", "race"]
    assert by_name["big"] == ["asan", "plain"]


SIZED_HIST_TASK = HIST_TASK.model_copy(update={"cases": [
    InputCase(name="a", seed=1), InputCase(name="odd", seed=2, sizes={"N": 1000}),
    InputCase(name="big", seed=3, sizes={"N": 4096})]})


SIZED_HIST_PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#ifndef N
#define N 1024
#endif
__global__ void hist(const unsigned char* x, int* bins, int n) {
  __shared__ int local[8];
  if (threadIdx.x < 8) local[threadIdx.x] = 0;
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { UPDATE; }
  __syncthreads();
  if (threadIdx.x < 8) atomicAdd(&bins[threadIdx.x], local[threadIdx.x]);
}
int main() {
  unsigned char* x = (unsigned char*)malloc(N); int bins[8];
  FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 1, N, f) != (size_t)N) return 1; fclose(f);
  unsigned char* dx; int* db; cudaMalloc(&dx, N); cudaMalloc(&db, sizeof bins);
  cudaMemcpy(dx, x, N, cudaMemcpyHostToDevice); cudaMemset(db, 0, sizeof bins);
  hist<<<(N + 255) / 256, 256>>>(dx, db, N);
  cudaMemcpy(bins, db, sizeof bins, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/bins.bin", "wb"); fwrite(bins, 4, 8, o); fclose(o); return 0; }
"""


@pytest.mark.parametrize("switch", ["run_time", "preprocessor"])
def test_atomics_only_at_the_first_sizes_do_not_hide_a_lost_update_elsewhere(switch):
    """A program that takes the atomic path only at the first case's size and loses updates at
    the others: the race build runs on the fresh case, drawn at random, and on every case that
    shares its build. The run-time-size build is shared by every case, so it is caught whichever
    case is fresh; a program that needs its sizes compiled in gets a race build on the fresh
    case's sizes alone, so it is caught whenever the fresh case is one where it races."""
    update = ("if (N == 1024) atomicAdd(&local[x[i] & 7], 1); else local[x[i] & 7]++"
              if switch == "run_time" else
              "\n#if N == 1024\n atomicAdd(&local[x[i] & 7], 1);\n#else\n local[x[i] & 7]++;\n#endif\n")
    source = SIZED_HIST_PROGRAM.replace("UPDATE", update)
    engine = Engine(CpuBackend())
    seeds = {"run_time": [s for s in range(64) if
                          with_fresh_case(SIZED_HIST_TASK, s)[1].name == "a+fresh"][:1],
             "preprocessor": [s for s in range(64) if
                              with_fresh_case(SIZED_HIST_TASK, s)[1].name == "odd+fresh"][:1]}
    res = engine.check(SIZED_HIST_TASK, Program(source=source), thorough=True,
                       fresh_seed=seeds[switch][0])
    assert res.status == Status.FAILED, (res.status, res.reason)
    assert "lost update" in res.reason and "[race/" in res.reason, res.reason


class BrokenRaceBackend(CpuBackend):
    """The real backend, whose race build alone does not compile (a stand-in for a program the
    instrumentation or the detector's runtime cannot take, e.g. one defining its own `free`)."""

    def build(self, program, defines, *, variant="plain"):
        if variant == "race":
            defines = {**defines, "BREAK_CHECK_BUILD": 1}
        return super().build(program, defines, variant=variant)


def test_a_race_build_that_fails_is_replaced_by_the_plain_build_and_noted():
    broken = HIST_PROGRAM.replace("UPDATE", "atomicAdd(&local[x[i] & 7], 1)").replace(
        "int main() {", "#ifdef BREAK_CHECK_BUILD\n#error only the check build breaks\n#endif\nint main() {")
    res = Engine(BrokenRaceBackend()).check(HIST_TASK, Program(source=broken), thorough=True)
    assert res.status == Status.PASSED, res.reason
    assert all(c.schedules == ["forward", "reverse"] for c in res.cases)
    assert res.notes and all(
        re.search(r"the race build failed \(.*only the check build breaks.*\); the plain build "
                  r"ran its schedules instead", n) for n in res.notes), res.notes
    # a program no build takes is still a compile error
    bad = broken.replace("#ifdef BREAK_CHECK_BUILD", "#if 1")
    res = Engine(BrokenRaceBackend()).check(HIST_TASK, Program(source=bad), thorough=True)
    assert res.status == Status.COMPILE_ERROR, res.reason


def test_the_race_programs_build_at_o1_and_the_detector_and_torch_units_at_o2():
    """The race build's program is compiled at -O1 (half its compile); the runtime holding the
    detector, and torch extension units (GCC 12 crashes on them at -O1 with the instrumentation),
    keep -O2; FMA contraction stays on, so the race build computes the plain build's bits."""
    from validators.cpu import toolchain

    program = toolchain.program_flags("race")
    assert [f for f in program if f.startswith("-O")] == ["-O1"]
    assert "-fsanitize=thread" in program and "-DCUDASHIM_RACE" not in program
    assert [f for f in toolchain.flags("race") if f.startswith("-O")] == ["-O2"]
    torch_unit = toolchain.program_flags("race", torch_unit=True)
    assert [f for f in torch_unit if f.startswith("-O")] == ["-O2"]
    assert [f for f in toolchain.program_flags("plain") if f.startswith("-O")] == ["-O2"]
    if toolchain.isa_level() not in ("", "none"):
        assert "-fexpensive-optimizations" in program
