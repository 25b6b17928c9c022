"""Tasks of our own in the CUDABench JSONL format (5 rows per task, one per input scale).

Written for these tests: vector add (NumPy gen.py, reference as `data/ref_c.bin`), ReLU (torch
gen.py, reference as `data/y_expected.bin`) and row sums (NumPy gen.py, reference under the
output's own name in a `ref/` folder). Each bench.cu hard-codes its scale's sizes, as
CUDABench's programs do.
"""

from __future__ import annotations

import json
from pathlib import Path

VECADD_SIZES = [64, 100, 256, 513, 1024]
RELU_SIZES = [32, 64, 128, 200, 256]
ROWSUM_SHAPES = [(4, 8), (8, 16), (16, 33), (32, 64), (64, 64)]

IO_HELPERS = r"""
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

static void load(const char* path, void* buf, size_t bytes) {
    FILE* f = fopen(path, "rb");
    if (!f || fread(buf, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    fclose(f);
}
static void save(const char* path, const void* buf, size_t bytes) {
    FILE* f = fopen(path, "wb");
    if (!f || fwrite(buf, 1, bytes, f) != bytes) { fprintf(stderr, "cannot write %s\n", path); exit(1); }
    fclose(f);
}
"""

VECADD_CU = IO_HELPERS + r"""
#define N __N__
__global__ void add(const float* a, const float* b, float* c, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i]__WRONG__;
}
int main() {
    static float a[N], b[N], c[N];
    load("data/a.bin", a, sizeof a);
    load("data/b.bin", b, sizeof b);
    float *da, *db, *dc;
    cudaMalloc(&da, sizeof a); cudaMalloc(&db, sizeof b); cudaMalloc(&dc, sizeof c);
    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);
    cudaMemcpy(db, b, sizeof b, cudaMemcpyHostToDevice);
    add<<<(N + 127) / 128, 128>>>(da, db, dc, N);
    cudaMemcpy(c, dc, sizeof c, cudaMemcpyDeviceToHost);
    save("data/c.bin", c, sizeof c);
    cudaFree(da); cudaFree(db); cudaFree(dc);
    return 0;
}
"""

VECADD_GEN = """import numpy as np
N = __N__
rng = np.random.default_rng(__N__)
a = rng.standard_normal(N).astype(np.float32)
b = rng.standard_normal(N).astype(np.float32)
a.tofile("data/a.bin")
b.tofile("data/b.bin")
(a + b).tofile("data/ref_c.bin")
"""

VECADD_CMP = """import numpy as np
out = np.fromfile("data/c.bin", dtype=np.float32)
ref = np.fromfile("data/ref_c.bin", dtype=np.float32)
print("T" if out.shape == ref.shape and np.allclose(out, ref, atol=1e-5) else "F")
"""

# Reads the reference instead of computing: must never see it.
VECADD_PEEK_CU = IO_HELPERS + r"""
#define N __N__
__global__ void copy(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
int main() {
    static float a[N], b[N], c[N];
    load("data/a.bin", a, sizeof a);
    load("data/b.bin", b, sizeof b);
    load("data/ref_c.bin", c, sizeof c);
    float *dx, *dy;
    cudaMalloc(&dx, sizeof c); cudaMalloc(&dy, sizeof c);
    cudaMemcpy(dx, c, sizeof c, cudaMemcpyHostToDevice);
    copy<<<(N + 127) / 128, 128>>>(dx, dy, N);
    cudaMemcpy(c, dy, sizeof c, cudaMemcpyDeviceToHost);
    save("data/c.bin", c, sizeof c);
    return 0;
}
"""

RELU_CU = IO_HELPERS + r"""
#define N __N__
__global__ void relu(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] > 0.0f ? x[i] : 0.0f;
}
int main() {
    static float x[N * N], y[N * N];
    load("data/x.bin", x, sizeof x);
    float *dx, *dy;
    cudaMalloc(&dx, sizeof x); cudaMalloc(&dy, sizeof y);
    cudaMemcpy(dx, x, sizeof x, cudaMemcpyHostToDevice);
    relu<<<(N * N + 255) / 256, 256>>>(dx, dy, N * N);
    cudaMemcpy(y, dy, sizeof y, cudaMemcpyDeviceToHost);
    save("data/y.bin", y, sizeof y);
    return 0;
}
"""

RELU_GEN = """import torch
torch.manual_seed(__N__)
x = torch.randn(__N__, __N__, dtype=torch.float32)
x.numpy().tofile("data/x.bin")
torch.relu(x).numpy().tofile("data/y_expected.bin")
"""

