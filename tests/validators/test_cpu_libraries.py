"""The host cuBLAS / cuSPARSE subsets of the CPU shim (include/cublas_api.h, include/cusparse.h).

Real programs (tests/validators/cpu_programs/cu{blas,sparse}_calls.cu) call the libraries through
the real CPU backend and print every result; NumPy recomputes each one here from the same
inputs (`fill`: exact multiples of 1/8, the formula the programs use). Functions outside the
subset fail to compile and come back as `needs_gpu` naming the function.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu.diagnostics import gpu_feature_from_errors, runtime_verdict
from validators.engine import run_program
from validators.sandbox import Limits, run_sandboxed

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"
REPO = Path(__file__).resolve().parents[2]
HECBENCH = REPO / ".." / "shared" / "data" / "hecbench"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def _parse(stdout: str) -> dict[str, list[str]]:
    out = {}
    for line in stdout.splitlines():
        name, *values = line.split()
        out[name] = values
    return out


def _run(backend: CpuBackend, name: str) -> dict[str, list[str]]:
    res = run_program(Program(source=(PROGRAMS / name).read_text()), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-2000:])
    return _parse(res.outcome.stdout)


@pytest.fixture(scope="module")
def blas(backend) -> dict[str, list[str]]:
    return _run(backend, "cublas_calls.cu")


@pytest.fixture(scope="module")
def sparse(backend) -> dict[str, list[str]]:
    return _run(backend, "cusparse_calls.cu")


def fill(n: int, seed: int) -> np.ndarray:
    i = np.arange(n, dtype=np.int64)
    return (((i * 37 + seed * 101) % 23) - 11) / 8.0


def cm(buf: np.ndarray, rows: int, cols: int, ld: int) -> np.ndarray:
    """The column-major rows x cols matrix with leading dimension ld inside buf (a view)."""
    return buf[: ld * cols].reshape(cols, ld).T[:rows, :]


def vidx(n: int, inc: int) -> np.ndarray:
    """Buffer positions of a BLAS vector's elements (a negative stride walks backwards)."""
    i = np.arange(n)
    return i * inc if inc >= 0 else (n - 1 - i) * -inc


def values(out: dict[str, list[str]], name: str) -> np.ndarray:
    return np.array([float(v) for v in out[name]])


def close(out, name, expected, rtol=1e-5, atol=1e-5):
    np.testing.assert_allclose(
        values(out, name), np.ravel(expected), rtol=rtol, atol=atol, err_msg=name
    )


# --- cuBLAS -------------------------------------------------------------------------------


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_sgemm_transposes_and_leading_dimensions(blas, ta, tb):
    m, n, k, alpha, beta = 7, 5, 6, 1.5, -0.5
    lda, ldb, ldc = (k if ta else m) + 3, (n if tb else k) + 2, m + 1
    a = cm(fill(lda * (m if ta else k), 1), k if ta else m, m if ta else k, lda)
    b = cm(fill(ldb * (k if tb else n), 2), n if tb else k, k if tb else n, ldb)
    c = fill(ldc * n, 3)  # the padding row of C must come back unchanged
    view = cm(c, m, n, ldc)
    view[:] = alpha * (a.T if ta else a) @ (b.T if tb else b) + beta * view
    close(blas, f"sgemm_{'T' if ta else 'N'}{'T' if tb else 'N'}", c)


def test_dgemm_and_beta_zero_does_not_read_c(blas):
    a, b, c = cm(fill(42, 1), 6, 7, 6), cm(fill(30, 2), 5, 6, 5), cm(fill(35, 3), 7, 5, 7)
    close(blas, "dgemm_TT", (0.25 * a.T @ b.T + 2.0 * c).T, rtol=1e-13)
    expected = 1.5 * cm(fill(6, 1), 3, 2, 3) @ cm(fill(4, 2), 2, 2, 2)
    close(blas, "sgemm_beta0", expected.T)  # C held NaN


