"""Feature flags: CUDA constructs a CPU emulation cannot run (or that need a library).

`FEATURES` is the one table of flag names with a human description; the rule tables below say
which syntax-tree tokens raise which flag. Matching is done on single, already isolated tokens
(an identifier, an include path, the text of an `asm` string), never on raw source.
"""

from __future__ import annotations

import re

FEATURES: dict[str, str] = {
    "inline_ptx": "inline PTX assembly (`asm`/`asm volatile`)",
    "wmma": "warp matrix multiply-accumulate API (`nvcuda::wmma`, `mma.h`)",
    "mma": "tensor-core MMA instructions in PTX (`mma.sync`, `wgmma`, `ldmatrix`) or `__hmma_*` builtins",
    "cp_async": "asynchronous global->shared copies (`cp.async`, `__pipeline_memcpy_async`, `memcpy_async`)",
    "tma": "Tensor Memory Accelerator (`cp.async.bulk`, `cuTensorMapEncode*`, `CUtensorMap`)",
    "clusters": "thread-block clusters (`__cluster_dims__`, `this_cluster()`, cluster launch attributes)",
    "grid_sync": "grid-wide synchronisation / cooperative launch (`this_grid()`, `grid_group`, `cudaLaunchCooperativeKernel`)",
    "texture": "texture references/objects and fetches (`cudaTextureObject_t`, `texture<>`, `tex1D/2D/3D`)",
    "surface": "surface references/objects (`cudaSurfaceObject_t`, `surface<>`, `surf2Dwrite`)",
    "dynamic_parallelism": "a kernel launched from device code (`<<<>>>` inside a `__global__`/`__device__` function)",
    "cublas": "the cuBLAS library",
    "cudnn": "the cuDNN library",
    "cufft": "the cuFFT library",
    "curand": "the cuRAND host library (`curand.h`: generators that fill memory without a kernel of the program's)",
    "curand_device": "the cuRAND device API (`curand_kernel.h`: `curand_init`, `curandState`, `curand_uniform` in kernels)",
    "cusparse": "the cuSPARSE library",
    "cusolver": "the cuSOLVER library",
    "thrust": "the Thrust library",
    "cub": "the CUB library",
    "cutlass": "CUTLASS / CuTe",
    "half": "16-bit floating point (`half`, `__half`, `cuda_fp16.h`)",
    "bfloat16": "bfloat16 (`__nv_bfloat16`, `cuda_bf16.h`)",
    "fp8": "8-bit floating point (`__nv_fp8_*`, `cuda_fp8.h`)",
}

# Names that raise a flag wherever they appear as an identifier, type or field name.
NAME_EXACT: dict[str, str] = {
    "curand": "curand_device",  # `curand(&state)`: a draw in a kernel
    "curand4": "curand_device",
    # wmma, also reached through `using namespace nvcuda::wmma;` with bare names
    "nvcuda": "wmma",
    "wmma": "wmma",
    "mma_sync": "wmma",
    "load_matrix_sync": "wmma",
    "store_matrix_sync": "wmma",
    "fill_fragment": "wmma",
    "__pipeline_memcpy_async": "cp_async",
    "__pipeline_commit": "cp_async",
    "__pipeline_wait_prior": "cp_async",
    "memcpy_async": "cp_async",
    "CUtensorMap": "tma",
    "__cluster_dims__": "clusters",
    "this_cluster": "clusters",
    "cluster_group": "clusters",
    "cudaLaunchAttributeClusterDimension": "clusters",
    "this_grid": "grid_sync",
    "grid_group": "grid_sync",
    "this_multi_grid": "grid_sync",
    "multi_grid_group": "grid_sync",
    "cudaLaunchCooperativeKernel": "grid_sync",
    "cudaLaunchCooperativeKernelMultiDevice": "grid_sync",
    "cudaTextureObject_t": "texture",
    "cudaCreateTextureObject": "texture",
    "cudaSurfaceObject_t": "surface",
    "cudaCreateSurfaceObject": "surface",
    "cudaBindSurfaceToArray": "surface",
}

# Checked in order, so a longer prefix must come before a shorter one of another flag.
NAME_PREFIXES: tuple[tuple[str, str], ...] = (
    ("cp_async_bulk", "tma"),
    ("cp_async", "cp_async"),
    ("cuTensorMapEncode", "tma"),
    ("cudaFuncAttributeNonPortableCluster", "clusters"),
    ("cudaFuncAttributeRequiredCluster", "clusters"),
    ("__hmma_", "mma"),
    ("__imma_", "mma"),
    ("__bmma_", "mma"),
    ("tex1D", "texture"),
    ("tex2D", "texture"),
    ("tex3D", "texture"),
    ("texCubemap", "texture"),
    ("cudaBindTexture", "texture"),
    ("surf1D", "surface"),
    ("surf2D", "surface"),
    ("surf3D", "surface"),
    ("surfCubemap", "surface"),
    ("cublas", "cublas"),
    ("CUBLAS_", "cublas"),
    ("cudnn", "cudnn"),
    ("CUDNN_", "cudnn"),
    ("cufft", "cufft"),
    ("CUFFT_", "cufft"),
    # The host API (generators filling memory without a kernel of the program's) before the
    # device API's `curand_*`/`curandState*`: only the first computes without a launch.
    ("curandCreateGenerator", "curand"),
    ("curandGenerate", "curand"),
    ("curandSet", "curand"),
    ("curandDestroyGenerator", "curand"),
    ("curandGenerator_t", "curand"),
    ("curandState", "curand_device"),
    ("curand_", "curand_device"),
    ("curand", "curand"),
    ("CURAND_RNG_", "curand"),
    ("cusparse", "cusparse"),
    ("CUSPARSE_", "cusparse"),
    ("cusolver", "cusolver"),
    ("CUSOLVER_", "cusolver"),
    ("__float2half", "half"),
    ("__half2float", "half"),
    ("__floats2half2", "half"),
    ("__float22half2", "half"),
    ("__half22float2", "half"),
    ("__ushort_as_half", "half"),
    ("__short_as_half", "half"),
    ("__float2bfloat16", "bfloat16"),
    ("__bfloat162float", "bfloat16"),
    ("__floats2bfloat162", "bfloat16"),
    ("__float22bfloat162", "bfloat16"),
    ("__bfloat1622float2", "bfloat16"),
    ("__ushort_as_bfloat16", "bfloat16"),
    ("__short_as_bfloat16", "bfloat16"),
    ("__nv_bfloat16", "bfloat16"),
    ("nv_bfloat16", "bfloat16"),
    ("__nv_fp8", "fp8"),
    ("__nv_cvt_float_to_fp8", "fp8"),
    ("__nv_cvt_fp8", "fp8"),
    ("__nv_cvt_halfraw_to_fp8", "fp8"),
    ("__nv_cvt_bfloat16raw_to_fp8", "fp8"),
)

