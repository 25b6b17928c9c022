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
    -O on the command line wins, as in g++), with the driver's exit status for a crash under
    -pass-exit-codes (4; without the option it is 1, as for any error)."""

    def run(cmd: list[str], cwd: Path, expose: list[Path]) -> toolchain.CommandResult:
        opt = [w for w in cmd if w.startswith("-O")]
        if "main.cu" in cmd and opt and opt[-1] in levels:
            return toolchain.CommandResult(4 if "-pass-exit-codes" in cmd else 1, ICE)
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


@pytest.mark.parametrize("forged", [
    'static_assert(sizeof(int) == 3, "internal compiler error: in gimplify_expr, at gimplify.cc:1");',
    "#error internal compiler error: Segmentation fault",
    '#line 1 "main.cu:20:1: internal compiler error: Segmentation fault"\nint broken = ;',
])
def test_a_program_whose_own_error_text_reads_as_a_crash_is_a_compile_error(tmp_path, forged):
    # The program's text reaches g++'s diagnostics (a message, a file name): only the driver's
    # exit status tells a crash, so the error stays the program's, and is never blamed on us.
    backend = CpuBackend(cache=BuildCache(tmp_path / "cache"))
    source = SOURCE.replace("int main() {", forged + "\nint main() {")
    out = toolchain.compile_program(source, tmp_path / "b")
    assert not out.ok and not out.compiler_crashed and not out.ice
    assert "internal compiler error" in out.diagnostics
    result = Engine(backend).check(TASK, Program(source=source), thorough=False)
    assert result.status == Status.COMPILE_ERROR, (result.status, result.reason)


@pytest.mark.skipif(toolchain.toolkit_include_dir() is None, reason="no CUDA toolkit headers here")
def test_a_made_up_toolkit_header_does_not_turn_a_broken_program_into_needs_gpu(tmp_path):
    # `#include <cuda/...>` named a GPU feature whatever followed: a program that does not
    # compile could pick `needs_gpu` (no failure to a reward) over `compile_error`.
    from validators.cpu.diagnostics import gpu_feature_from_errors

    backend = CpuBackend(cache=BuildCache(tmp_path / "cache"))
    made_up = SOURCE.replace("#include <cstdio>", "#include <cstdio>\n#include <cuda/fake_feature_header.h>")
    result = Engine(backend).check(TASK, Program(source=made_up), thorough=False)
    assert result.status == Status.COMPILE_ERROR, (result.status, result.reason)
    assert "cuda/fake_feature_header.h" in result.reason
    # Headers the toolkit ships, and other libraries' headers, still name what they are.
    for header, feature in (("cuda/pipeline", "cp_async"), ("thrust/device_vector.h", "thrust"),
                            ("cudnn.h", "cudnn"), ("cublasLt.h", "cublas")):
        diag = f"main.cu:2:10: fatal error: {header}: No such file or directory"
        assert (gpu_feature_from_errors(diag) or "").startswith(feature), header
    for header in ("thrust/made_up.h", "cuda_made_up.h", "cooperative_groups/made_up.h"):
        assert gpu_feature_from_errors(f"main.cu:2:10: fatal error: {header}: No such file or directory") is None
