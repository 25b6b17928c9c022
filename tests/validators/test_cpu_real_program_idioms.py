"""Idioms of real programs (HeCBench, unseen before a sweep of its CUDA folders) that nvcc builds
and a GPU runs, and the cpu backend refused: each program prints PASS on the cpu backend under
every checking build."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.mark.parametrize(
    "name",
    [
        # A byte __shared__ array carved into float4 (nbnxm): a 1-aligned static made the vector
        # store fault.
        "shared_bytes_as_float4.cu",
        # cub::Traits<T>::UnsignedBits and the radix twiddles (topk).
        "cub_traits_twiddle.cu",
        # std::cout without <iostream> next to Thrust, whose headers include it under nvcc (mtf).
        "thrust_cout_no_iostream.cu",
        # cuComplex reached through <cublas_v2.h> alone, as NVIDIA's header includes it (gels).
        "cublas_cucomplex.cu",
        # Mutually recursive __forceinline__ device functions (logic-rewrite): nvcc gives up
        # inlining a recursion, g++'s always_inline failed the build.
        "forceinline_recursive.cu",
        # cudaMalloc(&p) with p a `const float*` (opticalFlow): CUDA's template casts through
        # void*, the shim's reinterpret_cast refused it.
        "cudamalloc_const_pointer.cu",
        # The program's own global lerp (CUDA samples' helper_math.h: hexciton, mdh, perlin,
        # recursiveGaussian): libstdc++'s C++20 <math.h> put std::lerp there first.
        "global_lerp.cu",
        # thrust::sequence and thrust::minmax_element after <thrust/sort.h> alone (tsne,
        # logic-rewrite): nvcc's CUDA system includes them there.
        "thrust_transitive_includes.cu",
        # The include guards of CUDA's headers, which cuda-samples' helper_cuda.h tests, and
        # CUDART_CB on a stream callback.
        "header_include_guards.cu",
        # Delay kernels spinning clockRate * ms cycles of device clock() (cuda-samples'
        # simpleHyperQ): it was libc's clock(), CPU microseconds, so they spun 1000x longer.
        "device_clock.cu",
        # Device shifts by the width or more (Rodinia's huffman: `dw << (32 - bit)`, bit == 0):
        # PTX clamps the amount and gives 0, x86 masked it and gave dw back; the race build
        # (lockstep copies) and constant expressions, bit-fields, class shifts around them. And
        # float-to-integer casts of NaN or out-of-range values: a GPU saturates (NaN to 0), x86
        # gave INT_MIN, and (unsigned)-1.0f wrapped to 0xFFFFFFFF.
        "device_semantics.cu",
        # cub::BlockAdjacentDifference (HeCBench's adjacent): was needs_gpu, not in the subset.
        "cub_adjacent_difference.cu",
    ],
)
@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_real_program_idiom_runs(name, variant):
    prog = Program(source=(PROGRAMS / name).read_text(), filename="main.cu")
    res = run_program(prog, get_backend("cpu"), variant=variant, schedule="reverse")
    assert res.status == Status.PASSED, res.reason
    assert res.outcome is not None and res.outcome.stdout.strip().endswith("PASS")


def test_a_null_pointer_fault_says_which_allocation_failed():
    """GPU-sized inputs: an unchecked allocation that failed leaves a null pointer. The report
    says so (it was a bare 'exit code 139' before the first CUDA call), and the program's
    buffered output survives the crash."""
    host = Program(source=r"""
#include <cstdio>
#include <cstdlib>
int main() {
  printf("allocating\n");
  float* volatile h = (float*)malloc((size_t)1 << 36);  // past the run's address-space limit
  h[0] = 1.f;
  printf("%f %p\n", h[0], (void*)h);
}
""")
    res = run_program(host, get_backend("cpu"))
    assert res.status == Status.RUNTIME_ERROR
    assert "in host code; a null pointer: a malloc or new beyond the run's" in res.reason, res.reason
    assert res.outcome is not None and "allocating" in res.outcome.stdout

    device = Program(source=r"""
#include <cstdio>
__global__ void k(float* x) { x[threadIdx.x] = 1.f; }
int main() {
  float* d = nullptr;
  if (cudaMalloc(&d, (size_t)1 << 40) != cudaSuccess) printf("out of memory\n");
  k<<<1, 32>>>(d);
  cudaDeviceSynchronize();
}
""")
    res = run_program(device, get_backend("cpu"))
    assert res.status == Status.RUNTIME_ERROR
    assert "a device allocation of 1099511627776 bytes failed earlier" in res.reason, res.reason
    assert res.outcome is not None and "out of memory" in res.outcome.stdout