# Only as a type (`half` is also a common variable name; `texture<...>` is a template type).
TYPE_EXACT: dict[str, str] = {
    "half": "half",
    "half2": "half",
    "__half": "half",
    "__half2": "half",
    "__half_raw": "half",
    "__half2_raw": "half",
    "texture": "texture",
    "surface": "surface",
}

# `ns::...` or `using namespace ns;`
NAMESPACES: dict[str, str] = {
    "wmma": "wmma",
    "nvcuda": "wmma",
    "thrust": "thrust",
    "cub": "cub",
    "cutlass": "cutlass",
    "cute": "cutlass",
}

# `#include` paths: exact names, then directory prefixes.
INCLUDE_EXACT: dict[str, str] = {
    "mma.h": "wmma",
    "cuda_pipeline.h": "cp_async",
    "cuda_pipeline_primitives.h": "cp_async",
    "cuda/pipeline": "cp_async",
    "cooperative_groups/memcpy_async.h": "cp_async",
    "cuda_fp16.h": "half",
    "cuda_fp16.hpp": "half",
    "cuda_bf16.h": "bfloat16",
    "cuda_bf16.hpp": "bfloat16",
    "cuda_fp8.h": "fp8",
    "cuda_fp8.hpp": "fp8",
    "cudnn.h": "cudnn",
    "cufft.h": "cufft",
    "cufftXt.h": "cufft",
    "cufftw.h": "cufft",
    "curand.h": "curand",
    "curand_kernel.h": "curand_device",
    "cusolverDn.h": "cusolver",
    "cusolverSp.h": "cusolver",
    "cusolverRf.h": "cusolver",
    "cusolverMg.h": "cusolver",
}
INCLUDE_PREFIXES: tuple[tuple[str, str], ...] = (
    ("cublas", "cublas"),
    ("cusparse", "cusparse"),
    ("cudnn", "cudnn"),
    ("thrust/", "thrust"),
    ("cub/", "cub"),
    ("cuda/std/", ""),  # libcu++: not a flag by itself
    ("cutlass/", "cutlass"),
    ("cute/", "cutlass"),
)

# Substrings of an `asm` statement's code string, checked in order; the first matching entry
# of a group wins (`cp.async.bulk` is TMA, not plain cp.async).
ASM_PATTERNS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("cp.async.bulk", "cp.reduce.async.bulk"), "tma"),
    (("cp.async",), "cp_async"),
    (("mma", "ldmatrix", "stmatrix"), "mma"),
    (("barrier.cluster", "%cluster", "mapa."), "clusters"),
    (("tex.", "tld4."), "texture"),
    (("suld.", "sust.", "sured."), "surface"),
)


def match_name(name: str, is_type: bool = False) -> str | None:
    """The flag raised by one identifier / type / field name, if any."""
    feature = NAME_EXACT.get(name)
    if feature:
        return feature
    if is_type:
        feature = TYPE_EXACT.get(name)
        if feature:
            return feature
    for prefix, feature in NAME_PREFIXES:
        if name.startswith(prefix):
            return feature
    return None


def match_include(path: str) -> str | None:
    path = path.strip().strip('<>"').strip()
    feature = INCLUDE_EXACT.get(path) or INCLUDE_EXACT.get(path.rsplit("/", 1)[-1])
    if feature:
        return feature
    for prefix, feature in INCLUDE_PREFIXES:
        if path.startswith(prefix):
            return feature or None
    return None


def match_asm(code: str) -> list[tuple[str, str]]:
    """`(feature, matched substring)` for every flag an asm code string raises (besides inline_ptx)."""
    # Every `cp.async.bulk` also contains `cp.async`: plain cp.async must occur outside it.
    plain = code.replace("cp.async.bulk", "")
    out = []
    for needles, feature in ASM_PATTERNS:
        view = plain if feature == "cp_async" else code
        for needle in needles:
            if needle in view:
                out.append((feature, needle))
                break
    return out


def name_prefilter() -> str:
    """A regex (for a tree-sitter `#match?` predicate on one token) accepting every name that
    `match_name` could flag, so the query engine drops the rest before Python sees them."""
    exact = sorted(set(NAME_EXACT) | set(TYPE_EXACT))
    prefixes = [p for p, _ in NAME_PREFIXES]
    alts = [re.escape(e) + "$" for e in exact] + [re.escape(p) for p in prefixes]
    return "^(?:" + "|".join(alts) + ")"