def test_gemm_strided_batched_and_pointer_arrays(blas):
    sa, sb, sc = 6 * 4 + 7, 5 * 3 + 1, 4 * 3 + 2
    a, b, c = fill(sa * 3, 4), fill(sb * 3, 5), fill(sc * 3, 6)
    for i in range(3):
        view = cm(c[i * sc :], 4, 3, 4)
        view[:] = 1.5 * cm(a[i * sa :], 5, 4, 6).T @ cm(b[i * sb :], 5, 3, 5) - 0.5 * view
    close(blas, "sgemm_strided", c)
    for i in range(2):
        a, b, c = (
            cm(fill(6, 7 + i), 3, 2, 3),
            cm(fill(8, 9 + i), 4, 2, 4),
            cm(fill(12, 11 + i), 3, 4, 3),
        )
        close(blas, f"sgemm_batched{i}", (1.5 * a @ b.T - 0.5 * c).T)
        half = [x.astype(np.float16).astype(np.float64) for x in (a, b, c)]
        close(blas, f"hgemm_batched{i}", (1.5 * half[0] @ half[1].T - 0.5 * half[2]).T, rtol=2e-3)


def test_gemm_ex_half_bfloat16_and_legacy_compute_type(blas):
    a, b, c = cm(fill(24, 1), 4, 6, 4), cm(fill(18, 2), 6, 3, 6), cm(fill(12, 3), 4, 3, 4)
    close(blas, "gemmex_half", (a @ b).astype(np.float16).astype(np.float64).T, rtol=1e-3)
    p = cm(fill(24, 1), 6, 4, 6)
    close(blas, "gemmex_bf16", (1.5 * p.T @ b - 0.5 * c).T)
    close(blas, "gemmex_legacy", (1.5 * a @ b - 0.5 * c).T)


def test_sgemv_with_negative_and_wide_strides(blas):
    a = cm(fill(32, 1), 6, 4, 8)
    x, y = fill(7, 2), fill(6, 3)
    y[vidx(6, -1)] = 2.0 * a @ x[vidx(4, 2)] + 0.5 * y[vidx(6, -1)]
    close(blas, "sgemv_N", y)
    xt, yt = fill(6, 4), fill(10, 5)
    yt[vidx(4, 3)] = 2.0 * a.T @ xt + 0.5 * yt[vidx(4, 3)]
    close(blas, "sgemv_T", yt)


def test_sgeam_transposes(blas):
    a, b = cm(fill(12, 1), 4, 3, 4), cm(fill(12, 2), 3, 4, 3)
    close(blas, "sgeam", (1.5 * a.T - 0.5 * b).T)


def test_level1_with_strides(blas):
    x, y, xd, yd = fill(64, 1), fill(64, 2), fill(50, 3), fill(50, 4)
    close(blas, "sdot", x[vidx(10, 2)] @ y[vidx(10, -3)])
    close(blas, "ddot", xd @ yd, rtol=1e-14)
    close(blas, "snrm2", np.linalg.norm(x[0:27:3]), rtol=1e-7)
    close(blas, "dnrm2", np.linalg.norm(xd), rtol=1e-14)
    close(blas, "sasum", np.abs(x[0:22:2]).sum())
    # 1-based, the first of equal magnitudes (the fill has many ties)
    assert int(blas["isamax"][0]) == np.argmax(np.abs(x[0:22:2])) + 1
    assert int(blas["isamin"][0]) == np.argmin(np.abs(x[0:22:2])) + 1
    assert int(blas["idamax"][0]) == np.argmax(np.abs(xd)) + 1
    ya = fill(8, 5)
    ya[vidx(8, -1)] += 0.75 * x[vidx(8, 2)]
    close(blas, "saxpy", ya)
    xs = fill(13, 6)
    xs[vidx(5, 3)] *= -2.0
    close(blas, "sscal", xs)
    yc = fill(11, 7)
    yc[vidx(6, 2)] = x[:6]
    close(blas, "scopy", yc)
    p, q = fill(4, 8), fill(7, 9)
    p_new, q_new = q[vidx(4, -2)].copy(), q.copy()
    q_new[vidx(4, -2)] = p
    close(blas, "sswap_x", p_new)
    close(blas, "sswap_y", q_new)


def test_device_pointer_mode_writes_results_through_device_pointers(blas):
    x, y = fill(40, 1), fill(40, 2)
    mode, nrm, dot, idx = blas["device_mode"]
    assert mode == "1"
    assert float(nrm) == pytest.approx(np.linalg.norm(x), rel=1e-7)
    assert float(dot) == pytest.approx(x @ y, rel=1e-6)
    assert int(idx) == np.argmax(np.abs(y)) + 1


