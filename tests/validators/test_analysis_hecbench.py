"""Real programs (HeCBench, ../shared/data/hecbench): every .cu file analyses and inspects without
error, and for 14 of them the kernels, launch sites and span texts are exactly what a reader of
the source finds (values written by hand after reading each file; lines are 1-based)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from analysis_helpers import check_invariants

from validators.analysis import analyze
from validators.cli import main as cli_main

DATA = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "hecbench"
FILES = sorted(DATA.glob("*/*.cu")) if DATA.is_dir() else []

pytestmark = pytest.mark.skipif(not FILES, reason=f"no HeCBench sources at {DATA}")

EXPECTED: dict[str, dict] = {
    "fhd-cuda": {
        # `dim3 grid (nblks);` is C++'s most vexing parse; the launch's arguments span 5 lines
        "kernels": [
            (
                "cmpfhd",
                15,
                [
                    ("rmu", "const float*__restrict__"),
                    ("imu", "const float*__restrict__"),
                    ("rfhd", "float*__restrict__"),
                    ("ifhd", "float*__restrict__"),
                    ("x", "const float*__restrict__"),
                    ("y", "const float*__restrict__"),
                    ("z", "const float*__restrict__"),
                    ("samples", "const int"),
                    ("voxels", "const int"),
                ],
            ),
        ],
        "device_functions": [],
        "launches": [
            (
                132,
                "cmpfhd",
                ["grid", "block"],
                [
                    "d_rmu + i*CHUNK_S",
                    "d_imu + i*CHUNK_S",
                    "d_rfhd",
                    "d_ifhd",
                    "d_x",
                    "d_y",
                    "d_z",
                    "samples",
                    "c",
                ],
                "main",
            ),
        ],
        "bodies": [("cmpfhd", 25, 40)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("launch_config", "const int ntpb = 256;"),
            ("launch_config", "const int nblks = (samples + ntpb - 1) / ntpb;"),
            ("launch_config", "dim3 grid (nblks);"),
            ("launch_config", "dim3 block (ntpb);"),
            ("launch_config", "<<<grid, block>>>"),
        ],
        "features": [],
    },
    "reverse-cuda": {
        "kernels": [
            ("reverse", 8, [("d", "int *"), ("len", "const int")]),
        ],
        "device_functions": [],
        "launches": [
            (62, "reverse", ["1", "len"], ["d_test", "len"], "main"),
        ],
        "bodies": [("reverse", 9, 15)],
        "spans": [
            ("shared_memory", "__shared__ int s[256];"),
            ("thread_index", "threadIdx.x"),
            ("sync", "__syncthreads()"),
            ("launch_config", "const int len = 256;"),
            ("launch_config", "<<<1, len>>>"),
        ],
        "features": [],
    },
    "matrix-rotate-cuda": {
        "kernels": [
            ("rotate_matrix_parallel", 7, [("matrix", "float *"), ("n", "const int")]),
        ],
        "device_functions": [],
        "launches": [
            (
                81,
                "rotate_matrix_parallel",
                ["(n/2+255)/256", "256"],
                ["d_parallel_res", "n"],
                "main",
            ),
        ],
        "bodies": [("rotate_matrix_parallel", 7, 29)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("launch_config", "<<<(n/2+255)/256, 256>>>"),
        ],
        "features": [],
    },
    "michalewicz-cuda": {
        "kernels": [
            (
                "eval",
                38,
                [
                    ("values", "const float *"),
                    ("minima", "float *"),
                    ("nVectors", "const size_t"),
                    ("dim", "const int"),
                ],
            ),
        ],
        "device_functions": [("atomicMin", 8), ("michalewicz", 26)],
        "launches": [
            (106, "eval", ["grids", "blocks"], ["d_values", "d_minValue", "n", "dim"], "main"),
        ],
        "bodies": [("atomicMin", 10, 24), ("michalewicz", 27, 36), ("eval", 40, 45)],
        "spans": [
            ("atomic", "__nv_atomic_load_n(ptr, __NV_ATOMIC_RELAXED)"),
            ("atomic", "atomicCAS(ptr, old, __float_as_uint(value))"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("atomic", "atomicMin(minima, michalewicz(values + n * dim, dim))"),
            ("launch_config", "dim3 grids ((n + 255) / 256);"),
            ("launch_config", "dim3 blocks (256);"),
            ("launch_config", "<<<grids, blocks>>>"),
        ],
        "features": [],
    },
    "f16atomic-cuda": {
        "kernels": [
            ("f16AtomicOnGlobalMem", 23, [("result", "__half*"), ("n", "int")]),
            ("f16AtomicOnGlobalMem", 33, [("result", "__nv_bfloat16*"), ("n", "int")]),
        ],
        "device_functions": [],
        "launches": [
            (58, "f16AtomicOnGlobalMem", ["grid", "block"], ["d_result", "nelems/2"], "atomicCost"),
            (69, "f16AtomicOnGlobalMem", ["grid", "block"], ["d_result", "nelems/2"], "atomicCost"),
        ],
        "bodies": [("f16AtomicOnGlobalMem", 25, 31), ("f16AtomicOnGlobalMem", 35, 41)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("atomic", "atomicAdd(&result_v[tid % BLOCK_SIZE], val)"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("atomic", "atomicAdd(&result_v[tid % BLOCK_SIZE], val)"),
            ("launch_config", "dim3 block (BLOCK_SIZE);"),
            ("launch_config", "dim3 grid ((nelems / 2  + BLOCK_SIZE - 1) / BLOCK_SIZE);"),
            ("launch_config", "<<<grid, block>>>"),
            ("launch_config", "<<<grid, block>>>"),
        ],
        "features": ["bfloat16", "half"],
    },
    "atomicCost-cuda": {
        "kernels": [
            ("woAtomicOnGlobalMem", 18, [("result", "T*"), ("size", "int")]),
            ("wiAtomicOnGlobalMem", 28, [("result", "T*"), ("size", "int")]),
        ],
        "device_functions": [],
        "launches": [
            (
                65,
                "wiAtomicOnGlobalMem<T>",
                ["grid", "block"],
                ["d_result_wi", "size"],
                "atomicCost",
            ),
            (
                77,
                "woAtomicOnGlobalMem<T>",
                ["grid", "block"],
                ["d_result_wo", "size"],
                "atomicCost",
            ),
        ],
        "bodies": [("woAtomicOnGlobalMem", 20, 25), ("wiAtomicOnGlobalMem", 30, 35)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("atomic", "atomicAdd(&result[tid], i % 2)"),
            ("launch_config", "int num_threads = length / size;"),
            ("launch_config", "dim3 block (BLOCK_SIZE);"),
            ("launch_config", "dim3 grid (num_threads / BLOCK_SIZE);"),
            ("launch_config", "<<<grid, block>>>"),
            ("launch_config", "<<<grid, block>>>"),
        ],
        "features": [],
    },
    "permute-cuda": {
        "kernels": [
            (
                "permute_kernel",
                23,
                [
                    ("Q", "float* __restrict__"),
                    ("K", "float* __restrict__"),
                    ("V", "float* __restrict__"),
                    ("inp", "const float*"),
                    ("B", "int"),
                    ("T", "int"),
                    ("NH", "int"),
                    ("d", "int"),
                ],
            ),
        ],
        "device_functions": [],
        "launches": [
            (
                71,
                "permute_kernel",
                ["num_blocks", "block_size"],
                ["Q", "K", "V", "inp", "B", "T", "NH", "HS"],
                "permute",
            ),
        ],
        "bodies": [("permute_kernel", 28, 55)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("launch_config", "int total_threads = B * T * C;"),
            ("launch_config", "int num_blocks = ceil_div(total_threads, block_size);"),
            ("launch_config", "<<<num_blocks, block_size>>>"),
        ],
        "features": [],
    },
    "threadfence-cuda": {
        "kernels": [
            (
                "sum",
                7,
                [
                    ("array", "const float*__restrict__"),
                    ("N", "const int"),
                    ("count", "unsigned int *__restrict__"),
                    ("result", "volatile float*__restrict__"),
                ],
            ),
        ],
        "device_functions": [],
        "launches": [
            (118, "sum", ["grids", "blocks"], ["d_array", "N", "d_count", "d_result"], "main"),
        ],
        "bodies": [("sum", 12, 80)],
        "spans": [
            ("shared_memory", "__shared__ bool isLastBlockDone;"),
            ("shared_memory", "__shared__ float partialSum;"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "gridDim.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("sync", "__syncthreads()"),
            ("atomic", "atomicAdd(&partialSum, array[gid])"),
            ("sync", "__syncthreads()"),
            ("sync", "__threadfence()"),
            ("atomic", "atomicAdd(count, 1)"),
            ("sync", "__syncthreads()"),
            ("sync", "__syncthreads()"),
            ("atomic", "atomicAdd(&partialSum, result[i])"),
            ("sync", "__syncthreads()"),
            ("launch_config", "const int blocks = 256;"),
            ("launch_config", "const int grids = (N + blocks - 1) / blocks;"),
            ("launch_config", "<<< grids, blocks >>>"),
        ],
        "features": [],
    },
    "rodrigues-cuda": {
        "kernels": [
            (
                "rotate",
                7,
                [
                    ("n", "const int"),
                    ("angle", "const float"),
                    ("w", "const float3"),
                    ("d", "float3 *"),
                ],
            ),
            (
                "rotate2",
                38,
                [
                    ("n", "const int"),
                    ("angle", "const float"),
                    ("w", "const float3"),
                    ("d", "float4 *"),
                ],
            ),
        ],
        "device_functions": [],
        "launches": [
            (113, "rotate", ["grids", "blocks"], ["n", "angle", "w", "d"], "main"),
            (125, "rotate2", ["grids", "blocks"], ["n", "angle", "w", "d2"], "main"),
        ],
        "bodies": [("rotate", 9, 36), ("rotate2", 40, 67)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("launch_config", "dim3 grids ((n + 255) / 256);"),
            ("launch_config", "dim3 blocks (256);"),
            ("launch_config", "<<<grids, blocks>>>"),
            ("launch_config", "<<<grids, blocks>>>"),
        ],
        "features": [],
    },
    "langevin-cuda": {
        "kernels": [
            ("k0", 7, [("a", "const float *__restrict__"), ("o", "float *__restrict__")]),
            ("k1", 14, [("a", "const float *__restrict__"), ("o", "float *__restrict__")]),
            ("k2", 49, [("a", "const float *__restrict__"), ("o", "float *__restrict__")]),
        ],
        "device_functions": [],
        "launches": [
            (100, "k0", ["n/256", "256"], ["d_a", "d_o0"], "main"),
            (109, "k1", ["n/256", "256"], ["d_a", "d_o1"], "main"),
            (118, "k2", ["n/256", "256"], ["d_a", "d_o2"], "main"),
        ],
        "bodies": [("k0", 8, 12), ("k1", 15, 19), ("k2", 50, 64)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("launch_config", "const int n = atoi(argv[1]);"),
            ("launch_config", "<<<n/256, 256>>>"),
            ("launch_config", "<<<n/256, 256>>>"),
            ("launch_config", "<<<n/256, 256>>>"),
        ],
        "features": [],
    },
    "clock-cuda": {
        "kernels": [
            (
                "timedReduction",
                31,
                [("input", "const float *"), ("output", "float *"), ("timer", "clock_t *")],
            ),
        ],
        "device_functions": [],
        "launches": [
            (
                123,
                "timedReduction",
                ["NUM_BLOCKS", "NUM_THREADS", "sizeof(float) * 2 *NUM_THREADS"],
                ["dinput", "doutput", "dtimer"],
                "main",
            ),
        ],
        "bodies": [("timedReduction", 32, 68)],
        "spans": [
            ("shared_memory", "extern __shared__ float shared[];"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "blockDim.x"),
            ("sync", "__syncthreads()"),
            ("sync", "__syncthreads()"),
            ("thread_index", "gridDim.x"),
            ("launch_config", "<<<NUM_BLOCKS, NUM_THREADS, sizeof(float) * 2 *NUM_THREADS>>>"),
        ],
        "features": [],
    },
    "concurrentKernels-cuda": {
        "kernels": [
            ("clock_block", 48, [("d_o", "long *"), ("clock_count", "long")]),
            ("sum", 56, [("d_clocks", "long *"), ("N", "int")]),
        ],
        "device_functions": [],
        "launches": [
            (132, "clock_block", ["1", "1", "0", "streams[i]"], ["&d_a[i]", "time_clocks"], "main"),
            (143, "sum", ["1", "32", "0", "streams[nstreams - 1]"], ["d_a", "nkernels"], "main"),
        ],
        "bodies": [("clock_block", 48, 53), ("sum", 56, 77)],
        "spans": [
            ("shared_memory", "__shared__ long s_clocks[32];"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("sync", "__syncthreads()"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "threadIdx.x"),
            ("sync", "__syncthreads()"),
            ("launch_config", "<<<1, 1, 0, streams[i]>>>"),
            ("launch_config", "<<<1, 32, 0, streams[nstreams - 1]>>>"),
        ],
        "features": [],
    },
    "dispatch-cuda": {
        "kernels": [
            ("EmptyKernel", 18, []),
        ],
        "device_functions": [],
        "launches": [
            (56, "EmptyKernel", ["dim3(NUM_GROUPS)", "dim3(GROUP_SIZE)"], [], "main"),
            (67, "EmptyKernel", ["dim3(NUM_GROUPS)", "dim3(GROUP_SIZE)"], [], "main"),
            (80, "EmptyKernel", ["dim3(NUM_GROUPS)", "dim3(GROUP_SIZE)"], [], "main"),
        ],
        "bodies": [("EmptyKernel", 19, 19)],
        "spans": [
            ("launch_config", "<<<dim3(NUM_GROUPS), dim3(GROUP_SIZE)>>>"),
            ("launch_config", "<<<dim3(NUM_GROUPS), dim3(GROUP_SIZE)>>>"),
            ("launch_config", "<<<dim3(NUM_GROUPS), dim3(GROUP_SIZE)>>>"),
        ],
        "features": [],
    },
    "softmax-cuda": {
        "kernels": [
            (
                "softMax",
                29,
                [
                    ("numSlice", "const int"),
                    ("sliceSize", "const int"),
                    ("src", "const float*"),
                    ("dest", "float*"),
                ],
            ),
            (
                "softMax2",
                48,
                [
                    ("numSlice", "const int"),
                    ("sliceSize", "const int"),
                    ("src", "const float*"),
                    ("dest", "float*"),
                ],
            ),
        ],
        "device_functions": [],
        "launches": [
            (
                109,
                "softMax2",
                ["grids", "blocks"],
                ["numSlice", "sliceSize", "d_input", "d_output"],
                "main",
            ),
            (
                125,
                "softMax",
                ["grids", "blocks"],
                ["numSlice", "sliceSize", "d_input", "d_output"],
                "main",
            ),
        ],
        "bodies": [("softMax", 32, 46), ("softMax2", 51, 70)],
        "spans": [
            ("thread_index", "blockIdx.x"),
            ("thread_index", "blockDim.x"),
            ("thread_index", "threadIdx.x"),
            ("thread_index", "blockIdx.x"),
            ("thread_index", "warp.meta_group_rank()"),
            ("thread_index", "warp.thread_rank()"),
            ("warp_primitive", "cg::reduce(warp, max_, cg::greater<float>{})"),
            ("thread_index", "warp.thread_rank()"),
            ("warp_primitive", "cg::reduce(warp, sum, cg::plus<float>{})"),
            ("thread_index", "warp.thread_rank()"),
            ("launch_config", "dim3 grids ((numSlice+BLOCK_SIZE/32-1)/(BLOCK_SIZE/32));"),
            ("launch_config", "dim3 blocks (BLOCK_SIZE);"),
            ("launch_config", "<<<grids, blocks>>>"),
            ("launch_config", "dim3 grids ((numSlice+BLOCK_SIZE-1)/BLOCK_SIZE);"),
            ("launch_config", "dim3 blocks (BLOCK_SIZE);"),
            ("launch_config", "<<<grids, blocks>>>"),
        ],
        "features": [],
    },
}


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_exact_kernels_launches_and_spans(name: str) -> None:
    want = EXPECTED[name]
    a = analyze((DATA / name / "main.cu").read_bytes())
    check_invariants(a)
    assert a.errors == []
    assert [(k.name, k.line, [(p.name, p.type) for p in k.params]) for k in a.kernels] == want[
        "kernels"
    ]
    assert [(f.name, f.line) for f in a.device_functions] == want["device_functions"]
    assert [(x.line, x.callee, x.config, x.args, x.function) for x in a.launches] == want[
        "launches"
    ]
    bodies = a.spans_of("kernel_body")
    assert [(s.label, _line(a.text, s.start), _line(a.text, s.end)) for s in bodies] == want[
        "bodies"
    ]
    assert [(s.kind, a.text[s.start : s.end]) for s in a.spans if s.kind != "kernel_body"] == want[
        "spans"
    ]
    assert a.features == want["features"]


def test_a_whole_kernel_body_verbatim() -> None:
    a = analyze((DATA / "reverse-cuda" / "main.cu").read_bytes())
    assert a.span_texts("kernel_body") == [
        "{\n  __shared__ int s[256];\n  int t = threadIdx.x;\n  s[t] = d[t];\n"
        "  __syncthreads();\n  d[t] = s[len-t-1];\n}"
    ]


def test_library_only_programs_are_flagged() -> None:
    flags = {p.parent.name: analyze(p.read_bytes()).features for p in FILES}
    assert flags["scan3-cuda"] == ["cub", "thrust"]
    assert flags["nosync-cuda"] == ["thrust"]
    assert flags["norm2-cuda"] == ["cublas"]
    assert flags["spnnz-cuda"] == ["cusparse"]
    assert flags["blas-dot-cuda"] == ["bfloat16", "cublas", "half"]
    assert flags["addBiasQKV-cuda"] == ["bfloat16", "fp8", "half"]


def test_macro_calls_without_semicolons_are_reported_not_fatal() -> None:
    # spnnz writes `CHECK_CUSPARSE( call )` with no `;`: the parser reports each, analysis goes on.
    a = analyze((DATA / "spnnz-cuda" / "main.cu").read_bytes())
    check_invariants(a)
    assert a.errors[:2] == ["line 80: missing `;`", "line 81: missing `;`"]
    assert a.kernels == [] and a.launches == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.parent.name)
def test_inspect_finishes_on_every_file(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["inspect", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["file"] == str(path)
    a = analyze(path.read_bytes())
    check_invariants(a)
    assert [k["name"] for k in out["kernels"]] == [k.name for k in a.kernels]
    assert len(out["launches"]) == len(a.launches)
    assert cli_main(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert str(path) in text and "Launches" in text
