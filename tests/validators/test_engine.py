"""engine.check: every comparison and anti-cheat reason triggered by a small real program.

Programs are built by real nvcc and run in the real sandbox on the cuda backend with the GPU
check off (their results are computed by host code), so what is tested is the engine's logic.
One mutant program (misbehaviour chosen by an environment variable) keeps nvcc builds few.
"""

from __future__ import annotations

import shutil

import pytest
from engine_programs import DOUBLE, MUTANT, MutantBackend, double_task, vecadd_program, vecadd_task

from schemas import Program, Status, Tolerance
from validators.build_cache import BuildCache
from validators.engine import Engine, run_program
from validators.reference import ReferenceRunner
from validators.sandbox import Limits, sandbox_mode

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

LIMITS = Limits(cpu_seconds=5, wall_seconds=30, memory_bytes=2 << 30, file_size_bytes=16 << 20,
                max_processes=32, output_bytes=256 << 10)


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> tuple[BuildCache, ReferenceRunner]:
    root = tmp_path_factory.mktemp("engine")
    return BuildCache(root / "builds"), ReferenceRunner(root / "refs")


def _engine(shared, mutation: str = "", limits: Limits = LIMITS, **kw) -> Engine:
    cache, refs = shared
    backend = MutantBackend(gpu_check=False, cache=cache, **kw)
    backend.mutation = mutation
    return Engine(backend, limits=limits, cache=cache, references=refs)


def test_correct_program_passes_every_case(shared):
    res = _engine(shared).check(vecadd_task(odd_size=True), MUTANT)
    assert res.status == Status.PASSED, res.reason
    assert [c.status for c in res.cases] == [Status.PASSED] * 3
    assert res.cases[2].outputs[0].elements == 997  # built with -DN=997
    assert res.compile and res.compile.ok and "-DN=997" not in res.compile.command
    assert all(c.outputs[0].max_abs_error == 0 for c in res.cases)
    assert res.cases_passed == 3 and res.seconds > 0


@pytest.mark.parametrize("mutation,reason", [
    ("off17", "1 of 1000 elements differ (allclose atol=1e-05 rtol=0.0001); first at index 17"),
    ("missing", "missing output file data/c.bin"),
    ("short", "short output data/c.bin: 3996 bytes, expected 4000"),
    ("long", "oversized output data/c.bin: 4004 bytes, expected 4000"),
    ("nan3", "output c: 1 NaN value(s) where the reference has none; first at index 3"),
    ("inf5", "output c: 1 Inf value(s) where the reference has none; first at index 5"),
])
def test_comparison_failures(shared, mutation, reason):
    res = _engine(shared, mutation).check(vecadd_task(), MUTANT)
    assert res.status == Status.FAILED
    assert reason in res.cases[0].reason, res.cases[0].reason
    assert reason in res.reason


def test_error_figures_reported(shared):
    res = _engine(shared, "off17").check(vecadd_task(cases=1), MUTANT)
    out = res.cases[0].outputs[0]
    assert out.first_mismatch_index == 17 and out.mismatches == 1
    assert abs(out.max_abs_error - 0.5) < 1e-6 and out.max_rel_error > 0


def test_max_abs_tolerance(shared):
    loose = vecadd_task(cases=1, tolerance=Tolerance(mode="max_abs", max_abs=1e-2))
    assert _engine(shared, "small9").check(loose, MUTANT).status == Status.PASSED
    tight = vecadd_task(cases=1, tolerance=Tolerance(mode="max_abs", max_abs=1e-4))
    res = _engine(shared, "small9").check(tight, MUTANT)
    assert res.status == Status.FAILED and "max_abs 0.0001" in res.reason


def test_exact_for_integers(shared):
    assert _engine(shared).check(double_task(), DOUBLE).status == Status.PASSED
    res = _engine(shared, "off").check(double_task(), DOUBLE)
    assert res.status == Status.FAILED and "(exact); first at index 40" in res.reason