def test_level1_ex_with_half_and_bfloat16(blas):
    hx, hy = fill(100, 1), fill(100, 2)
    close(blas, "dotex_half", np.float16(hx @ hy), rtol=1e-3)
    close(blas, "dotex_bf16", fill(100, 3)[0:100:2] @ fill(100, 4)[0:100:2])
    close(blas, "nrm2ex_half", np.linalg.norm(hx), rtol=1e-6)
    close(blas, "axpyex_half", (0.5 * hx + hy).astype(np.float16), rtol=1e-3)


def test_set_get_matrix_and_vector(blas):
    b = fill(8, 0)
    for j in range(2):
        b[j * 4 : j * 4 + 3] = np.arange(10)[j * 5 : j * 5 + 3]
    close(blas, "setmatrix", b)
    close(blas, "getmatrix", [0, 1, 2, 5, 6, 7])
    close(blas, "getvector", [0, 5])


def test_invalid_arguments_return_invalid_value_and_touch_nothing(blas):
    # lda < m, m < 0, a bad transpose, gemv incx == 0, SetMatrix lda == 0, T: lda < k; no handle
    assert blas["invalid"] == ["7"] * 6 + ["1", "CUBLAS_STATUS_INVALID_VALUE"]
    close(blas, "untouched", fill(64, 3), rtol=0, atol=0)
    assert int(blas["version"][0]) >= 12000


# --- cuSPARSE -----------------------------------------------------------------------------


def _dense() -> np.ndarray:
    i, j = np.meshgrid(np.arange(5), np.arange(4), indexing="ij")
    return np.where((3 * i + 5 * j) % 4 == 0, 0.0, cm(fill(7 * 4, 1), 5, 4, 7))


def test_nnz_rows_columns_and_device_total(sparse):
    a = _dense()
    total = np.count_nonzero(a)
    assert sparse["base"] == ["1"]
    assert (
        sparse["nnz_total_row"] == sparse["nnz_total_col"] == sparse["dnnz_total"] == [str(total)]
    )
    close(sparse, "nnz_row", np.count_nonzero(a, axis=1), rtol=0, atol=0)
    close(sparse, "nnz_col", np.count_nonzero(a, axis=0), rtol=0, atol=0)
    assert sparse["invalid"] == ["3", "CUSPARSE_STATUS_INVALID_VALUE"]


def test_spmv_csr_coo_and_spmm(sparse):
    a = _dense()
    x, y, xt, yt = fill(4, 2), fill(5, 3), fill(5, 4), fill(4, 5)
    assert sparse["spmv_status"] == ["0", "0", "3"]  # a wrong-sized x is INVALID_VALUE
    close(sparse, "spmv", 2.0 * a @ x + 0.5 * y)
    close(sparse, "spmv_t", 2.0 * a.T @ xt + 0.5 * yt)
    close(sparse, "spmv_coo", a @ x, rtol=1e-13)
    assert sparse["size"] == ["5", "4", str(np.count_nonzero(a))]
    close(sparse, "spmm", a @ cm(fill(18, 6), 4, 3, 6))  # row-major C: ravel() order


def test_calls_are_clean_under_address_sanitizer(backend, blas, sparse, tmp_path):
    # cudaMalloc returns exact sizes there: a read past any argument array would be reported.
    for name, plain in (("cublas_calls.cu", blas), ("cusparse_calls.cu", sparse)):
        exe = backend.build(Program(source=(PROGRAMS / name).read_text()), {}, variant="asan")
        argv, env = backend.command(exe, [])
        out = run_sandboxed(
            argv, tmp_path, limits=Limits().with_overrides(backend.sandbox_overrides(exe)), env=env
        )
        verdict = backend.classify(exe, out)
        assert verdict.status is None and out.exit_code == 0, (
            name,
            verdict.reason,
            out.stderr[-2000:],
        )
        assert _parse(out.stdout) == plain


