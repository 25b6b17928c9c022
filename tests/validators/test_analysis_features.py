"""Feature flags: one snippet per flag, the evidence recorded, and look-alikes that must not flag."""

from __future__ import annotations

import pytest
from analysis_helpers import check_invariants

from validators.analysis import FEATURES, analyze
from validators.analysis.features import match_asm, match_include, match_name

COMMON_MD_FLAGS = (
    "inline_ptx wmma mma cp_async tma clusters grid_sync texture surface dynamic_parallelism "
    "cublas cudnn cufft curand curand_device cusparse cusolver thrust cub cutlass half bfloat16 fp8"
).split()

# flag -> (snippet, a fragment of the expected reason)
POSITIVE: dict[str, tuple[str, str]] = {
    "inline_ptx": (
        "__device__ unsigned lane() { unsigned r; asm volatile(\"mov.u32 %0, %%laneid;\" : \"=r\"(r)); return r; }",
        "inline asm",
    ),
    "wmma": (
        "#include <mma.h>\nusing namespace nvcuda;\n__global__ void k(half* a) {\n"
        "  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> f;\n"
        "  wmma::load_matrix_sync(f, a, 16);\n}\n",
        "mma.h",
    ),
    "mma": (
        "__device__ void m(float* d, unsigned a, unsigned b) {\n"
        '  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};"\n'
        '    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(a), "r"(a), "r"(b));\n}\n',
        "mma",
    ),
    "cp_async": (
        "#include <cuda_pipeline.h>\n__global__ void k(const float* g) {\n  __shared__ float s[32];\n"
        "  __pipeline_memcpy_async(&s[threadIdx.x], &g[threadIdx.x], sizeof(float));\n"
        "  __pipeline_commit();\n  __pipeline_wait_prior(0);\n}\n",
        "cuda_pipeline.h",
    ),
    "tma": (
        "void make(CUtensorMap* m, void* p) { cuTensorMapEncodeTiled(m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, p, 0, 0, 0, 0, 0, 0, 0, 0, 0); }\n",
        "CUtensorMap",
    ),
    "clusters": (
        "__global__ void __cluster_dims__(2, 1, 1) k(float* a) {\n"
        "  namespace cg = cooperative_groups;\n  cg::cluster_group c = cg::this_cluster();\n  c.sync();\n}\n",
        "__cluster_dims__",
    ),
    "grid_sync": (
        "#include <cooperative_groups.h>\nnamespace cg = cooperative_groups;\n"
        "__global__ void k(int* a) { cg::grid_group g = cg::this_grid(); a[0] = 1; g.sync(); }\n",
        "grid_group",
    ),
    "texture": (
        "__global__ void k(cudaTextureObject_t t, float* o) { o[threadIdx.x] = tex2D<float>(t, 0.5f, 0.5f); }\n",
        "cudaTextureObject_t",
    ),
    "surface": (
        "__global__ void k(cudaSurfaceObject_t s) { surf2Dwrite(1.0f, s, 4 * threadIdx.x, 0); }\n",
        "cudaSurfaceObject_t",
    ),
    "dynamic_parallelism": (
        "__global__ void child(int* a) { a[threadIdx.x] = 0; }\n"
        "__global__ void parent(int* a) { if (threadIdx.x == 0) child<<<1, 32>>>(a); }\n",
        "inside __global__ function `parent`",
    ),
    "cublas": (
        '#include "cublas_v2.h"\nvoid f() { cublasHandle_t h; cublasCreate(&h); }\n',
        "cublas_v2.h",
    ),
    "cudnn": ("#include <cudnn.h>\nvoid f() { cudnnHandle_t h; cudnnCreate(&h); }\n", "cudnn.h"),
    "cufft": ("#include <cufft.h>\nvoid f() { cufftHandle p; cufftPlan1d(&p, 8, CUFFT_C2C, 1); }\n", "cufft.h"),
    "curand": (
        "#include <curand.h>\nvoid f(float* d) { curandGenerator_t g; curandCreateGenerator(&g, CURAND_RNG_PSEUDO_DEFAULT); curandGenerateUniform(g, d, 8); }\n",
        "curand.h",
    ),
    "curand_device": (
        "#include <curand_kernel.h>\n__global__ void k(float* o) { curandState s; curand_init(0, threadIdx.x, 0, &s); o[threadIdx.x] = curand_uniform(&s); }\n",
        "curand_kernel.h",
    ),
    "cusparse": ("void f() { cusparseHandle_t h; cusparseCreate(&h); }\n", "cusparseHandle_t"),
    "cusolver": ("#include <cusolverDn.h>\nvoid f() { cusolverDnHandle_t h; cusolverDnCreate(&h); }\n", "cusolverDn.h"),
    "thrust": (
        "#include <thrust/sort.h>\nvoid f(thrust::device_vector<int>& v) { thrust::sort(v.begin(), v.end()); }\n",
        "thrust/sort.h",
    ),
    "cub": (
        "__global__ void k(int* o) {\n  typedef cub::BlockReduce<int, 128> R;\n  __shared__ typename R::TempStorage t;\n"
        "  o[0] = R(t).Sum(threadIdx.x);\n}\n",
        "namespace `cub::`",
    ),
    "cutlass": ("#include <cutlass/gemm/device/gemm.h>\nusing G = cutlass::gemm::device::Gemm<float, cutlass::layout::RowMajor>;\n", "cutlass/"),
    "half": (
        "#include <cuda_fp16.h>\n__global__ void k(half* o, const float* i) { o[threadIdx.x] = __float2half(i[threadIdx.x]); }\n",
        "cuda_fp16.h",
    ),
    "bfloat16": (
        "__global__ void k(__nv_bfloat16* o, const float* i) { o[threadIdx.x] = __float2bfloat16(i[threadIdx.x]); }\n",
        "__nv_bfloat16",
    ),
    "fp8": (
        "__global__ void k(__nv_fp8_e4m3* o, const float* i) { o[threadIdx.x] = __nv_fp8_e4m3(i[threadIdx.x]); }\n",
        "__nv_fp8_e4m3",
    ),
}


