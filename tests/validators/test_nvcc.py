"""nvcc builds: real compiles, ptxas statistics, diagnostics, caching, sandboxed includes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program
from validators.build_cache import BuildCache
from validators.nvcc import NvccOptions, compile_program, parse_ptxas, truncate

pytestmark = pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not installed")

SRC = r"""
#include <cstdio>
#ifndef N
#define N 1024
#endif
__global__ void vecAdd(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }
template <int B> __global__ void red(float* x) {
  __shared__ float s[B]; s[threadIdx.x] = x[threadIdx.x]; __syncthreads();
  x[0] = s[B - 1 - threadIdx.x]; }
int main() { red<256><<<1, 256>>>(nullptr); printf("N=%d\n", N); return 0; }
"""

PTXAS = """ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function '_Z3redILi256EEvPf' for 'sm_90'
ptxas info    : Function properties for _Z3redILi256EEvPf
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 12 registers, used 1 barriers, 1024 bytes smem, 380 bytes cmem[0]
ptxas info    : Compiling entry function '_Z6vecAddPKfS0_Pfi' for 'sm_90'
ptxas info    : Function properties for _Z6vecAddPKfS0_Pfi
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers
"""


def test_parse_ptxas_text():
    red, vec = parse_ptxas(PTXAS)
    assert (red.kernel, red.registers, red.shared_bytes, red.stack_bytes) == ("red<256>", 12, 1024, 8)
    assert (red.spill_store_bytes, red.spill_load_bytes, red.constant_bytes) == (4, 12, 380)
    assert (vec.kernel, vec.registers, vec.shared_bytes, vec.stack_bytes) == ("vecAdd", 10, 0, 0)


def test_truncate_keeps_head_and_tail():
    t = truncate("a" * 50 + "b" * 50, limit=20)
    assert t.startswith("a" * 10) and t.endswith("b" * 10) and "cut" in t


@pytest.fixture
def cache(tmp_path) -> BuildCache:
    return BuildCache(tmp_path / "builds")


def test_compile_runs_and_reports_resources(cache, tmp_path):
    path, info = compile_program(Program(source=SRC), {"N": 77}, cache=cache)
    assert info.ok and path is not None and not info.cached
    assert "-O3" in info.command and "-arch=sm_90" in info.command and "-DN=77" in info.command
    assert info.compiler.startswith("nvcc ")
    kernels = {r.kernel: r for r in info.resources}
    assert kernels["red<256>"].shared_bytes == 1024 and kernels["vecAdd"].registers > 0
    import subprocess
    assert subprocess.run([str(path)], capture_output=True, text=True).stdout.strip() == "N=77"
    again, info2 = compile_program(Program(source=SRC), {"N": 77}, cache=cache)
    assert info2.cached and again == path and info2.resources == info.resources
    other, info3 = compile_program(Program(source=SRC), {"N": 78}, cache=cache)
    assert not info3.cached and other != path


def test_arch_is_configurable(cache):
    _, info = compile_program(Program(source=SRC), options=NvccOptions(arch="sm_80"), cache=cache)
    assert info.ok and "-arch=sm_80" in info.command


def test_compile_error_diagnostics_cached(cache):
    bad = Program(source="int main() { return undefined_thing; }\n")
    path, info = compile_program(bad, cache=cache)
    assert path is None and not info.ok and "undefined_thing" in info.diagnostics
    _, info2 = compile_program(bad, cache=cache)
    assert info2.cached and not info2.ok


def test_timeout_is_not_cached(cache):
    prog = Program(source=SRC + "\n// timeout variant\n")
    path, info = compile_program(prog, options=NvccOptions(timeout=0.05), cache=cache)
    assert path is None and "timed out" in info.diagnostics
    path, info = compile_program(prog, cache=cache)
    assert info.ok and not info.cached


def test_include_outside_sandbox_is_invisible(cache, tmp_path, monkeypatch):
    secret = tmp_path / "secret.h"
    secret.write_text("#error LEAKED_SECRET_CONTENT\n")
    prog = Program(source=f'#include "{secret}"\nint main() {{ return 0; }}\n')
    _, info = compile_program(prog, cache=cache)
    assert not info.ok and "LEAKED_SECRET_CONTENT" not in info.diagnostics


def test_include_dir_exposed_and_hashed(cache, tmp_path):
    inc = tmp_path / "prog"
    inc.mkdir()
    (inc / "helper.h").write_text("#define HELPER_VALUE 5\n")
    prog = Program(source='#include "helper.h"\n#include <cstdio>\nint main() { printf("%d\\n", HELPER_VALUE); }\n')
    opts = NvccOptions(include_dirs=(inc,))
    path, info = compile_program(prog, options=opts, cache=cache)
    assert info.ok, info.diagnostics
    (inc / "helper.h").write_text("#define HELPER_VALUE 6\n")
    path2, info2 = compile_program(prog, options=opts, cache=cache)
    assert info2.ok and not info2.cached and path2 != path
    assert Path(path2).is_file()