_ROWMAJOR_GEMM = """#include <cublas_v2.h>
#include <cstdio>
#include <vector>
#ifndef M
#define M 33
#endif
#ifndef N
#define N 17
#endif
#ifndef K
#define K 20
#endif
static void io(const char* path, float* p, size_t n, bool write) {
  FILE* f = fopen(path, write ? "wb" : "rb");
  if (!f || (write ? fwrite(p, 4, n, f) : fread(p, 4, n, f)) != n) { printf("io %s\\n", path); exit(1); }
  fclose(f);
}
int main() {
  std::vector<float> a(M * K), b(K * N), c(M * N);
  io("data/a.bin", a.data(), a.size(), false);
  io("data/b.bin", b.data(), b.size(), false);
  float *da, *db, *dc;
  cudaMalloc(&da, a.size() * 4); cudaMalloc(&db, b.size() * 4); cudaMalloc(&dc, c.size() * 4);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  cublasHandle_t h;
  cublasCreate(&h);
  const float one = 1.0f, zero = 0.0f;
  // row-major C = A B as column-major C^T = B^T A^T
  if (cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, db, N, da, K, &zero, dc, N) != CUBLAS_STATUS_SUCCESS) return 1;
  cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost);
  io("data/c.bin", c.data(), c.size(), true);
  cublasDestroy(h);
  return 0;
}
"""


def test_library_program_validates_against_a_task(tmp_path):
    # The dataset's path: `check` with both schedules and the AddressSanitizer build.
    from schemas import InputCase, Reference, Task, TensorSpec
    from validators.engine import check

    task = Task(
        name="matmul",
        description="c = a @ b (row-major)",
        inputs=[
            TensorSpec(name="a", dtype="float32", shape=["M", "K"]),
            TensorSpec(name="b", dtype="float32", shape=["K", "N"]),
        ],
        outputs=[TensorSpec(name="c", dtype="float32", shape=["M", "N"])],
        sizes={"M": 33, "N": 17, "K": 20},
        cases=[InputCase(name="base", seed=1), InputCase(name="other", seed=2, sizes={"N": 40})],
        reference=Reference(
            code="def reference(inputs, sizes):\n    return {'c': inputs['a'] @ inputs['b']}\n"
        ),
    )
    backend = CpuBackend(cache=BuildCache(tmp_path / "builds"))
    res = check(task, Program(source=_ROWMAJOR_GEMM), backend=backend, thorough=True)
    assert res.status == Status.PASSED, res.reason


# --- what the subset does not cover -------------------------------------------------------

_TRSM = """#include <cublas_v2.h>
int main() {
  cublasHandle_t h; cublasCreate(&h);
  float one = 1, *a = 0, *b = 0;
  cublasStrsm(h, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, CUBLAS_DIAG_NON_UNIT, 4, 4, &one, a, 4, b, 4);
  return 0;
}
"""
_BLOCKED_ELL = """#include <cusparse.h>
int main() {
  cusparseSpMatDescr_t a;
  cusparseCreateBlockedEll(&a, 4, 4, 2, 2, (void*)0, (void*)0, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                           CUDA_R_32F);
  return 0;
}
"""
_INT8_GEMM = """#include <cublas_v2.h>
#include <cstdio>
int main() {
  cublasHandle_t h; cublasCreate(&h);
  signed char *a, *b; int *c; int one = 1, zero = 0;
  cudaMalloc(&a, 16); cudaMalloc(&b, 16); cudaMalloc(&c, 64);
  printf("before\\n");
  cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, 4, 4, 4, &one, a, CUDA_R_8I, 4, b, CUDA_R_8I, 4, &zero, c, CUDA_R_32I, 4,
               CUBLAS_COMPUTE_32I, CUBLAS_GEMM_DEFAULT);
  printf("after\\n");
  return 0;
}
"""


