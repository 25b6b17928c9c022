"""CUDA graphs beyond a plain stream capture, as NVIDIA's cuda-samples use them (simpleCudaGraphs,
jacobiCudaGraphs, graphMemoryNodes, graphMemoryFootprint, graphConditionalNodes): copies described
by cudaMemcpy3DParms, node queries and parameters, clones, child graphs, instances changed in place
and updated (cudaGraphExecUpdate), memory allocation and free nodes, conditional nodes. The shim
refused these programs (`needs_gpu`); `cpu_programs/cuda_graphs_nodes.cu` checks each feature
against the host's own computation and prints PASS under every checking build. Wrong uses get
CUDA's answer or a clear report."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_graph_nodes_program_passes(variant):
    prog = Program(source=(PROGRAMS / "cuda_graphs_nodes.cu").read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant, schedule="reverse")
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None and res.outcome.stdout.strip().endswith("PASS"), res.outcome.stdout


def test_exec_update_refuses_a_changed_graph_with_the_reason():
    """cudaGraphExecUpdate (CUDA 12's form and the C++ form of CUDA 11's) with a graph of another
    shape: cudaErrorGraphExecUpdateFailure, the reason in the result (a node more: topology
    changed; a fill where a kernel was: node type changed, naming that node), and the instance
    keeps running what it ran."""
    source = r"""
#include <cstdio>
__global__ void put(int* p, int v) { *p = v; }
int main() {
  int* d; cudaMalloc(&d, sizeof(int));
  int one = 1, two = 2;
  void* a1[] = {&d, &one};
  void* a2[] = {&d, &two};
  cudaKernelNodeParams k = {};
  k.func = (void*)put; k.gridDim = dim3(1); k.blockDim = dim3(1); k.kernelParams = a1;
  cudaGraph_t g; cudaGraphCreate(&g, 0);
  cudaGraphNode_t n1, n2;
  cudaGraphAddKernelNode(&n1, g, nullptr, 0, &k);
  cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0);
  // A kernel more.
  cudaGraph_t more; cudaGraphCreate(&more, 0);
  cudaGraphNode_t m1, m2;
  cudaGraphAddKernelNode(&m1, more, nullptr, 0, &k);
  k.kernelParams = a2;
  cudaGraphAddKernelNode(&m2, more, &m1, 1, &k);
  cudaGraphExecUpdateResultInfo info = {};
  cudaError_t r = cudaGraphExecUpdate(e, more, &info);
  printf("more: %s %d\n", cudaGetErrorName(r), (int)info.result);
  cudaGetLastError();
  // A fill where the kernel was.
  cudaGraph_t other; cudaGraphCreate(&other, 0);
  cudaMemsetParams m = {}; m.dst = d; m.value = 9; m.elementSize = 4; m.width = 1; m.height = 1;
  cudaGraphAddMemsetNode(&n2, other, nullptr, 0, &m);
  cudaGraphExecUpdateResult result; cudaGraphNode_t bad = nullptr;
  r = cudaGraphExecUpdate(e, other, &bad, &result);
  printf("type: %s %d %d\n", cudaGetErrorName(r), (int)result, bad == n2);
  cudaGetLastError();
  // The same shape: taken.
  cudaGraph_t same; cudaGraphCreate(&same, 0);
  cudaGraphNode_t s1;
  cudaGraphAddKernelNode(&s1, same, nullptr, 0, &k);
  r = cudaGraphExecUpdate(e, same, &bad, &result);
  cudaGraphLaunch(e, 0);
  int h = 0; cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("same: %s %d %d\n", cudaGetErrorName(r), (int)result, h);
  return 0;
}
"""
    res = run_program(Program(source=source, filename="main.cu"), get_backend("cpu"))
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None
    assert res.outcome.stdout.splitlines() == [
        "more: cudaErrorGraphExecUpdateFailure 2",  # cudaGraphExecUpdateErrorTopologyChanged
        "type: cudaErrorGraphExecUpdateFailure 3 1",  # cudaGraphExecUpdateErrorNodeTypeChanged, the fill
        "same: cudaSuccess 0 2",
    ]


def test_graph_memory_used_after_its_free_node_is_a_use_after_free():
    """A graph allocation is device memory of the emulator's allocator: after its free node ran,
    a kernel that still uses it is reported as ASan reports a use after free, naming the line."""
    source = r"""
#include <cstdio>
__global__ void fill(float* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = 1.0f; }
int main() {
  const int n = 256;
  cudaMemAllocNodeParams ap = {};
  ap.bytesize = n * sizeof(float);
  ap.poolProps.allocType = cudaMemAllocationTypePinned;
  ap.poolProps.location.type = cudaMemLocationTypeDevice;
  cudaGraph_t g; cudaGraphCreate(&g, 0);
  cudaGraphNode_t a, f;
  cudaGraphAddMemAllocNode(&a, g, nullptr, 0, &ap);
  float* p = (float*)ap.dptr;
  cudaGraphAddMemFreeNode(&f, g, &a, 1, p);
  cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0);
  cudaGraphLaunch(e, 0);
  fill<<<1, n>>>(p, n);  // freed by the graph
  cudaDeviceSynchronize();
  printf("%s\n", cudaGetErrorName(cudaGetLastError()));
  return 0;
}
"""
    res = run_program(Program(source=source, filename="main.cu"), get_backend("cpu"), variant="asan")
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert "use after free" in res.reason and "main.cu:3 in fill" in res.reason, res.reason


def test_a_conditional_value_set_through_no_handle_is_reported():
    """cudaGraphSetConditional with a value that is no handle of a live graph stops the run with a
    message that says so (on a GPU it writes wherever the value points)."""
    source = r"""
#include <cstdio>
__global__ void set(cudaGraphConditionalHandle h) { cudaGraphSetConditional(h, 1); }
int main() {
  set<<<1, 1>>>(12345);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""
    res = run_program(Program(source=source, filename="main.cu"), get_backend("cpu"))
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert "is not a conditional handle of a live graph" in res.reason, res.reason
