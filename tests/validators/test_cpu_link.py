"""The emulator's programs link with GNU gold where the toolchain has it (a third of the default
linker's time, three links per case size of a thorough check) and with the default linker where
it does not: the same program either way."""

from __future__ import annotations

import shutil

import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.engine import run_program

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

SOURCE = r"""
#include <cstdio>
__global__ void square(int* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= x[i]; }
int main() {
  int h[40], *d, s = 0;
  for (int i = 0; i < 40; ++i) h[i] = i;
  cudaMalloc(&d, sizeof h);
  cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
  square<<<3, 16>>>(d, 40);
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 40; ++i) s += h[i];
  printf("%d\n", s);
  return 0;
}
"""


@pytest.fixture
def fresh_link_flags():
    toolchain.link_flags.cache_clear()
    yield
    toolchain.link_flags.cache_clear()


@pytest.mark.parametrize("variant", ["plain", "asan", "race"])
def test_programs_link_with_gold_where_it_is_and_with_the_default_linker_elsewhere(
        variant, tmp_path, monkeypatch, fresh_link_flags):
    with_gold = toolchain.compile_program(SOURCE, tmp_path / "gold", variant=variant)
    assert with_gold.ok, with_gold.diagnostics[-2000:]
    assert ("-fuse-ld=gold" in with_gold.command) == (shutil.which("ld.gold") is not None)

    which = shutil.which
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None if name == "ld.gold" else which(name, *a, **k))
    toolchain.link_flags.cache_clear()
    without = toolchain.compile_program(SOURCE, tmp_path / "bfd", variant=variant)
    assert without.ok, without.diagnostics[-2000:]
    assert "-fuse-ld=gold" not in without.command
    monkeypatch.undo()

    backend = CpuBackend(cache=BuildCache(tmp_path / "builds"))
    got = run_program(Program(source=SOURCE), backend, variant=variant)
    assert got.status == Status.PASSED and got.outcome.stdout.strip() == str(sum(i * i for i in range(40))), got.reason


QUADMATH = r"""
#include <cstdio>
#include <quadmath.h>
__global__ void k(int* o) { o[0] = 2; }
int main() {
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
  k<<<1, 1>>>(d);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  __float128 r = sqrtq((__float128)4.0);
  printf("%s\n", (int)r == h ? "PASS" : "FAIL");
  return 0;
}
"""


def test_host_libraries_are_linked_and_unused_toolkit_ones_dropped(tmp_path):
    # A Makefile's -lquadmath (a host library, as diamond's -lz) reaches the link; its -lcusolver,
    # a toolkit library the program never calls, is dropped with a note instead of failing it.
    backend = CpuBackend(cache=BuildCache(tmp_path / "cache"))
    prog = Program(source=QUADMATH, extra_flags=["-lquadmath", "-lcusolver", "-lcublas"])
    res = run_program(prog, backend)
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None and res.outcome.stdout.strip() == "PASS"
    notes = res.compile.diagnostics if res.compile else ""
    assert "-lcusolver not linked (a CUDA toolkit library" in notes
    assert "-lquadmath" not in notes
