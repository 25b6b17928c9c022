"""A program nvcc refuses for its calls across execution spaces does not pass on the cpu backend
(validators/cpu/execution_spaces.py): g++ builds a kernel that calls a host function, nvcc does
not. The red team's hole: a kernel calling a host helper built on `std::vector` passed a task.
Real nvcc (its front end, `nvcc -cuda`) in the build's sandbox; skipped where there is none."""

from __future__ import annotations

import pytest

from schemas import Program
from sources.builtin.loader import load_tasks
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import execution_spaces, toolchain

pytestmark = pytest.mark.skipif(execution_spaces.nvcc() is None, reason="nvcc not installed")

HEAD = """#include <cstdio>
#include <algorithm>
#include <vector>
#define HD __host__ __device__
"""
MAIN = "\nint main() { float* y; cudaMalloc(&y, 128); k<<<1, 32>>>(y); cudaDeviceSynchronize(); printf(\"ok\\n\"); }\n"

REFUSED = {
    "host_helper": ("static float relu(float v) { std::vector<float> t{v, 0.f}; "
                    "return *std::max_element(t.begin(), t.end()); }\n"
                    "__global__ void k(float* y) { y[threadIdx.x] = relu(y[threadIdx.x]); }"),
    "functor_without_device": ("struct Op { float operator()(float v) const { return v + 1; } };\n"
                               "__global__ void k(float* y) { Op o; y[threadIdx.x] = o(y[threadIdx.x]); }"),
    "template_without_device": ("template <typename T> T sq(T v) { return v * v; }\n"
                                "__global__ void k(float* y) { y[threadIdx.x] = sq(y[threadIdx.x]); }"),
    "device_function_from_host": ("__device__ float twice(float v) { return 2 * v; }\n"
                                  "__global__ void k(float* y) { y[threadIdx.x] = twice(1.f); }\n"
                                  "float on_host() { return twice(3.f); }"),
}
ACCEPTED = (
    # constexpr host functions (std::max, the program's own) under --expt-relaxed-constexpr,
    # a lambda inside a kernel, `__host__ __device__` through a macro, a __device__ template.
    "constexpr float twice(float v) { return 2 * v; }\n"
    "HD float same(float v) { return v; }\n"
    "template <typename T> __device__ T sq(T v) { return v * v; }\n"
    "__global__ void k(float* y) { int i = threadIdx.x; auto l = [](float v) { return v * 3; };\n"
    "  y[i] = std::max(y[i], 0.f) + std::min(1.f, y[i]) + twice(y[i]) + same(y[i]) + sq(y[i]) + l(y[i]); }"
)


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("cache")))


@pytest.fixture(autouse=True)
def _checked(monkeypatch):
    monkeypatch.setenv("CKD_NVCC_CHECK", "1")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_call_across_execution_spaces_fails_the_plain_build_with_nvccs_words(backend, name):
    exe = backend.build(Program(source=HEAD + REFUSED[name] + MAIN), {}, variant="plain")
    assert not exe.compile.ok and exe.path is None and not exe.needs_gpu, exe.compile.diagnostics
    first = exe.compile.diagnostics.splitlines()[0]
    assert "is not allowed" in first and "nvcc's front end" in first, first


def test_what_nvcc_builds_still_builds_and_the_check_is_the_plain_builds_alone(backend):
    exe = backend.build(Program(source=HEAD + ACCEPTED + MAIN), {}, variant="plain")
    assert exe.compile.ok, exe.compile.diagnostics
    # The checking builds observe the program nvcc's check already judged (a thorough check
    # builds plain too); they do not pay for it again.
    asan = backend.build(Program(source=HEAD + REFUSED["host_helper"] + MAIN), {}, variant="asan")
    assert asan.compile.ok, asan.compile.diagnostics


def test_what_nvcc_says_of_anything_else_leaves_the_build_to_gpp(backend):
    # A library header this toolkit may not ship, and an error g++ does not make: not judged.
    source = "#include <cublas_v2.h>\n" + HEAD + ACCEPTED + MAIN
    exe = backend.build(Program(source=source), {}, variant="plain")
    assert exe.compile.ok, exe.compile.diagnostics


def test_built_in_solutions_pass_nvccs_front_end(tmp_path):
    # Every built-in solution passes (measured: 59 of 59, 1.4 s each here); the suite keeps
    # every seventh, so that a change to the check that refuses real programs shows.
    programs = [program for _task, program in load_tasks()][::7]
    found = [execution_spaces.check(program.source, program.filename, tmp_path, defines={},
                                    flags=[], runner=toolchain.run_local) for program in programs]
    assert len(found) >= 8 and not any(found), [f for f in found if f]
