"""Asynchronous copies on the CPU shim (`__pipeline_memcpy_async`, `cooperative_groups::
memcpy_async`): double-buffered kernels pass against NumPy under both schedules and ASan, a
missing or late wait is caught, misuse is a runtime error, PTX cp.async stays needs_gpu."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec, Tolerance
from validators.analysis import analyze
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import check, run_program
from validators.sandbox import Limits, run_sandboxed

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

MATMUL_REFERENCE = """
import numpy as np
def reference(inputs, sizes):
    a = inputs["A"].astype(np.float64)
    b = inputs["B"].astype(np.float64)
    return {"C": (a @ b).astype(np.float32)}
"""

REVERSE_REFERENCE = """
import numpy as np
def reference(inputs, sizes):
    x = inputs["x"]
    out = np.empty_like(x)
    for base in range(0, x.size, 256):
        out[base:base + 256] = 2.0 * x[base:base + 256][::-1]
    return {"out": out}
"""


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def source(name: str, flags: list[str] | None = None) -> Program:
    return Program(source=(PROGRAMS / name).read_text(), extra_flags=flags or [])


def matmul_task() -> Task:
    return Task(
        name="async_matmul",
        description="C = A B, double-buffered tiles staged with __pipeline_memcpy_async",
        inputs=[
            TensorSpec(name="A", dtype="float32", shape=["M", "K"]),
            TensorSpec(name="B", dtype="float32", shape=["K", "N"]),
        ],
        outputs=[TensorSpec(name="C", dtype="float32", shape=["M", "N"])],
        sizes={"M": 70, "N": 50, "K": 90},
        cases=[
            InputCase(name="ragged", seed=1),
            InputCase(name="whole_tiles", seed=2, sizes={"M": 32, "N": 48, "K": 64}),
        ],
        reference=Reference(code=MATMUL_REFERENCE),
        tolerance=Tolerance(mode="allclose", atol=1e-4, rtol=1e-4),
    )


def reverse_task() -> Task:
    return Task(
        name="async_reverse_chunks",
        description="reverse each 256-element chunk and double it, staged with cg::memcpy_async",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="out", dtype="float32", shape=["N"])],
        sizes={"N": 5000},
        cases=[
            InputCase(name="default", seed=3),
            InputCase(name="short", seed=4, sizes={"N": 300}),
        ],
        reference=Reference(code=REVERSE_REFERENCE),
        tolerance=Tolerance(mode="allclose", atol=0.0, rtol=0.0),
    )


def assert_passed(res) -> None:
    assert res.status == Status.PASSED, (
        res.reason,
        [(c.case, c.reason) for c in res.cases],
        res.compile.diagnostics[-2000:] if res.compile else "",
    )


def test_cp_async_is_supported_but_inline_ptx_is_not(backend):
    assert backend.unsupported_features(["cp_async"]) == []
    assert backend.unsupported_features(["cp_async", "inline_ptx"]) == ["inline_ptx"]


def test_pipeline_matmul_passes_both_schedules_and_asan(backend):
    res = check(matmul_task(), source("async_copy_matmul.cu"), backend=backend, thorough=True)
    assert_passed(res)
    assert "cp_async" in res.features
    assert sorted(res.cases[0].schedules) == ["forward", "reverse"]


@pytest.mark.parametrize("mutant", ["NO_WAIT", "LATE_WAIT", "NO_SYNC"])
def test_pipeline_matmul_without_its_wait_is_caught(backend, mutant):
    res = check(
        matmul_task(),
        source("async_copy_matmul.cu", [f"-D{mutant}"]),
        backend=backend,
        thorough=False,
    )
    assert res.status == Status.FAILED, (mutant, res.reason)


def test_cg_staging_passes_both_schedules_and_asan(backend):
    res = check(reverse_task(), source("async_copy_cg_stage.cu"), backend=backend, thorough=True)
    assert_passed(res)
    assert "cp_async" in res.features


@pytest.mark.parametrize("mutant", ["NO_WAIT", "LATE_WAIT"])
def test_cg_staging_without_its_wait_is_caught(backend, mutant):
    res = check(
        reverse_task(),
        source("async_copy_cg_stage.cu", [f"-D{mutant}"]),
        backend=backend,
        thorough=False,
    )
    assert res.status == Status.FAILED, (mutant, res.reason)


def misuse(backend, mode: int):
    return run_program(source("async_copy_misuse.cu"), backend, defines={"MODE": mode})


def test_misaligned_16_byte_copy_is_reported(backend):
    run = misuse(backend, 1)
    assert run.status == Status.RUNTIME_ERROR
    assert run.reason == (
        "__pipeline_memcpy_async at main.cu:19 (thread (0,0,0), block (0,0,0)): "
        "misaligned address: src is 4 bytes past a 16-byte boundary"
    )


def test_unsupported_copy_size_is_reported(backend):
    run = misuse(backend, 2)
    assert run.status == Status.RUNTIME_ERROR
    assert run.reason.endswith("size_and_align is 12 (must be 4, 8 or 16)"), run.reason


def test_zfill_zeroes_the_tail_and_the_destination_is_undefined_until_the_wait(backend):
    run = misuse(backend, 3)
    assert run.status == Status.PASSED, run.reason
    before, after, status = run.outcome.stdout.strip().splitlines()
    assert before.split() == ["255"] * 16
    assert after.split() == [str(i) for i in range(1, 11)] + ["0"] * 6
    assert status == "no error"


def test_aligned_size_t_promise_is_checked(backend):
    run = misuse(backend, 4)
    assert run.status == Status.RUNTIME_ERROR
    assert run.reason.startswith("cooperative_groups::memcpy_async at main.cu:46"), run.reason
    assert run.reason.endswith("size 24 is not a multiple of 16 (aligned_size_t<16>)")


def test_copies_left_in_flight_do_not_leak_into_the_next_launch(backend):
    # The first launch exits with copies queued and its source is freed; the second launch's
    # wait must complete only its own copies (under ASan a replay would be a use after free).
    for variant in ("plain", "asan"):
        exe = backend.build(source("async_copy_misuse.cu"), {"MODE": 5}, variant=variant)
        argv, env = backend.command(exe, [])
        work = Path(exe.path).parent
        out = run_sandboxed(
            argv, work, limits=Limits().with_overrides(backend.sandbox_overrides(exe)), env=env
        )
        assert out.exit_code == 0, (variant, out.stderr[-2000:])
        values, status = out.stdout.strip().splitlines()
        assert values.split() == [str(131 - i) for i in range(32)]
        assert status == "no error"


INLINE_CP_ASYNC = r"""
#include <cstdio>
__global__ void k(const float* src, float* out) {
  __shared__ __align__(16) float s[4];
  unsigned saddr = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" :: "r"(saddr), "l"(src));
  asm volatile("cp.async.wait_all;\n" ::);
  out[0] = s[0];
}
int main() {
  float* p = nullptr;
  cudaMalloc(&p, 64);
  k<<<1, 1>>>(p, p);
  return cudaDeviceSynchronize() != cudaSuccess;
}
"""

LIBCUXX_PIPELINE = r"""
#include <cuda/pipeline>
#include <cooperative_groups.h>
__global__ void k(const float* src, float* out) {
  __shared__ float s[32];
  auto block = cooperative_groups::this_thread_block();
  cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();
  pipe.producer_acquire();
  cuda::memcpy_async(&s[threadIdx.x], &src[threadIdx.x], sizeof(float), pipe);
  pipe.producer_commit();
  pipe.consumer_wait();
  out[threadIdx.x] = s[threadIdx.x];
  pipe.consumer_release();
}
int main() { return 0; }
"""

CUDA_MEMCPY_ASYNC = r"""
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>
__global__ void k(const float* src, float* out, cuda::barrier<cuda::thread_scope_block>* bar) {
  __shared__ float s[32];
  cuda::memcpy_async(&s[threadIdx.x], &src[threadIdx.x], sizeof(float), *bar);
  out[threadIdx.x] = s[threadIdx.x];
}
int main() { return 0; }
"""


def test_inline_ptx_cp_async_still_needs_a_gpu(backend):
    features = analyze(INLINE_CP_ASYNC).features
    assert "cp_async" in features and "inline_ptx" in features
    res = check(reverse_task(), Program(source=INLINE_CP_ASYNC), backend=backend, thorough=False)
    assert res.status == Status.NEEDS_GPU
    assert "inline_ptx" in res.reason and "cp_async" not in res.reason.split("inline_ptx")[0], (
        res.reason
    )


def test_libcuxx_pipeline_and_barrier_copies_build(backend):
    """libcu++'s copies build on the shim's own headers (issue 26): `cuda::pipeline`
    (tests/validators/test_cpu_libcuxx_pipeline.py runs them) and `cuda::memcpy_async` with a
    `cuda::barrier` (tests/validators/test_cpu_libcuxx_sync.py)."""
    run = run_program(Program(source=LIBCUXX_PIPELINE), backend)
    assert run.status == Status.PASSED, run.reason
    run = run_program(Program(source="#include <cuda/barrier>\n" + CUDA_MEMCPY_ASYNC), backend)
    assert run.status == Status.PASSED, run.reason