def test_flag_table_matches_the_agreed_names() -> None:
    assert sorted(FEATURES) == sorted(COMMON_MD_FLAGS)
    assert all(isinstance(d, str) and len(d) > 10 for d in FEATURES.values())
    assert sorted(POSITIVE) == sorted(COMMON_MD_FLAGS)


@pytest.mark.parametrize("flag", sorted(POSITIVE))
def test_each_flag_is_detected_with_evidence(flag: str) -> None:
    snippet, reason = POSITIVE[flag]
    a = analyze(snippet)
    check_invariants(a)
    assert flag in a.features, (flag, a.features, a.errors)
    reasons = [h.reason for h in a.feature_hits if h.feature == flag]
    assert any(reason in r for r in reasons), reasons
    hit = next(h for h in a.feature_hits if h.feature == flag)
    assert hit.line >= 1
    assert a.feature_reasons()[flag].endswith(f"(line {hit.line})")


def test_exact_flags_of_single_flag_snippets() -> None:
    # The snippets are written to raise only their own flag (plus the ones listed here).
    extra = {
        "mma": {"inline_ptx"},
        "wmma": {"half"},
        "clusters": set(),
        "grid_sync": set(),
    }
    for flag, (snippet, _) in POSITIVE.items():
        assert set(analyze(snippet).features) == {flag} | extra.get(flag, set()), flag


def test_asm_strings_classify_tma_separately_from_cp_async() -> None:
    bulk = 'asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global [%0], [%1, {%2, %3}];" :: "r"(a));'
    a = analyze("__device__ void f(unsigned a) { " + bulk + " }")
    assert a.features == ["inline_ptx", "tma"]
    plain = 'asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" :: "r"(a), "l"(p));'
    assert analyze("__device__ void f(unsigned a, void* p) { " + plain + " }").features == [
        "cp_async",
        "inline_ptx",
    ]
    assert [f for f, _ in match_asm("cp.async.bulk.x; cp.async.ca.y")] == ["tma", "cp_async"]


@pytest.mark.parametrize(
    "snippet",
    [
        "int f(int n) { int half = n / 2; return half; }",  # a variable named half
        "int f(int texture) { return texture + 1; }",  # a variable named texture
        "struct S { int surface; }; int g(S s) { return s.surface; }",
        "// uses cublasSgemm and thrust::sort in a comment only\nint x;",
        'const char* s = "asm volatile(\\"mma.sync\\") tex2D __half";',
        "int reduce(int a) { return a; } int g() { return reduce(1); }",
        "__global__ void k(float* a) { a[threadIdx.x] = 0; } int main() { k<<<1, 32>>>(0); }",
    ],
)
def test_lookalikes_raise_no_flag(snippet: str) -> None:
    a = analyze(snippet)
    check_invariants(a)
    assert a.features == [], a.feature_hits


def test_rule_helpers() -> None:
    assert match_name("tex1Dfetch") == "texture"
    assert match_name("half") is None and match_name("half", is_type=True) == "half"
    assert match_name("cp_async_bulk_tensor_2d_global_to_shared") == "tma"
    assert match_include("<thrust/device_vector.h>") == "thrust"
    assert match_include('"cuda_bf16.h"') == "bfloat16"
    assert match_include("<cuda/std/atomic>") is None
    assert match_include("<stdio.h>") is None


def test_features_inside_macro_bodies_are_seen() -> None:
    src = (
        "#define CHECK_CUBLAS(x) do { if ((x) != CUBLAS_STATUS_SUCCESS) abort(); } while (0)\n"
        '#define LANEID(r) asm("mov.u32 %0, %%laneid;" : "=r"(r))\n'
    )
    a = analyze(src)
    assert a.features == ["cublas", "inline_ptx"]
    hit = next(h for h in a.feature_hits if h.feature == "inline_ptx")
    assert hit.line == 2
    assert a.text[hit.span.start : hit.span.start + 3] == "asm"


def test_device_lambda_launch_is_dynamic_parallelism_but_host_lambda_is_not() -> None:
    host = "__global__ void k() {}\nvoid f() { auto g = [] { k<<<1, 1>>>(); }; g(); }\n"
    assert analyze(host).features == []
    dev = "__global__ void k() {}\n__device__ void f() { auto g = [] { k<<<1, 1>>>(); }; g(); }\n"
    a = analyze(dev)
    assert a.features == ["dynamic_parallelism"]
    assert a.launches[0].in_device_code and a.launches[0].in_lambda
