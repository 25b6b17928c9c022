"""Run-time sizes on the cpu backend: a task's cases differ in their size defines, and a program
that uses its sizes only as values is built once for all of them (each run told its own sizes
before any of its code runs) instead of once per case; a program that needs a size as a
constant is built with the values, as before. What a program computes must not change."""

from __future__ import annotations

import shutil

import pytest

from schemas import Program
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.sandbox import Limits, run_sandboxed

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

# Writes what it sees of its sizes: values, the types their literals would have, and a sum
# computed by a kernel over N elements (so device code reads the size too).
VALUES = r"""
#include <cstdio>
#ifndef N
#define N 7
#endif
#ifndef BIG
#define BIG 1
#endif
__global__ void count(int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N && i < n) atomicAdd(out, 1);
}
int main() {
  int* d; cudaMalloc(&d, sizeof(int)); cudaMemset(d, 0, sizeof(int));
  count<<<(N + 127) / 128, 128>>>(d, N);
  int h = 0; cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  printf("N=%d counted=%d sizeofN=%zu BIG=%lld sizeofBIG=%zu neg=%d\n", (int)N, h, sizeof(N),
         (long long)BIG, sizeof(BIG), -N);
  return 0;
}
"""

# Needs N as a constant: a shared-memory array bound and a template argument.
CONSTANT = r"""
#include <cstdio>
template <int K> __global__ void fill(int* out) {
  __shared__ int tile[N];
  for (int i = threadIdx.x; i < N; i += blockDim.x) tile[i] = i;
  __syncthreads();
  if (threadIdx.x == 0) { int s = 0; for (int i = 0; i < K; i++) s += tile[i]; *out = s; }
}
int main() {
  int* d; cudaMalloc(&d, sizeof(int));
  fill<N><<<1, 64>>>(d);
  int h = 0; cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
  printf("sum=%d\n", h);
  return 0;
}
"""


@pytest.fixture
def backend(tmp_path) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path / "builds"))


def _run(backend: CpuBackend, exe, work) -> str:
    argv, env = backend.command(exe, [])
    work.mkdir(exist_ok=True)
    out = run_sandboxed(argv, work, limits=Limits().with_overrides(backend.sandbox_overrides(exe)), env=env)
    assert out.exit_code == 0, out.stderr
    return out.stdout.strip()


def test_sizes_used_as_values_share_one_build_and_reach_host_and_device(backend, tmp_path):
    a = backend.build(Program(source=VALUES), {"N": 300, "BIG": 5})
    b = backend.build(Program(source=VALUES), {"N": 1000, "BIG": 3_000_000_000})
    c = backend.build(Program(source=VALUES), {"N": 77, "BIG": 6})
    assert a.compile.ok and c.compile.cached and c.path == a.path  # one build for both
    assert b.path != a.path  # BIG past INT_MAX has the type `long`, as its literal would
    assert _run(backend, a, tmp_path / "a") == "N=300 counted=300 sizeofN=4 BIG=5 sizeofBIG=4 neg=-300"
    assert _run(backend, c, tmp_path / "c") == "N=77 counted=77 sizeofN=4 BIG=6 sizeofBIG=4 neg=-77"
    assert _run(backend, b, tmp_path / "b") == (
        "N=1000 counted=1000 sizeofN=4 BIG=3000000000 sizeofBIG=8 neg=-1000")
    # The program's own default when no size is given: compiled in, as always.
    d = backend.build(Program(source=VALUES), {})
    assert _run(backend, d, tmp_path / "d") == "N=7 counted=7 sizeofN=4 BIG=1 sizeofBIG=4 neg=-7"


def test_the_same_outputs_as_sizes_compiled_in(backend, tmp_path, monkeypatch):
    runtime = _run(backend, backend.build(Program(source=VALUES), {"N": 513, "BIG": 2}), tmp_path / "r")
    monkeypatch.setattr(toolchain, "RUNTIME_SIZES", False)
    compiled = backend.build(Program(source=VALUES), {"N": 513, "BIG": 2})
    assert compiled.run_env == {}
    assert _run(backend, compiled, tmp_path / "c") == runtime