@pytest.mark.parametrize("mutation,reason", [
    ("zeros", "output c is all zeros while the reference is not"),
    ("constant", "output c is constant (1.5) while the reference is not"),
    ("modify_a", "read-only input a was modified (data/a.bin)"),
    ("skip_b", "never read input b (data/b.bin)"),
    ("read_etc", "opened a file outside its work directory: /etc/hostname"),
    ("extra_file", "opened a file other than its inputs and outputs: data/zz.bin"),
    ("socket", "opened a network socket (inet)"),
])
def test_anticheat_rejections(shared, mutation, reason):
    res = _engine(shared, mutation).check(vecadd_task(cases=1), MUTANT)
    assert res.status == Status.REJECTED, res.reason
    assert reason in res.reason, res.reason


@pytest.mark.parametrize("program,reason", [
    (vecadd_program(replace=("touch<<<1, 1>>>(d);", "")), "no kernel launch"),
    (vecadd_program(prelude="static const float TABLE[] = {"
                    + ", ".join(f"{i}.5f" for i in range(300)) + "};\n"),
     "initialiser of 300 float literals"),
    (vecadd_program(replace=('if (m == "exit3")', 'fopen("/etc/passwd", "r");\n  if (m == "exit3")')),
     "'/etc/passwd'"),
])
def test_static_rejections(shared, program, reason):
    res = _engine(shared).check(vecadd_task(cases=1), program)
    assert res.status == Status.REJECTED and reason in res.reason, res.reason
    assert res.compile is not None and res.compile.ok  # it was built, then rejected


def test_compile_error_beats_static_rejection(shared):
    prog = vecadd_program(replace=("touch<<<1, 1>>>(d);", "this_does_not_exist();"))
    res = _engine(shared).check(vecadd_task(), prog)
    assert res.status == Status.COMPILE_ERROR
    assert "this_does_not_exist" in res.reason and not res.compile.ok


def test_compile_error(shared):
    prog = vecadd_program(replace=("size_t count = N;", "size_t count = N; undefined_call();"))
    res = _engine(shared).check(vecadd_task(), prog)
    assert res.status == Status.COMPILE_ERROR and "undefined_call" in res.reason
    assert len(res.cases) == 1  # the default build failed: no point building the others


def test_runtime_error_and_timeout(shared):
    res = _engine(shared, "exit3").check(vecadd_task(cases=1), MUTANT)
    assert res.status == Status.RUNTIME_ERROR and "exit code 3" in res.reason
    res = _engine(shared, "segv").check(vecadd_task(cases=1), MUTANT)
    assert res.status == Status.RUNTIME_ERROR
    wall = LIMITS.with_overrides(cpu_seconds=30, wall_seconds=1)
    res = _engine(shared, "spin", limits=wall).check(vecadd_task(cases=1), MUTANT)
    assert res.status == Status.TIMEOUT and "timed out" in res.reason


@pytest.mark.parametrize("mutation,statuses,reason", [
    ("fork_bomb", (Status.TIMEOUT, Status.RUNTIME_ERROR), "timed out|sandbox limit hit: (processes|cpu)"),
    ("mem_bomb", (Status.RUNTIME_ERROR,), "sandbox limit hit: memory"),
    ("loud", (Status.RUNTIME_ERROR,), "sandbox limit hit: output"),
])
def test_hostile_programs_get_clear_verdicts(shared, mutation, statuses, reason):
    import re

    from validators.sandbox import _memory_cgroup_base

    if mutation == "mem_bomb" and _memory_cgroup_base() is None:
        pytest.skip("the cuda backend lifts RLIMIT_AS; without a memory cgroup RSS is unbounded")
    # (the cuda backend lifts the address-space limit; the memory cgroup bounds RSS instead)
    # (a fork bomb spins on every core until the wall clock stops it: two seconds are enough)
    tight = LIMITS.with_overrides(wall_seconds=2 if mutation == "fork_bomb" else 4, rss_bytes=512 << 20,
                                  output_bytes=64 << 10)
    res = _engine(shared, mutation, limits=tight).check(vecadd_task(cases=1), MUTANT)
    assert res.status in statuses and re.search(reason, res.reason), res.reason


