"""g++'s own failures are not the program's: an internal compiler error is built again at -O0,
and a compiler that crashes at every level gives `error` (no verdict), never `compile_error`.
A checking build (asan, race) keeps its own optimisation level: a Makefile's -O3 reached the
ASan build, where GCC 12 crashed in IPA constant propagation on PolyBench-ACC's polybench.c
(every one of its 21 CUDA programs was `compile_error` under --thorough).

No source makes GCC 12 crash on its own in a few lines, so the crash comes from a runner that
answers as g++ does when it crashes, for optimised builds of the program's own source (a
stand-in for a compiler bug); every build step still runs the real g++."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import ErrorOrigin, InputCase, Program, Reference, Status, Task, TensorSpec
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.engine import Engine

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

SOURCE = r"""
#include <cstdio>
#ifndef N
#define N 64
#endif
__global__ void twice(const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < N) y[i] = 2.0f * x[i];
}
int main() {
  static float x[N], y[N];
  FILE* f = fopen("data/x.bin", "rb");
  if (!f || fread(x, sizeof(float), N, f) != N) return 1;
  fclose(f);
  float *dx, *dy;
  cudaMalloc(&dx, sizeof x); cudaMalloc(&dy, sizeof y);
  cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
  twice<<<(N + 31) / 32, 32>>>(dx, dy);
  cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/y.bin", "wb");
  fwrite(y, sizeof(float), N, o);
  fclose(o);
  return 0;
}
"""

TASK = Task(
    name="twice", description="y = 2 x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": 64}, cases=[InputCase(name="a", seed=1)],
    reference=Reference(code=(
        "def reference(inputs, sizes):\n"
        "    return {'y': 2 * inputs['x']}\n")),
)

ICE = ("main.cu: In function 'int main()':\n"
       "main.cu:20:1: internal compiler error: Segmentation fault\n"
       "Please submit a full bug report, with preprocessed source (by using -freport-bug).\n")


def crashing(levels: set[str]) -> toolchain.Runner:
    """g++, except that it crashes on the program's source at the given -O levels (the last
    -O on the command line wins, as in g++)."""

    def run(cmd: list[str], cwd: Path, expose: list[Path]) -> toolchain.CommandResult:
        opt = [w for w in cmd if w.startswith("-O")]
        if "main.cu" in cmd and opt and opt[-1] in levels:
            return toolchain.CommandResult(1, ICE)
        return toolchain.run_local(cmd, cwd, expose)

    return run


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_a_compiler_crash_is_built_again_at_O0(tmp_path, variant):
    out = toolchain.compile_program(SOURCE, tmp_path / "b", variant=variant,
                                    runner=crashing({"-O1", "-O2", "-O3"}))
    assert out.ok and not out.compiler_crashed, out.diagnostics
    assert "g++ crashed (main.cu:20:1: internal compiler error: Segmentation fault); built " \
           "again at -O0" in out.diagnostics
    assert [w for w in out.command if w.startswith("-O")][-1] == "-O0"


def test_a_compiler_that_crashes_at_every_level_gives_no_verdict(tmp_path, monkeypatch):
    backend = CpuBackend(cache=BuildCache(tmp_path / "cache"))
    monkeypatch.setattr(backend, "_runner", lambda: crashing({"-O0", "-O1", "-O2", "-O3"}))
    out = toolchain.compile_program(SOURCE, tmp_path / "b", runner=crashing({"-O0", "-O2"}))
    assert not out.ok and out.compiler_crashed
    result = Engine(backend).check(TASK, Program(source=SOURCE), thorough=False)
    assert result.status == Status.ERROR, result.reason
    assert result.error_origin == ErrorOrigin.VALIDATOR
    assert "g++ crashed building the program's plain build, also at -O0" in result.reason
    # Nothing was cached: the same program builds once the compiler works.
    monkeypatch.undo()
    again = Engine(backend).check(TASK, Program(source=SOURCE), thorough=False)
    assert again.status == Status.PASSED, again.reason


def test_an_ordinary_error_is_not_built_again(tmp_path):
    calls: list[list[str]] = []

    def counting(cmd: list[str], cwd: Path, expose: list[Path]) -> toolchain.CommandResult:
        calls.append(cmd)
        return toolchain.run_local(cmd, cwd, expose)

    out = toolchain.compile_program(SOURCE.replace("2.0f * x[i]", "2.0f * x[j]"), tmp_path / "b",
                                    runner=counting)
    assert not out.ok and not out.compiler_crashed
    assert "-O0" not in calls[-1] and "was not declared in this scope" in out.diagnostics


@pytest.mark.parametrize("variant, level", [("asan", "-O1"), ("plain", "-O3")])
def test_a_checking_build_keeps_its_own_optimisation_level(tmp_path, variant, level):
    backend = CpuBackend(cache=BuildCache(tmp_path / "cache"))
    exe = backend.build(Program(source=SOURCE, extra_flags=["-O3"]), {}, variant=variant)
    assert exe.compile.ok, exe.compile.diagnostics
    program_step = exe.compile.command[:exe.compile.command.index("main.cu")]
    assert [w for w in program_step if w.startswith("-O")][-1] == level
    noted = "cudashim: -O3 applies to the plain build" in exe.compile.diagnostics
    assert noted == (variant != "plain")
