"""The WMMA API on the CPU shim (include/mma.h): tensor-core GEMM programs run and verify.

Real programs (tests/validators/cpu_programs/wmma_*.cu) go through the real engine and CPU
backend against NumPy references in float64 computed from the same rounded inputs (half,
bfloat16 or tf32). Tolerances: products of 16-bit (and tf32) inputs are exact in float, so the
only error of a float accumulator is the fp32 rounding of the running sum, at most about
K * 2**-24 * sum|a*b| (under 5e-4 for K = 80 and |a|, |b| < 1); a __half accumulator is rounded
to half after each of the K / 16 mma_sync calls and again in the epilogue (relative 2**-11 each,
on values of magnitude up to ~10). A wrong layout, index or missing tile is off by O(1).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec, Tolerance
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu.diagnostics import gpu_feature_from_errors
from validators.engine import check, run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

GEMM_REFERENCE = """
import numpy as np

def _bf16(x):
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000
    return u.astype(np.uint32).view(np.float32)

def _half(x):
    return x.astype(np.float16)

def reference(inputs, sizes):
    cast = {cast}
    a = cast(inputs["a"]).astype(np.float64)
    b = cast(inputs["b"]).astype(np.float64)
    c = inputs["c"]{c_cast}.astype(np.float64)
    return {{"d": (1.5 * (a @ b) - 0.5 * c).astype(np.float32)}}
"""

TF32_REFERENCE = """
import numpy as np

def _tf32(x):
    # __float_to_tf32: round to nearest, ties away from zero, to 10 mantissa bits.
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    u = (u + 0x1000) & 0xFFFFE000
    return u.astype(np.uint32).view(np.float32).astype(np.float64)

def reference(inputs, sizes):
    a, b = inputs["a"], inputs["b"]
    return {
        "d": (_tf32(a) @ _tf32(b)).astype(np.float32),
        "e": a.astype(np.float64) @ b.astype(np.float64),
    }
