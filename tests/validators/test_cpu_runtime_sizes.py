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
