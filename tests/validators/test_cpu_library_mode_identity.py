"""Programs built in library mode (they include Thrust or libcu++, whose headers must see a host
compiler) still see nvcc's identity macros in their own code. cuda-samples' simpleAWBarrier
includes `<cuda/barrier>` and puts its whole kernel body under `#if __CUDA_ARCH__ >= 700`: with
`__CUDA_ARCH__` undefined the body was compiled out, the kernel wrote nothing, and a correct
program failed its own check (a silent wrong verdict). Real builds on the cpu backend through
the CLI, in subprocesses."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validators.cpu.rewrite import program_identity_macros

REPO = Path(__file__).resolve().parents[2]
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

# Each kernel writes only where nvcc's device pass compiles its body; each check is on the host.
LIBCUXX = r"""#include <cuda/barrier>
#include <cstdio>
#ifndef __CUDACC__
#error "nvcc defines __CUDACC__ in both passes"
#endif
__host__ __device__ int where() {
#ifdef __CUDA_ARCH__
  return 7;   // device pass
#else
  return -1;  // host pass
#endif
}
__global__ void fill(int *a) {
#if __CUDA_ARCH__ >= 700
  a[threadIdx.x] = where();
#endif
}
int main() {
  int *d, h[32] = {0};
  cudaMalloc(&d, sizeof(h));
  cudaMemset(d, 0, sizeof(h));
  fill<<<1, 32>>>(d);
  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  bool ok = true;
  for (int i = 0; i < 32; ++i) ok = ok && h[i] == 7;
  // A literal naming the macro is the program's text, printed as written.
  printf("%s __CUDA_ARCH__\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
"""

HEADER = r"""#pragma once
__device__ inline float scaled(float x) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 600
  return 2.0f * x;
#else
  return 0.0f;
#endif
}
"""

THRUST_MAIN = r"""#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <cstdio>
#include "scale.cuh"
__global__ void twice(float *v, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) v[i] = scaled(v[i]);
}
int main() {
  const int n = 1000;
  thrust::device_vector<float> v(n, 1.5f);
  twice<<<(n + 255) / 256, 256>>>(thrust::raw_pointer_cast(v.data()), n);
  cudaDeviceSynchronize();
  float sum = thrust::reduce(v.begin(), v.end());
  printf("%s %.1f\n", sum == 3000.0f ? "PASS" : "FAIL", sum);
  return sum == 3000.0f ? 0 : 1;
}
"""


def report(*args: str) -> dict:
    path = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    r = subprocess.run([sys.executable, "-m", "validators", "run", "--backend", "cpu", "--json", *args],
                       capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": path})
    assert r.stdout, r.stderr[-2000:]
    return json.loads(r.stdout)


def test_only_code_is_renamed_never_comments_or_literals():
    text = ('#if __CUDA_ARCH__ >= 700 // __CUDA_ARCH__\n'
            'puts("__NVCC__"); int x = __CUDACC__ + __CUDA_ARCH_LIST__ + MY__CUDA_ARCH__;\n')
    got = program_identity_macros(text)
    assert got == ('#if __CUDASHIM_PROGRAM_CUDA_ARCH__ >= 700 // __CUDA_ARCH__\n'
                   'puts("__NVCC__"); int x = __CUDASHIM_PROGRAM_CUDACC__ + __CUDA_ARCH_LIST__ + MY__CUDA_ARCH__;\n')
    assert program_identity_macros("int main() { return 0; }\n") == "int main() { return 0; }\n"


@needs_gxx
def test_a_libcuxx_program_compiles_its_arch_guarded_kernel_body(tmp_path):
    src = tmp_path / "main.cu"
    src.write_text(LIBCUXX)
    tmp_path.chmod(0o755)  # the sandbox may build as another uid
    got = report(str(src))
    assert got["status"] == "passed", (got["status"], got["reason"], got.get("stdout"), got.get("stderr"))
    assert got["stdout"] == "PASS __CUDA_ARCH__\n"


@needs_gxx
def test_a_thrust_project_sees_the_device_pass_in_its_headers(tmp_path):
    (tmp_path / "scale.cuh").write_text(HEADER)
    (tmp_path / "main.cu").write_text(THRUST_MAIN)
    for p in (tmp_path, *tmp_path.iterdir()):
        p.chmod(0o755 if p.is_dir() else 0o644)
    got = report("--dir", str(tmp_path), "--nvcc", "nvcc -O2 main.cu")
    assert got["status"] == "passed", (got["status"], got["reason"], got.get("stdout"), got.get("stderr"))
    assert got["stdout"].startswith("PASS 3000.0"), got["stdout"]