RELU_CMP = """import numpy as np
import torch
out = torch.from_numpy(np.fromfile("data/y.bin", dtype=np.float32))
ref = torch.from_numpy(np.fromfile("data/y_expected.bin", dtype=np.float32))
print("T" if out.shape == ref.shape and torch.allclose(out, ref) else "F")
"""

ROWSUM_CU = IO_HELPERS + r"""
#define R __R__
#define C __C__
__global__ void rowsum(const float* m, float* s) {
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= R) return;
    float acc = 0.0f;
    for (int c = 0; c < C; ++c) acc += m[r * C + c];
    s[r] = acc;
}
int main() {
    static float m[R * C], s[R];
    load("data/m.bin", m, sizeof m);
    float *dm, *ds;
    cudaMalloc(&dm, sizeof m); cudaMalloc(&ds, sizeof s);
    cudaMemcpy(dm, m, sizeof m, cudaMemcpyHostToDevice);
    rowsum<<<(R + 31) / 32, 32>>>(dm, ds);
    cudaMemcpy(s, ds, sizeof s, cudaMemcpyDeviceToHost);
    save("data/s.bin", s, sizeof s);
    return 0;
}
"""

ROWSUM_GEN = """import os
import numpy as np
R, C = __R__, __C__
m = np.random.default_rng(R * 1000 + C).uniform(-1, 1, (R, C)).astype(np.float32)
m.tofile("data/m.bin")
os.makedirs("ref", exist_ok=True)
m.sum(axis=1, dtype=np.float64).astype(np.float32).tofile("ref/s.bin")
"""

ROWSUM_CMP = """import numpy as np
out = np.fromfile("data/s.bin", dtype=np.float32)
ref = np.fromfile("ref/s.bin", dtype=np.float32)
ok = out.shape == ref.shape and np.allclose(out, ref, rtol=1e-4, atol=1e-4)
print("T" if ok else "F")
"""


def _fill(template: str, **values: object) -> str:
    for key, value in values.items():
        template = template.replace(f"__{key}__", str(value))
    return template


def vecadd_cu(n: int, *, wrong: bool = False) -> str:
    return _fill(VECADD_CU, N=n, WRONG=" + 1.0f" if wrong else "")


def vecadd_peek_cu(n: int) -> str:
    return _fill(VECADD_PEEK_CU, N=n)


def _row(row_id: int, name: str, inputs: list[tuple[str, str]], outputs: list[tuple[str, str]],
         cu: str, gen: str, cmp: str, prompt: str) -> dict:
    return {
        "id": row_id, "task_name": name, "task_description": f"Compute {name} with CUDA.",
        "inputs": [{"name": n, "dtype": "float32", "shape": s} for n, s in inputs],
        "outputs": [{"name": n, "dtype": "float32", "shape": s} for n, s in outputs],
        "gpu": "unknown", "bench.cu": cu, "gen.py": gen, "compare.py": cmp,
        "level1_prompt": prompt, "level2_prompt": prompt, "level3_prompt": f"Compute {name}.",
    }


def rows() -> list[dict]:
    """All rows: vector add (ids 0-4), ReLU (5-9), row sums (10-14), smallest scale first."""
    out: list[dict] = []
    for n in VECADD_SIZES:
        out.append(_row(len(out), "Vector_Add", [("a", f"({n},)"), ("b", f"({n},)")],
                        [("c", f"({n},)")], vecadd_cu(n), _fill(VECADD_GEN, N=n), VECADD_CMP,
                        f"Add two float32 vectors a and b of length {n} into c."))
    for n in RELU_SIZES:
        out.append(_row(len(out), "ReLU", [("x", f"({n}, {n})")], [("y", f"({n}, {n})")],
                        _fill(RELU_CU, N=n), _fill(RELU_GEN, N=n), RELU_CMP,
                        f"Apply ReLU to a {n}x{n} float32 matrix x, writing y."))
    for r, c in ROWSUM_SHAPES:
        out.append(_row(len(out), "Row_Sum", [("m", f"({r}, {c})")], [("s", f"({r},)")],
                        _fill(ROWSUM_CU, R=r, C=c), _fill(ROWSUM_GEN, R=r, C=c), ROWSUM_CMP,
                        f"Sum each row of a {r}x{c} float32 matrix m into s."))
    return out


def write_jsonl(path: Path, items: list[dict] | None = None) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in (items if items is not None else rows())))
    return path