"""


def gemm_task(cast: str, half_c: bool, tolerance: Tolerance, cases: list[InputCase]) -> Task:
    return Task(
        name="wmma_gemm",
        description="D = 1.5 * A @ B - 0.5 * C on tensor cores (WMMA)",
        inputs=[
            TensorSpec(name="a", dtype="float32", shape=["M", "K"]),
            TensorSpec(name="b", dtype="float32", shape=["K", "N"]),
            TensorSpec(name="c", dtype="float32", shape=["M", "N"]),
        ],
        outputs=[TensorSpec(name="d", dtype="float32", shape=["M", "N"])],
        sizes={"M": 64, "N": 48, "K": 80},
        cases=cases,
        reference=Reference(
            code=GEMM_REFERENCE.format(cast=cast, c_cast=".astype(np.float16)" if half_c else "")
        ),
        tolerance=tolerance,
    )


FLOAT_ACC = Tolerance(mode="allclose", atol=1e-3, rtol=0.0)
HALF_ACC = Tolerance(mode="allclose", atol=5e-2, rtol=0.0)


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def gemm(flags: list[str]) -> Program:
    return Program(source=(PROGRAMS / "wmma_gemm.cu").read_text(), extra_flags=flags)


def assert_passed(res) -> None:
    assert res.status == Status.PASSED, (
        res.reason,
        [(c.case, c.reason) for c in res.cases],
        res.compile.diagnostics[-2000:] if res.compile else "",
    )


def test_wmma_is_a_supported_feature(backend):
    assert backend.unsupported_features(["wmma", "half"]) == []
    assert backend.unsupported_features(["wmma", "mma"]) == ["mma"]  # PTX mma.sync is not


def test_half_gemm_passes_every_schedule_and_asan(backend):
    task = gemm_task("_half", False, FLOAT_ACC, [InputCase(name="tiles", seed=7)])
    res = check(task, gemm([]), backend=backend, thorough=True)
    assert_passed(res)
    assert "wmma" in res.features
    (case,) = res.cases
    assert sorted(case.schedules) == ["forward", "reverse"], case.schedules


def test_bf16_gemm_with_col_major_b(backend):
    cases = [
        InputCase(name="default", seed=1),
        InputCase(name="other_sizes", seed=2, sizes={"M": 32, "N": 80, "K": 48}),
    ]
    task = gemm_task("_bf16", False, FLOAT_ACC, cases)
    res = check(task, gemm(["-DUSE_BF16", "-DB_COL_MAJOR"]), backend=backend, thorough=False)
    assert_passed(res)
    # bf16 rounding is what the reference models: half rounding would be ~8x more precise,
    # so the same inputs checked as half must fail.
    as_half = check(
        gemm_task("_half", False, FLOAT_ACC, cases[:1]),
        gemm(["-DUSE_BF16", "-DB_COL_MAJOR"]),
        backend=backend,
        thorough=False,
    )
    assert as_half.status == Status.FAILED, as_half.reason


def test_half_accumulator(backend):
    task = gemm_task("_half", True, HALF_ACC, [InputCase(name="default", seed=3)])
    res = check(task, gemm(["-DACC_HALF"]), backend=backend, thorough=False)
    assert_passed(res)


def test_tf32_and_double_shapes(backend):
    task = Task(
        name="wmma_tf32_f64",
        description="A @ B with tf32 (m16n16k8) and double (m8n8k4) WMMA",
        inputs=[
            TensorSpec(name="a", dtype="float32", shape=["M", "K"]),
            TensorSpec(name="b", dtype="float32", shape=["K", "N"]),
        ],
        outputs=[
            TensorSpec(name="d", dtype="float32", shape=["M", "N"]),
            TensorSpec(name="e", dtype="float64", shape=["M", "N"]),
        ],
        sizes={"M": 32, "N": 48, "K": 24},
        cases=[InputCase(name="default", seed=5)],
        reference=Reference(code=TF32_REFERENCE),
        # d: fp32 accumulation of 24 exact tf32 products (< 1e-5); skipping the tf32 rounding
        # would be off by ~1e-3. e: double accumulation.
        tolerances={
            "d": Tolerance(mode="allclose", atol=1e-4, rtol=0.0),
            "e": Tolerance(mode="allclose", atol=1e-9, rtol=0.0),
        },
    )
    prog = Program(source=(PROGRAMS / "wmma_tf32.cu").read_text())
    assert_passed(check(task, prog, backend=backend, thorough=False))


def test_mma_from_half_a_warp_is_reported(backend):
    res = run_program(Program(source=(PROGRAMS / "wmma_divergent.cu").read_text()), backend)
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert res.reason.startswith("deadlock: in kernel 'half_warp' block (0,0,0)"), res.reason
    assert "wmma::load_matrix_sync in main.cu:14" in res.reason, res.reason


def test_ldm_that_cuda_forbids_is_reported(backend, tmp_path):
    # ldm = K + 4 halves = 168 bytes: not a multiple of 16 bytes.
    res = run_program(gemm(["-DLDPAD=4"]), backend, workdir_files=[_zero_inputs(tmp_path)])
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert res.reason.startswith("wmma::load_matrix_sync at main.cu:"), res.reason
    assert "ldm 84 is not a multiple of 8 elements" in res.reason


def _zero_inputs(tmp_path: Path) -> Path:
    folder = tmp_path / "data"
    folder.mkdir()
    for name, shape in (("a", (64, 80)), ("b", (80, 48)), ("c", (64, 48))):
        np.zeros(shape, np.float32).tofile(folder / f"{name}.bin")
    return folder


def test_sub_byte_fragment_is_needs_gpu_naming_it(backend):
    res = run_program(Program(source=(PROGRAMS / "wmma_s4.cu").read_text()), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "wmma (fragment<matrix_a, 8, 8, 32, experimental::precision::s4, row_major>" in (
        res.reason
    )


def test_unsupported_shape_message_names_the_fragment():
    diag = (
        "mma.h: In instantiation of 'constexpr bool nvcuda::wmma::__cudashim_wmma::_check() "
        "[with ...]':\nmma.h:179:75:   required from 'class nvcuda::wmma::fragment<"
        "nvcuda::wmma::matrix_a, 8, 8, 32, __half, nvcuda::wmma::row_major>'\n"
        "main.cu:8:96:   required from here\nmma.h:106:19: error: static assertion failed: wmma: "
        "this matrix_a/matrix_b shape/type is not in the CPU shim's WMMA subset\n"
    )
    assert gpu_feature_from_errors(diag) == (
        "wmma (fragment<matrix_a, 8, 8, 32, __half, row_major>: this matrix_a/matrix_b "
        "shape/type is not in the CPU shim's WMMA subset)"
    )
    # A user error in WMMA code (no "CPU shim" in the message) stays a compile error.
    assert (
        gpu_feature_from_errors(
            "error: static assertion failed: wmma: an accumulator fragment takes no layout"
        )
        is None
    )


def test_idioms_from_the_wild_agree_with_host_loops(backend):
    res = run_program(Program(source=(PROGRAMS / "wmma_idioms.cu").read_text()), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-2000:])
    lines = res.outcome.stdout.split("\n")
    for check_name in ("int8_m32n8k16", "half_m8n32k16_staged", "satf"):
        assert f"{check_name} ok" in lines, lines