def test_schedule_dependent_results_fail(shared):
    eng = _engine(shared, "racy", schedules=["forward", "reverse"])
    res = eng.check(vecadd_task(cases=1), MUTANT)
    assert res.status == Status.FAILED
    assert "schedule-dependent: output c differs at index 42" in res.reason
    assert res.cases[0].schedules == ["forward", "reverse"]
    ok = _engine(shared, "", schedules=["forward", "reverse"]).check(vecadd_task(cases=1), MUTANT)
    assert ok.status == Status.PASSED and ok.cases[0].schedules == ["forward", "reverse"]


class NoTensorCores(MutantBackend):
    def unsupported_features(self, features):
        return [f for f in features if f == "wmma"]


def test_unsupported_features_need_gpu_without_building(shared):
    wmma = ("#include <mma.h>\nusing namespace nvcuda;\n__global__ void tc() { "
            "wmma::fragment<wmma::accumulator, 16, 16, 16, float> f; wmma::fill_fragment(f, 0.0f); }\n")
    cache, refs = shared
    eng = Engine(NoTensorCores(gpu_check=False, cache=cache), limits=LIMITS, cache=cache,
                 references=refs)
    res = eng.check(vecadd_task(cases=1), vecadd_program(prelude=wmma))
    assert res.status == Status.NEEDS_GPU and "wmma" in res.reason
    assert res.compile is None and res.cases == [] and "wmma" in res.features


def test_broken_reference_is_reported(shared):
    task = vecadd_task(cases=1)
    task = task.model_copy(update={"reference": task.reference.model_copy(
        update={"code": "def reference(inputs, sizes):\n    raise KeyError('nope')\n"})})
    res = _engine(shared).check(task, MUTANT)
    assert res.status == Status.ERROR and "no reference outputs" in res.reason and "nope" in res.reason
    assert res.error_origin == "task"


@pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs namespaces")
def test_hostile_program_in_check_is_contained(shared, tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("keep")
    eng = _engine(shared, "delete_outside")
    eng.backend.env = {"VICTIM": str(victim)}
    res = eng.check(vecadd_task(cases=1), MUTANT)
    assert victim.read_text() == "keep"
    assert res.status == Status.REJECTED
    assert f"removed or renamed a file outside its work directory: {victim}" in res.reason


def test_run_program_standalone(shared):
    backend = _engine(shared).backend
    src = '#include <cstdio>\nint main(int argc, char** argv) { printf("args=%d %s\\n", argc, argv[1]); return 0; }\n'
    run = run_program(Program(source=src), backend, ["hello"], limits=LIMITS)
    assert run.status == Status.PASSED and run.outcome.stdout.strip() == "args=2 hello"
    bad = run_program(Program(source="int main() { return x; }"), backend)
    assert bad.status == Status.COMPILE_ERROR and bad.outcome is None


REAL_VECADD = r"""
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#ifndef N
#define N 1000
#endif
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
static void read_bin(const char* p, float* h, size_t n) {
  FILE* f = fopen(p, "rb");
  if (!f || fread(h, sizeof(float), n, f) != n) exit(1);
  fclose(f);
}
int main() {
  size_t bytes = N * sizeof(float);
  float *ha = (float*)malloc(bytes), *hb = (float*)malloc(bytes), *hc = (float*)malloc(bytes);
  read_bin("data/a.bin", ha, N); read_bin("data/b.bin", hb, N);
  float *da, *db, *dc;
  cudaMalloc(&da, bytes); cudaMalloc(&db, bytes); cudaMalloc(&dc, bytes);
  cudaMemcpy(da, ha, bytes, cudaMemcpyHostToDevice); cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
  vecAdd<<<(N + 255) / 256, 256>>>(da, db, dc, N);
  cudaMemcpy(hc, dc, bytes, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/c.bin", "wb"); fwrite(hc, sizeof(float), N, o); fclose(o);
  return 0;
}
"""


def _cpu_backend():
    from validators.backends import BackendUnavailable, get_backend

    try:
        return get_backend("cpu")
    except BackendUnavailable:
        return None


@pytest.mark.slow
@pytest.mark.skipif(_cpu_backend() is None, reason="cpu backend not available")
def test_real_kernels_on_cpu_backend(shared):
    """End to end on the cpu backend: every schedule and the ASan build, with the access shim."""
    cache, refs = shared
    eng = Engine(_cpu_backend(), limits=LIMITS, cache=cache, references=refs)
    task = vecadd_task(cases=2, odd_size=True)
    res = eng.check(task, Program(source=REAL_VECADD))
    assert res.status == Status.PASSED, res.reason
    assert len(res.cases[0].schedules) >= 2  # results agreed across schedules
    no_bounds = REAL_VECADD.replace("if (i < n) c[i]", "c[i]")
    res = eng.check(task, Program(source=no_bounds))
    assert res.status in (Status.RUNTIME_ERROR, Status.FAILED) and res.status != Status.PASSED


def test_concurrent_checks_do_not_interfere(shared):
    """Threads sharing one build cache and reference cache (as a worker pool would)."""
    from concurrent.futures import ThreadPoolExecutor

    jobs = {"": Status.PASSED, "off17": Status.FAILED, "zeros": Status.REJECTED, "exit3": Status.RUNTIME_ERROR}
    with ThreadPoolExecutor(4) as pool:
        futures = {m: pool.submit(_engine(shared, m).check, vecadd_task(), MUTANT) for m in jobs}
    assert {m: f.result().status for m, f in futures.items()} == jobs


@pytest.mark.skipif(_cpu_backend() is None, reason="cpu backend not available")
def test_run_program_picks_the_build_variant_and_schedule(shared):
    """A one-past-the-end write is silent in the plain build and named by the ASan one; the
    order threads run in follows `schedule` (each thread records its place in a counter)."""
    cache, _ = shared
    backend = _cpu_backend()
    overrun = Program(source=(
        "#include <cstdio>\n#include <cstdlib>\n"
        "int main() { volatile int* p = (int*)malloc(4 * sizeof(int)); p[4] = 1; printf(\"done\\n\");\n"
        "  free((void*)p); return 0; }\n"))
    plain = run_program(overrun, backend, limits=LIMITS)
    asan = run_program(overrun, backend, limits=LIMITS, variant="asan")
    assert plain.status == Status.PASSED and "done" in plain.outcome.stdout
    assert asan.status == Status.RUNTIME_ERROR and "heap-buffer-overflow" in asan.reason
    order = Program(source=(
        "#include <cstdio>\n__device__ int next_slot;\n"
        "__global__ void k(int* who) { who[atomicAdd(&next_slot, 1)] = threadIdx.x; }\n"
        "int main() { int* d; int h[4]; cudaMalloc(&d, sizeof h);\n"
        "  k<<<1, 4>>>(d); cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);\n"
        "  printf(\"%d%d%d%d\\n\", h[0], h[1], h[2], h[3]); return 0; }\n"))
    outs = {s: run_program(order, backend, limits=LIMITS, schedule=s).outcome.stdout.strip()
            for s in ("forward", "reverse")}
    assert outs == {"forward": "0123", "reverse": "3210"}


def test_fresh_seeds_repeat_under_a_key_and_stay_random_without(monkeypatch):
    """`CKD_FRESH_SEED_KEY` makes a run's fresh cases repeatable (the suite prints its key);
    without it they are drawn at random; a key that is not hex is named."""
    from validators.engine import task_fresh_seed

    monkeypatch.setenv("CKD_FRESH_SEED_KEY", "ab" * 16)
    a, b = task_fresh_seed("task-a"), task_fresh_seed("task-b")
    assert a == task_fresh_seed("task-a") and a != b and 0 <= a < 2**31
    monkeypatch.setenv("CKD_FRESH_SEED_KEY", "cd" * 16)
    assert task_fresh_seed("task-a") != a
    monkeypatch.delenv("CKD_FRESH_SEED_KEY")
    assert len({task_fresh_seed("task-a") for _ in range(8)}) > 1
    monkeypatch.setenv("CKD_FRESH_SEED_KEY", "not hex")
    with pytest.raises(ValueError, match="CKD_FRESH_SEED_KEY"):
        task_fresh_seed("task-a")
