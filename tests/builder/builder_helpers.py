"""Small real records for the builder's tests: a task with five cases and a program that
follows the program convention."""

from __future__ import annotations

from schemas import InputCase, Provenance, RawRecord, Reference, Task, TensorSpec, ValueDistribution

SCALE_PROGRAM = r"""#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#ifndef N
#define N 1024
#endif

__global__ void scale_kernel(const float* x, float* y, float a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i];
}

int main() {
    size_t bytes = (size_t)N * sizeof(float);
    float* h = (float*)malloc(bytes);
    FILE* f = fopen("data/x.bin", "rb");
    if (!f || fread(h, 1, bytes, f) != bytes) return 1;
    fclose(f);
    float *dx, *dy;
    cudaMalloc(&dx, bytes);
    cudaMalloc(&dy, bytes);
    cudaMemcpy(dx, h, bytes, cudaMemcpyHostToDevice);
    scale_kernel<<<(N + 255) / 256, 256>>>(dx, dy, SCALE, N);
    cudaMemcpy(h, dy, bytes, cudaMemcpyDeviceToHost);
    f = fopen("data/y.bin", "wb");
    fwrite(h, 1, bytes, f);
    fclose(f);
    return 0;
}
"""


def scale_task(factor: float = 2.0, name: str = "scale") -> Task:
    cases = [
        InputCase(name="default", seed=1),
        InputCase(name="odd", seed=2, sizes={"N": 1000}),
        InputCase(name="small", seed=3, sizes={"N": 7}),
        InputCase(name="edge", seed=4, distributions={"x": ValueDistribution(kind="edge", low=-10, high=10)}),
        InputCase(name="large", seed=5, sizes={"N": 4099}),
    ]
    return Task(
        name=name,
        description=f"Scale a vector: y[i] = {factor} * x[i]. Input x: float32 [N]. Output y: float32 [N].",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
        sizes={"N": 1024},
        cases=cases,
        reference=Reference(code=f"def reference(inputs, sizes):\n    return {{'y': inputs['x'] * {factor}}}\n"),
    )


def scale_program(factor: float = 2.0) -> str:
    return SCALE_PROGRAM.replace("SCALE", f"{factor:.1f}f")


def make_raw(rid: str, text: str, *, task: Task | None = None, split: str = "train",
             license: str = "Apache-2.0") -> RawRecord:
    return RawRecord(
        id=rid,
        text=text,
        task=task,
        split=split,
        provenance=Provenance(source="test", origin=f"tests/builder/{rid}", license=license),
    )
