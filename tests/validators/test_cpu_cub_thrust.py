"""CUB and Thrust's CUDA execution policies on the CPU backend (validators/cpu/include/cub/,
include/thrust/system/cuda/): real programs built and run through `CpuBackend` in the sandbox,
their outputs compared with NumPy here; CUB beyond the shim's subset is `needs_gpu` naming it.

Three programs cover many functions each (a build costs seconds): `cub_thrust_programs/`.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.cpu.diagnostics import gpu_feature_from_errors
from validators.engine import run_program
from validators.sandbox import Limits, run_sandboxed

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = Path(__file__).resolve().parent / "cub_thrust_programs"
HECBENCH = REPO / ".." / "shared" / "data" / "hecbench"
needs_cccl = pytest.mark.skipif(toolchain.cccl_dir() is None, reason="no CCCL (Thrust) headers")


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def run(
    backend: CpuBackend,
    name: str,
    work: Path,
    inputs: dict[str, np.ndarray],
    *,
    variant: str = "plain",
    schedule: str = "forward",
) -> dict[str, np.ndarray]:
    """Build `name` (cached), run it in `work` with `inputs` as data/*.bin; the files it wrote."""
    exe = backend.build(Program(source=(PROGRAMS / name).read_text()), {}, variant=variant)
    assert exe.compile.ok, exe.compile.diagnostics
    data = work / "data"
    shutil.rmtree(data, ignore_errors=True)
    data.mkdir(parents=True)
    for key, arr in inputs.items():
        arr.tofile(data / f"{key}.bin")
    argv, env = backend.command(exe, [], schedule=schedule)
    limits = Limits(cpu_seconds=60, wall_seconds=60).with_overrides(backend.sandbox_overrides(exe))
    out = run_sandboxed(argv, work, limits=limits, env=env)
    verdict = backend.classify(exe, out)
    assert out.exit_code == 0 and verdict.status is None, (verdict, out.stdout, out.stderr)
    return {p.stem: p.read_bytes() for p in data.glob("*.bin") if p.stem not in inputs}


def ints(raw: bytes) -> np.ndarray:
    return np.frombuffer(raw, dtype=np.int32)


def test_device_wide_algorithms_match_numpy(backend, tmp_path):
    n = 5000
    rng = np.random.default_rng(7)
    x = rng.uniform(-1.2, 1.2, n).astype(np.float32)
    k = rng.integers(-50000, 50000, n).astype(np.int32)
    v = rng.integers(0, 100, n).astype(np.int32)
    seg = np.sort(rng.integers(0, 300, n)).astype(np.int32)
    # ASan build: the shim's CUB code itself must stay inside the buffers it is given.
    out = run(
        backend,
        "device_algorithms.cu",
        tmp_path,
        {"x": x, "k": k, "v": v, "seg": seg},
        variant="asan",
    )

    excl = np.concatenate([[0], np.cumsum(v)[:-1]])
    np.testing.assert_array_equal(ints(out["excl_sum"]), excl)
    np.testing.assert_array_equal(ints(out["incl_max"]), np.maximum.accumulate(v))
    np.testing.assert_array_equal(ints(out["excl_scan7"]), excl + 7)
    by_key = np.zeros(n, np.int64)
    for i in range(n):
        by_key[i] = v[i] + (by_key[i - 1] if i and seg[i] == seg[i - 1] else 0)
    np.testing.assert_array_equal(ints(out["incl_sum_by_key"]), by_key)
    np.testing.assert_array_equal(ints(out["reduce_i"]), [v.sum(), v.min(), v.max(), k.max()])
    kv = np.frombuffer(out["argmax_min"], dtype=[("key", "<i4"), ("value", "<f4")])
    assert (kv[0]["key"], kv[1]["key"]) == (np.argmax(x), np.argmin(x))
    assert (kv[0]["value"], kv[1]["value"]) == (x.max(), x.min())

    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(ints(out["sorted_k"]), k[order])
    np.testing.assert_array_equal(ints(out["sorted_v"]), v[order])
    np.testing.assert_array_equal(np.frombuffer(out["sorted_x"], np.float32), np.sort(x))
    # Descending by bits [4, 12) of the radix order (sign bit flipped), stable.
    digit = ((k.view(np.uint32) ^ np.uint32(0x80000000)) >> 4) & 0xFF
    order = np.argsort(-digit.astype(np.int64), kind="stable")
    np.testing.assert_array_equal(ints(out["bits_k"]), k[order])
    np.testing.assert_array_equal(ints(out["bits_v"]), v[order])

    odd = v[v % 2 == 1]
    assert ints(out["select_if_n"])[0] == len(odd)
    np.testing.assert_array_equal(ints(out["select_if"])[: len(odd)], odd)
    positive = x[k > 0]
    assert ints(out["flagged_n"])[0] == len(positive)
    np.testing.assert_array_equal(
        np.frombuffer(out["flagged"], np.float32)[: len(positive)], positive
    )
    uniq, starts, counts = np.unique(seg, return_index=True, return_counts=True)
    assert ints(out["unique_n"])[0] == len(uniq)
    np.testing.assert_array_equal(ints(out["unique"])[: len(uniq)], uniq)
    np.testing.assert_array_equal(ints(out["rle_counts"]), counts)
    np.testing.assert_array_equal(ints(out["seg_sums"]), np.add.reduceat(v, starts))
    inside = x[(x >= -1) & (x < 1)]
    hist = np.histogram(inside, bins=10, range=(-1, 1))[0]
    np.testing.assert_array_equal(ints(out["hist"]), hist)


def test_block_and_warp_collectives_under_both_schedules(backend, tmp_path):
    n, block = 3000, 128
    v = np.random.default_rng(3).integers(-100, 100, n).astype(np.int32)
    blocks = np.zeros(-(-n // block) * block, np.int64)
    blocks[:n] = v
    tiles = blocks.reshape(-1, block)
    warps = blocks.reshape(-1, 32)
    racy = {}
    for schedule in ("forward", "reverse"):
        out = run(backend, "block_warp.cu", tmp_path, {"v": v}, schedule=schedule)
        np.testing.assert_array_equal(ints(out["block_sum"]), tiles.sum(1))
        np.testing.assert_array_equal(ints(out["block_total"]), tiles.sum(1))
        np.testing.assert_array_equal(
            ints(out["block_excl"]), (np.cumsum(tiles, 1) - tiles).reshape(-1)[:n]
        )
        np.testing.assert_array_equal(ints(out["tiled_incl"]), np.cumsum(v))
        np.testing.assert_array_equal(ints(out["warp_sum"]), warps.sum(1))
        np.testing.assert_array_equal(ints(out["warp_incl"]), np.cumsum(warps, 1).reshape(-1)[:n])
        for start in range(0, n, block * 4):
            tile = v[start : start + block * 4]
            order = np.argsort(tile.view(np.uint32) & 0xFFFF, kind="stable")
            np.testing.assert_array_equal(
                ints(out["tile_keys"])[start : start + len(tile)], tile[order]
            )
            np.testing.assert_array_equal(
                ints(out["tile_vals"])[start : start + len(tile)], start + order
            )
        racy[schedule] = ints(out["racy"]).tolist()
    # A TempStorage reused without __syncthreads: right in one order, a race the other way.
    first = int(v[:block].sum())
    assert racy["forward"] == [first, 2 * first]
    assert racy["reverse"] != racy["forward"]


@needs_cccl
def test_thrust_cuda_policies_and_cub_over_thrust_iterators(backend, tmp_path):
    n = 4000
    x = np.random.default_rng(5).uniform(-1, 1, n).astype(np.float32)
    out = run(backend, "thrust_policies.cu", tmp_path, {"x": x})
    scan = np.frombuffer(out["scan2x"], np.float32)
    np.testing.assert_allclose(scan, np.cumsum(2 * x.astype(np.float64)), atol=1e-3)
    np.testing.assert_array_equal(np.frombuffer(out["sorted"], np.float32), np.sort(x))
    assert abs(np.frombuffer(out["total"], np.float32)[0] - x.sum(dtype=np.float64)) < 1e-3
    sums = np.frombuffer(out["sums"], np.int64)
    assert sums.tolist() == [sum(i * i for i in range(n)), sum(range(10, 10 + n))]


def test_cub_beyond_the_subset_is_needs_gpu_naming_it(backend):
    assert backend.unsupported_features(["cub"]) == []
    src = """#include <cub/cub.cuh>
int main() {
  void* t = nullptr; size_t bytes = 0; int *k = nullptr, *o = nullptr, *off = nullptr;
  cub::DeviceSegmentedRadixSort::SortKeys(t, bytes, k, o, 10, 2, off, off + 1);
  return 0;
}
"""
    res = run_program(Program(source=src), backend)
    assert res.status == Status.NEEDS_GPU, res.reason
    assert "cub (cub::DeviceSegmentedRadixSort" in res.reason


@pytest.mark.parametrize(
    "diag, named",
    [
        (
            "main.cu:3:24: error: ‘BlockHistogram’ in namespace ‘cub’ does not name a template type",
            "cub::BlockHistogram",
        ),
        (
            "main.cu:5:3: error: ‘TransformReduce’ is not a member of ‘cub::DeviceReduce’",
            "cub::DeviceReduce::TransformReduce",
        ),
        (
            "main.cu:5:25: error: no matching function for call to "
            "‘cub::DeviceRadixSort::SortKeys(void*&, size_t&, __half*&, __half*&, int)’",
            "cub::DeviceRadixSort::SortKeys",
        ),
        (
            "cudashim_device.cuh:127:19: error: static assertion failed: cub::DeviceRadixSort: "
            "this key type is not supported by the CPU shim",
            "key type",
        ),
        (
            "In file included from /usr/local/cuda/include/cccl/cub/warp/warp_exchange.cuh:48,\n"
            "                 from /usr/local/cuda/include/cccl/cub/block/block_exchange.cuh:44,\n"
            "                 from main.cu:2:\n"
            "/usr/local/cuda/include/cccl/cub/warp/x.cuh:50:77: error: ‘warp_threads’ was not "
            "declared in this scope",
            "cub/block/block_exchange.cuh",
        ),
        (
            "main.cu:2:10: fatal error: cub/block/block_histogram.cuh: No such file or directory",
            "cub",
        ),
    ],
)
def test_cub_compile_errors_name_what_is_missing(diag, named):
    feature = gpu_feature_from_errors(diag) or ""
    assert feature.startswith("cub") and named in feature


def _hecbench_source(folder: Path) -> str:
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import hecbench_cpu  # the benchmark's inlining of local headers (and its stand-ins)
    finally:
        sys.path.pop(0)
    dirs, _notes = hecbench_cpu.include_dirs(folder)
    return hecbench_cpu.inline_local_includes(dirs, (folder / "main.cu").read_text())


@needs_cccl
@pytest.mark.parametrize(
    "name, args", [("scan3-cuda", ["1", "4096"]), ("nosync-cuda", ["4096", "1"])]
)
def test_hecbench_cub_and_thrust_programs_pass(backend, name, args):
    folder = HECBENCH / name
    if not (folder / "main.cu").is_file():
        pytest.skip(f"{folder} is not available")
    res = run_program(Program(source=_hecbench_source(folder)), backend, args)
    stdout = res.outcome.stdout if res.outcome else ""
    assert res.status == Status.PASSED, (res.reason, stdout)
    assert "PASS" in stdout and "FAIL" not in stdout, stdout


@needs_cccl
def test_a_size_macro_the_program_keeps_from_thrust_builds(backend, tmp_path):
    # Built with N on the command line, as every case is: it reaches the program, not Thrust.
    source = (PROGRAMS / "size_macro_guard.cu").read_text()
    exe = backend.build(Program(source=source), {"N": 300})
    assert exe.compile.ok, exe.compile.diagnostics
    keys = np.random.default_rng(3).integers(0, 1 << 30, 300).astype(np.uint32)
    data = tmp_path / "data"
    data.mkdir()
    keys.tofile(data / "keys.bin")
    argv, env = backend.command(exe, [])
    out = run_sandboxed(argv, tmp_path, limits=Limits(cpu_seconds=60, wall_seconds=60), env=env)
    assert out.exit_code == 0, out.stderr
    got = np.fromfile(data / "sorted_keys.bin", dtype=np.uint32)
    assert np.array_equal(got, np.sort(keys))


@needs_cccl
def test_a_program_include_folder_outside_its_own_sees_nvcc_in_a_thrust_build(backend, tmp_path):
    # cuda-samples' Common/helper_math.h defines host `max` and `rsqrtf` under `#ifndef
    # __CUDACC__`; a Thrust program (library mode) read it as a host compiler would, and the
    # definitions clashed with the shim's. Its folder, outside the program's, reads as nvcc's.
    common = tmp_path / "Common"
    common.mkdir()
    (common / "helper_math.h").write_text(
        "#pragma once\n#include <cuda_runtime.h>\n#include \"nested/more.h\"\n"
        "#ifndef __CUDACC__\ninline int max(int a, int b) { return a > b ? a : b; }\n"
        "inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }\n#endif\n")
    (common / "nested").mkdir()
    (common / "nested" / "more.h").write_text("#pragma once\n#ifdef __CUDACC__\n#define SEEN_BY_NVCC 1\n#endif\n")
    source = """#include <cstdio>
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include "helper_math.h"
__global__ void k(int* p) { p[threadIdx.x] = max((int)threadIdx.x, 3) + SEEN_BY_NVCC; }
int main() {
  thrust::device_vector<int> v(8);
  k<<<1, 8>>>(thrust::raw_pointer_cast(v.data()));
  printf("sum %d\\n", (int)thrust::reduce(v.begin(), v.end()));
}
"""
    exe = backend.build(Program(source=source, extra_flags=[f"-I{common}"]), {})
    assert exe.compile.ok, exe.compile.diagnostics
    argv, env = backend.command(exe, [])
    out = run_sandboxed(argv, tmp_path, limits=Limits(cpu_seconds=60, wall_seconds=60), env=env)
    assert out.exit_code == 0 and out.stdout.strip() == "sum 42", (out.stdout, out.stderr)