def test_a_size_needed_as_a_constant_is_compiled_in(backend, tmp_path):
    """The attempt with run-time sizes does not compile (an array bound in shared memory, a
    template argument): the program is built with the values, and runs as it always did."""
    for n, expect in ((16, sum(range(16))), (40, sum(range(40)))):
        exe = backend.build(Program(source=CONSTANT), {"N": n})
        assert exe.compile.ok and exe.run_env == {}, exe.compile.diagnostics
        assert "cudashim_case_sizes" not in exe.compile.diagnostics
        assert _run(backend, exe, tmp_path / str(n)) == f"sum={expect}"


def test_a_size_is_an_rvalue_as_a_literal_is(backend):
    """`N = 1` does not compile with a -D value; it must not compile with a run-time one either."""
    src = "#include <cstdio>\nint main() { N = 1; printf(\"%d\\n\", (int)N); return 0; }\n"
    exe = backend.build(Program(source=src), {"N": 5})
    assert not exe.compile.ok
    assert "cudashim_case_sizes" not in exe.compile.diagnostics  # the values' own error


def test_the_case_that_changes_no_size_shares_the_run_time_build(backend, tmp_path):
    """Told the program's own values at run time, the default case needs no build of its own
    and computes what the program compiled with its defaults computes."""
    program = Program(source=VALUES)
    other = backend.build(program, {"N": 300, "BIG": 5})
    default = backend.build_case(program, {}, {"N": 7, "BIG": 1})
    assert default.path == other.path and default.compile.cached
    compiled = backend.build(program, {})
    assert compiled.run_env == {} and compiled.path != other.path
    expect = "N=7 counted=7 sizeofN=4 BIG=1 sizeofBIG=4 neg=-7"
    assert _run(backend, default, tmp_path / "d") == _run(backend, compiled, tmp_path / "c") == expect


@pytest.mark.parametrize("written", ["7u", "(7)", "7 + 0"])
def test_a_default_that_is_not_a_plain_literal_is_compiled_as_written(backend, tmp_path, written):
    """`7u` is unsigned and `(7)` or an expression is not what a run-time int stands for: the
    default case keeps the program's own text."""
    program = Program(source=VALUES.replace("#define N 7", f"#define N {written}"))
    exe = backend.build_case(program, {}, {"N": 7, "BIG": 1})
    assert exe.run_env == {}
    assert exe.path == backend.build(program, {}).path


def test_a_thorough_check_builds_each_variant_once_for_a_task_of_several_sizes(tmp_path):
    """A built-in task whose first case changes no size and whose others do: one build per
    variant (plain, asan, race) serves every case."""
    from sources.builtin import load_tasks
    from validators.engine import Engine
    from validators.reference import ReferenceRunner

    task, program = next((t, p) for t, p in load_tasks() if t.name == "adam_update")
    assert not task.defines_for(task.cases[0]) and any(task.defines_for(c) for c in task.cases)
    paths: dict[str, set] = {}

    class Recording(CpuBackend):
        def build(self, program, defines, *, variant="plain"):  # type: ignore[no-untyped-def]
            exe = super().build(program, defines, variant=variant)
            paths.setdefault(variant, set()).add(exe.path)
            return exe

    cache = BuildCache(tmp_path / "builds")
    engine = Engine(Recording(cache=cache), cache=cache,
                    references=ReferenceRunner(root=tmp_path / "refs"))
    result = engine.check(task, program)
    assert result.status.value == "passed", result.reason
    assert {v: len(p) for v, p in paths.items()} == {"plain": 1, "asan": 1, "race": 1}


def test_a_program_that_needs_its_sizes_as_constants_costs_no_extra_attempt(backend, tmp_path):
    """Once the other cases' run-time attempt failed, the default case's builds (the race build
    is its alone) go straight to the program as written: no attempt that can only fail again."""
    program = Program(source="#ifndef N\n#define N 16\n#endif\n" + CONSTANT)

    def entries() -> int:
        return sum(1 for _ in (tmp_path / "builds").rglob("meta.json"))

    for variant in ("asan", "plain"):
        assert backend.build(program, {"N": 40}, variant=variant).compile.ok
    before = entries()
    exe = backend.build_case(program, {}, {"N": 16}, variant="race")
    assert exe.compile.ok and exe.run_env == {}
    assert entries() == before + 1  # the race build itself, nothing else
    assert _run(backend, exe, tmp_path / "race") == f"sum={sum(range(16))}"