@pytest.mark.parametrize(
    "source, name",
    [(_TRSM, "cublasStrsm"), (_BLOCKED_ELL, "cusparseCreateBlockedEll")],
    ids=["cublasStrsm", "cusparseCreateBlockedEll"],
)
def test_function_outside_the_subset_needs_a_gpu_naming_it(backend, source, name):
    res = run_program(Program(source=source), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert name in res.reason and "subset" in res.reason


def test_data_type_outside_the_subset_stops_the_run_as_needs_gpu(backend):
    res = run_program(Program(source=_INT8_GEMM), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "cublasGemmEx" in res.reason and "CUDA_R_8I" in res.reason
    assert "before" in res.outcome.stdout and "after" not in res.outcome.stdout


def test_library_flags_are_accepted_others_stay_unsupported():
    flags = ["cublas", "cusparse", "cufft", "cudnn", "curand", "curand_device", "cusolver", "half"]
    assert CpuBackend().unsupported_features(flags) == ["cudnn", "cusolver"]


def test_diagnostics_name_the_missing_function():
    diag = "main.cu:9:3: error: ‘cublasZgemm’ was not declared in this scope; did you mean ‘cublasSgemm’?"
    assert (
        gpu_feature_from_errors(diag)
        == "cublas (cublasZgemm is not in the CPU shim's cuBLAS subset)"
    )
    missing = "main.cu:2:10: fatal error: cublasLt.h: No such file or directory"
    assert (gpu_feature_from_errors(missing) or "").startswith("cublas")
    status, reason = runtime_verdict(
        "", "cudashim: needs a GPU: cusparseSpMV with values CUDA_C_32F\n", 70
    )
    assert status == "needs_gpu" and reason.startswith("cusparseSpMV with values CUDA_C_32F")


# --- HeCBench programs that call the libraries ----------------------------------------------

# Makefile arguments scaled down for a CPU (as benchmarks/hecbench_cpu.py does); norm2 loops
# over sizes up to 2^29 elements in its source: the bound is cut to 2^21.
_HECBENCH = {
    "blas-dot-cuda": (["65536", "2"], []),
    "norm2-cuda": (["1"], [("n <= 1024*1024*512;", "n <= 1024*1024*2;")]),
    "spnnz-cuda": (["2000", "2000", "15000", "2"], []),
}


def _hecbench_source(folder: Path) -> str:
    # Local headers are inlined; a Makefile `-I../sibling` missing from the data comes from
    # the stand-ins in benchmarks/hecbench_support/ (spnnz takes utils.h from spd2s-cuda).
    mk = (folder / "Makefile").read_text(errors="replace")
    dirs = [folder] + [
        d
        for rel in re.findall(r"-I\.\./([\w.-]+)", mk)
        for d in (folder.parent / rel, REPO / "benchmarks" / "hecbench_support" / rel)
        if d.is_dir()
    ]

    def inline(m: re.Match[str]) -> str:
        for d in dirs:
            if (d / m.group(1)).is_file():
                return (d / m.group(1)).read_text(errors="replace")
        return m.group(0)

    text = (folder / "main.cu").read_text(errors="replace")
    return re.sub(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"', inline, text, flags=re.M)


@pytest.mark.skipif(not HECBENCH.is_dir(), reason="../shared/data is absent")
@pytest.mark.parametrize("name", sorted(_HECBENCH))
def test_hecbench_library_programs_pass_their_own_check(backend, name):
    args, edits = _HECBENCH[name]
    source = _hecbench_source(HECBENCH / name)
    for old, new in edits:
        assert old in source, f"{name}: the size edit no longer applies"
        source = source.replace(old, new)
    res = run_program(Program(source=source), backend, args)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-2000:])
    out = res.outcome.stdout
    assert re.search(r"\bPASS(ED)?\b", out) and not re.search(r"\bFAIL", out), out[-2000:]
    if name == "blas-dot-cuda":  # FP64, FP32, FP16 and BF16 each checked
        assert out.count("PASS") == 4


@pytest.mark.skipif(__import__("validators.cpu.toolchain", fromlist=["nvtx_dir"]).nvtx_dir() is None,
                    reason="no CUDA toolkit with NVTX v3 headers here")
def test_nvtx_ranges_and_marks_are_the_no_ops_they_are_without_a_profiler(backend):
    """NVTX is header-only and does nothing without a profiler: 193 of 223 real benchmark
    solutions include it, and all were `needs_gpu`. The toolkit's own v3 headers (and the
    legacy `nvToolsExt.h`) build against the shim; the program's kernels still do the work."""
    assert _run(backend, "nvtx_ranges.cu")["sum"] == [str(1000 * 999 // 2)]
    # The pre-v3 name (toolkits before CUDA 12 shipped it beside a library) builds too.
    legacy = ('#include <nvToolsExt.h>\n#include <cstdio>\nint main() { nvtxRangePushA("a"); '
              'nvtxRangePop(); std::printf("ok 1\\n"); }\n')
    res = run_program(Program(source=legacy), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])


LT_CASES = ["col_nn", "row_tn", "mixed_nt", "gelu_aux_bias", "relu_bias_batched", "half_in_place", "int8", "statuses"]


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_cublaslt_matmuls_match_the_loop(backend, variant):
    """cuBLASLt's matmul (`include/cublasLt.h`; HeCBench's mlp and llm.c's forward pass call it):
    column and row orders under every transpose pair, device-side scalars, the bias, ReLU and
    GELU epilogues with GELU's input stored aside, strided batches, half matrices updated in
    place, and int8 products into int32 (`cpu_programs/cublaslt_calls.cu` checks each against a
    double loop). Shapes that disagree and attribute buffers of the wrong size are refused and
    write nothing. Before, `#include <cublasLt.h>` made every such program `needs_gpu`."""
    res = run_program(Program(source=(PROGRAMS / "cublaslt_calls.cu").read_text()), backend, LT_CASES,
                      variant=variant)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-2000:])
    got = _parse(res.outcome.stdout)
    for case in LT_CASES[:-1]:
        assert got[case][1] == "PASS", (case, got[case])
    assert [got[c][0] for c in ("col_nn", "row_tn", "int8")] == ["0", "0", "0"]
    invalid = "7"  # CUBLAS_STATUS_INVALID_VALUE
    lines = dict(line.split()[1:] for line in res.outcome.stdout.splitlines() if line.startswith("status"))
    assert lines == {"attribute_size": invalid, "attribute_query": "4", "shapes": invalid,
                     "leading_dimension": invalid, "touched": "0"}


