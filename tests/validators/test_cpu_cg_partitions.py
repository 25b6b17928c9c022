"""cooperative_groups partitions (binary_partition, labeled_partition, tiled_partition of a
coalesced group) and tiles of more than a warp (block_tile_memory, tiled_partition<64..256>) on
the cpu backend: a self-checking program under every checking build and two schedules, and the
deadlocks a partition's or a large tile's sync must still report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize("schedule", ["reverse", "random:1"])
@pytest.mark.parametrize("variant", ["plain", "asan", "race"])
def test_partitions_and_large_tiles_match_the_host(variant, schedule):
    prog = Program(source=(PROGRAMS / "cg_partitions.cu").read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant, schedule=schedule)
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None and res.outcome.stdout.strip().endswith("PASS"), res.outcome


def _run(source: str):
    return run_program(Program(source=source, filename="main.cu"), get_backend("cpu"))


def test_a_partition_member_waiting_elsewhere_is_a_deadlock():
    """The odd lanes' group syncs; one odd lane waits at the whole tile's sync instead: on a GPU
    both wait forever. The even lanes, another group, are not needed by the odd lanes' sync."""
    res = _run(r"""
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;
__global__ void k(int* o) {
  auto tile = cg::tiled_partition<32>(cg::this_thread_block());
  auto odd = cg::binary_partition(tile, threadIdx.x & 1);
  if ((threadIdx.x & 1) && threadIdx.x != 5) odd.sync();
  tile.sync();
  o[threadIdx.x] = odd.size();
}
int main() {
  int* d;
  cudaMalloc(&d, 32 * sizeof(int));
  k<<<1, 32>>>(d);
  cudaDeviceSynchronize();
  printf("done\n");
}
""")
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert res.reason.startswith("deadlock"), res.reason
    assert "wait at __syncwarp" in res.reason, res.reason


def test_a_large_tile_member_that_never_syncs_is_a_deadlock():
    res = _run(r"""
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;
__global__ void k(int* o) {
  __shared__ cg::block_tile_memory<128> scratch;
  auto t = cg::tiled_partition<64>(cg::this_thread_block(scratch));
  if (threadIdx.x >= 32 && threadIdx.x < 64) return;  // the second warp of tile 0 leaves
  t.sync();
  o[threadIdx.x] = t.thread_rank();
}
int main() {
  int* d;
  cudaMalloc(&d, 128 * sizeof(int));
  k<<<1, 128>>>(d);
  cudaDeviceSynchronize();
  printf("done\n");
}
""")
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert res.reason.startswith("deadlock"), res.reason
    assert "thread_block_tile<64>::sync() (first at main.cu:9" in res.reason, res.reason


def test_block_tile_memory_smaller_than_the_block_is_reported():
    res = _run(r"""
#include <cooperative_groups.h>
#include <cstdio>
namespace cg = cooperative_groups;
__global__ void k(int* o) {
  __shared__ cg::block_tile_memory<64> scratch;
  auto t = cg::tiled_partition<64>(cg::this_thread_block(scratch));
  o[threadIdx.x] = t.thread_rank();
}
int main() {
  int* d;
  cudaMalloc(&d, 128 * sizeof(int));
  k<<<1, 128>>>(d);
  cudaDeviceSynchronize();
  printf("done\n");
}
""")
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert res.outcome is not None
    assert (
        "this_thread_block(block_tile_memory<64>&) at main.cu:7 in a block of 128 threads"
        in res.outcome.stderr
    )
