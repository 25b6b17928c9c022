"""A copy or memset opens only its own device pages, not the whole device arena.

Device allocations are closed to host code (validators/cpu/README.md, "Device memory is closed to
host code"). A launch or library call opens all of them; a copy or memset opens only the pages of
its device operand(s), so its cost follows its bytes, not the number of live allocations (a
program with thousands of live buffers and many copies used to spend its time in mprotect), and
host code running beside a copy still faults on any other allocation. Checked in the plain and
asan builds: behaviour, no timing."""

from __future__ import annotations

import shutil

import pytest

from schemas import Program, Status
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

# A host thread waits until a large device-to-host copy is under way (its destination changes),
# then reads another device allocation. On a GPU that faults; with a whole-arena window for the
# copy it read the allocation and printed it.
BESIDE_A_COPY = r"""
#include <cstdio>
#include <thread>
#include <vector>
int main() {
  const size_t n = size_t(64) << 20;
  char *src, *other;
  if (cudaMalloc(&src, n) != cudaSuccess || cudaMalloc(&other, 4096) != cudaSuccess) return 2;
  cudaMemset(src, 1, n);
  cudaMemset(other, 7, 4096);
  std::vector<char> host(n, 0);
  volatile char* h = host.data();
  std::thread t([&] {
    while (!h[n / 8] && !h[n / 4] && !h[n / 2] && !h[3 * (n / 4)]) {
    }
    printf("read beside the copy: %d\n", ((volatile char*)other)[100]);
  });
  cudaMemcpy(host.data(), src, n, cudaMemcpyDeviceToHost);
  t.join();
  printf("no fault\n");
  return 0;
}
"""

# Copies, memsets, 2-D copies and symbol copies among thousands of live allocations, some from a
# second host thread while the first launches kernels; every byte checked on the host. Then the
# host touches a device allocation right after a copy into another one: that faults.
MANY = r"""
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>
#define K 3000
__device__ int sym[64];
__global__ void add_one(unsigned char* p, int n) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) p[i]++;
}
static size_t size_of(int i) { return 1 + (size_t)(i * 7919) % 6000; }
static unsigned char pat(int i, size_t j) { return (unsigned char)(i * 31 + j * 7 + 3); }
int main() {
  std::vector<unsigned char*> d(K);
  for (int i = 0; i < K; i++)
    if (cudaMalloc(&d[i], size_of(i)) != cudaSuccess) return 2;
  std::vector<unsigned char> h(8000);
  for (int i = 0; i < K; i++) {
    for (size_t j = 0; j < size_of(i); j++) h[j] = pat(i, j);
    cudaMemcpy(d[i], h.data(), size_of(i), cudaMemcpyHostToDevice);
  }
  // Device-to-device: allocation i gets the first bytes of allocation (i + 1) at offset 1.
  std::vector<unsigned char*> e(K);
  for (int i = 0; i < K; i++) {
    if (cudaMalloc(&e[i], size_of(i) + 1) != cudaSuccess) return 2;
    cudaMemset(e[i], 0x5a, size_of(i) + 1);
    size_t m = std::min(size_of(i), size_of((i + 1) % K));
    cudaMemcpy(e[i] + 1, d[(i + 1) % K], m, cudaMemcpyDeviceToDevice);
  }
  // A second host thread copies while this one launches.
  std::thread t([&] {
    for (int r = 0; r < 20; r++)
      for (int i = r; i < K; i += 20) cudaMemcpy(d[i], e[i] + 1, 1, cudaMemcpyDeviceToDevice);
  });
  unsigned char* k;
  cudaMalloc(&k, 4096);
  cudaMemset(k, 0, 4096);
  for (int r = 0; r < 50; r++) add_one<<<4, 64>>>(k, 4096);
  t.join();
  // 2-D copy and memset, symbol copies.
  unsigned char* p2;
  size_t pitch;
  cudaMallocPitch((void**)&p2, &pitch, 100, 30);
  cudaMemset2D(p2, pitch, 9, 100, 30);
  cudaMemcpy2D(p2 + 3 * pitch, pitch, h.data(), 100, 100, 10, cudaMemcpyHostToDevice);
  int s[64];
  for (int i = 0; i < 64; i++) s[i] = i * i;
  cudaMemcpyToSymbol(sym, s, sizeof s);
  int s2[64] = {0};
  cudaMemcpyFromSymbol(s2, sym, sizeof s2);
  int bad = 0;
  for (int i = 0; i < 64; i++) bad += s2[i] != i * i;
  std::vector<unsigned char> g(8000);
  for (int i = 0; i < K && !bad; i++) {
    size_t m = std::min(size_of(i), size_of((i + 1) % K));
    cudaMemcpy(g.data(), e[i], size_of(i) + 1, cudaMemcpyDeviceToHost);
    bad += g[0] != 0x5a;
    for (size_t j = 0; j < m; j++) bad += g[j + 1] != pat((i + 1) % K, j);
    for (size_t j = m; j < size_of(i); j++) bad += g[j + 1] != 0x5a;
    cudaMemcpy(g.data(), d[i], size_of(i), cudaMemcpyDeviceToHost);
    bad += g[0] != pat((i + 1) % K, 0);
    for (size_t j = 1; j < size_of(i); j++) bad += g[j] != pat(i, j);
  }
  cudaMemcpy(g.data(), k, 4096, cudaMemcpyDeviceToHost);
  for (int j = 0; j < 4096; j++) bad += g[j] != 50;
  std::vector<unsigned char> q(30 * pitch);
  cudaMemcpy(q.data(), p2, 30 * pitch, cudaMemcpyDeviceToHost);
  for (int r = 0; r < 30; r++)
    for (int c = 0; c < 100; c++) bad += q[r * pitch + c] != (r >= 3 && r < 13 ? h[(r - 3) * 100 + c] : 9);
  if (cudaGetLastError() != cudaSuccess) bad++;
  printf(bad ? "copies wrong: %d\n" : "copies ok\n", bad);
  fflush(stdout);
  if (bad) return 1;
  cudaMemcpy(d[10], h.data(), 1, cudaMemcpyHostToDevice);
  printf("read after a copy: %d\n", ((volatile unsigned char*)d[11])[0]);
  return 0;
}
"""


@pytest.fixture(scope="module")
def backend(tmp_path_factory) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path_factory.mktemp("builds")))


def run(backend, tmp_path, source, variant):
    from validators.sandbox import Limits, run_sandboxed

    exe = backend.build(Program(source=source), {}, variant=variant)
    argv, env = backend.command(exe, [])
    out = run_sandboxed(argv, tmp_path, limits=Limits().with_overrides(backend.sandbox_overrides(exe)), env=env)
    return out, backend.classify(exe, out)


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_host_code_beside_a_copy_faults_on_other_allocations(backend, tmp_path, variant):
    out, verdict = run(backend, tmp_path, BESIDE_A_COPY, variant)
    assert verdict.status == Status.RUNTIME_ERROR, (verdict.status, verdict.reason, out.stdout[-2000:])
    assert "host code accessed device memory at 0x" in verdict.reason, verdict.reason
    assert "read beside the copy" not in out.stdout


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_copies_among_many_allocations_are_right_and_leave_the_rest_closed(backend, tmp_path, variant):
    out, verdict = run(backend, tmp_path, MANY, variant)
    assert "copies ok" in out.stdout, (verdict.status, verdict.reason, out.stdout[-2000:])
    assert verdict.status == Status.RUNTIME_ERROR, (verdict.status, verdict.reason)
    assert "host code accessed device memory at 0x" in verdict.reason, verdict.reason
    assert "read after a copy" not in out.stdout