_LT_COL32 = """
#include <cublasLt.h>
#include <cstdio>
int main() {
  cublasLtHandle_t h; cublasLtCreate(&h);
  cublasLtMatmulDesc_t op; cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatrixLayout_t l; cublasLtMatrixLayoutCreate(&l, CUDA_R_32F, 32, 32, 32);
  int32_t order = CUBLASLT_ORDER_COL32;
  cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ORDER, &order, sizeof order);
  float* x; cudaMalloc(&x, 32 * 32 * 4); float a = 1, b = 0;
  printf("before\\n");
  cublasLtMatmul(h, op, &a, x, l, x, l, &b, x, l, x, l, nullptr, nullptr, 0, 0);
  printf("after\\n");
}
"""


def test_a_cublaslt_matmul_outside_the_subset_needs_a_gpu_naming_it(backend):
    res = run_program(Program(source=_LT_COL32), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "cublasLtMatmul with a tiled matrix order" in res.reason
    assert "before" in res.outcome.stdout and "after" not in res.outcome.stdout


def test_batched_lu_inverse_qr_and_least_squares_satisfy_their_equations(backend):
    """cuBLAS's batched solvers (`include/cudashim/cublas_solvers.h`; HeCBench's gels stopped as
    `needs_gpu` on `cublasSgelsBatched`) in S, D, C and Z: getrf then getrs under N, T and C,
    getri and matinv (A inv(A) = I), geqrf (A = Q R from the reflectors and tau) and gels (the
    normal equations), each checked in `cpu_programs/cublas_solvers.cu`; an exactly singular
    matrix's info names its zero pivot, and invalid arguments give LAPACK's -i in the host info."""
    res = run_program(Program(source=(PROGRAMS / "cublas_solvers.cu").read_text()), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-2000:])
    lines = res.outcome.stdout.splitlines()
    checks = [ln.split() for ln in lines if not ln.startswith("status")]
    routines = ["getrs_n", "getri", "matinv", "getrs_t", "getrs_c", "geqrf", "gels"]
    assert [(c[0], c[1]) for c in checks] == [(r, t) for t in "SDCZ" for r in routines], lines
    assert all(c[3] == "PASS" for c in checks), lines
    statuses = {ln.split()[1]: ln.split()[2:] for ln in lines if ln.startswith("status")}
    invalid = "7"  # CUBLAS_STATUS_INVALID_VALUE
    assert statuses == {"singular": ["0", "2", "pivots", "3", "2", "3"], "getrs_lda": [invalid, "-6"],
                        "gels_trans": [invalid, "-2"], "matinv_33": [invalid]}, lines
