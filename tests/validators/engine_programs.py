"""Small programs following the program convention, for the engine's tests.

Host code computes the result (kernels cannot run on a GPU-less machine until the CPU backend
runs them); each program still launches a token kernel, as the anti-cheat checks require.
`MUTANT` is one program whose misbehaviour is chosen at run time by the `MUTATION`
environment variable, so one nvcc build serves every comparison and anti-cheat test.
"""

from __future__ import annotations

from schemas import InputCase, Program, Reference, Task, TensorSpec, Tolerance
from validators.backends.cuda import CudaBackend

TEMPLATE = r"""
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/socket.h>
#include <unistd.h>
#include <cuda_runtime.h>
#ifndef N
#define N 1000
#endif
__global__ void touch(float* p) { if (p) p[threadIdx.x] += 0.0f; }
static void read_bin(const char* path, void* buf, size_t bytes) {
  FILE* f = fopen(path, "rb");
  if (!f || fread(buf, 1, bytes, f) != bytes) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
  fclose(f);
}
static void write_bin(const char* path, const void* buf, size_t bytes) {
  FILE* f = fopen(path, "wb"); fwrite(buf, 1, bytes, f); fclose(f);
}
static float a[N + 8], b[N + 8], c[N + 8];
int main() {
  const char* env = getenv("MUTATION");
  std::string m = env ? env : "";
  read_bin("data/a.bin", a, N * sizeof(float));
  if (m != "skip_b") read_bin("data/b.bin", b, N * sizeof(float));
  float* d = nullptr;
  if (cudaMalloc(&d, N * sizeof(float)) == cudaSuccess) { touch<<<1, 1>>>(d); cudaDeviceSynchronize(); }
  for (int i = 0; i < N; i++) c[i] = a[i] + b[i];
  size_t count = N;
  if (m == "off17") c[17] += 0.5f;
  if (m == "small9") c[9] += 0.001f;
  if (m == "missing") return 0;
  if (m == "short") count = N - 1;
  if (m == "long") count = N + 1;
  if (m == "nan3") c[3] = NAN;
  if (m == "inf5") c[5] = INFINITY;
  if (m == "zeros") memset(c, 0, sizeof c);
  if (m == "constant") for (int i = 0; i < N; i++) c[i] = 1.5f;
  if (m == "modify_a") write_bin("data/a.bin", c, 8);
  if (m == "read_etc") { char p[32]; snprintf(p, sizeof p, "/etc/%s", "hostname"); FILE* f = fopen(p, "r"); if (f) fclose(f); }
  if (m == "extra_file") { char p[32]; snprintf(p, sizeof p, "data/%s", "zz.bin"); FILE* z = fopen(p, "w"); if (z) fclose(z); }
  if (m == "socket") socket(AF_INET, SOCK_STREAM, 0);
  if (m == "delete_outside" && getenv("VICTIM")) remove(getenv("VICTIM"));
  if (m == "exit3") return 3;
  if (m == "segv") *(volatile int*)nullptr = 1;
  if (m == "spin") for (volatile unsigned long k = 0;; k++) {}
  if (m == "fork_bomb") for (;;) fork();
  if (m == "mem_bomb") for (;;) { char* p = (char*)malloc(64 << 20); if (!p) { perror("malloc"); return 3; } memset(p, 1, 64 << 20); }
  if (m == "loud") for (;;) fwrite(c, 1, sizeof c, stdout);
  if (m == "racy" && getenv("SCHEDULE") && getenv("SCHEDULE")[0] == 'r') c[42] += 1.0f;
  write_bin("data/c.bin", c, count * sizeof(float));
  return 0;
}
"""

MUTANT = Program(source=TEMPLATE)
"""Computes on the host (for the cuda backend on a machine without a GPU); the cpu backend's
kernel-dependence check rejects it, so cpu tests use KERNEL_VECADD."""

HOST_LOOP = "for (int i = 0; i < N; i++) c[i] = a[i] + b[i];"
ON_DEVICE = (
    "{ float *da, *db, *dc; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4); cudaMalloc(&dc, N * 4);"
    " cudaMemcpy(da, a, N * 4, cudaMemcpyHostToDevice); cudaMemcpy(db, b, N * 4, cudaMemcpyHostToDevice);"
    " add<<<(N + 255) / 256, 256>>>(da, db, dc, N); cudaMemcpy(c, dc, N * 4, cudaMemcpyDeviceToHost); }")
KERNEL_VECADD = Program(source=TEMPLATE.replace("int main() {", (
    "__global__ void add(const float* a, const float* b, float* c, int n) {"
    " int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) c[i] = a[i] + b[i]; }\nint main() {"),
    1).replace(HOST_LOOP, ON_DEVICE))
"""The same program, the sum computed by a kernel."""


def vecadd_program(prelude: str = "", replace: tuple[str, str] | None = None) -> Program:
    src = prelude + TEMPLATE
    if replace:
        assert replace[0] in src
        src = src.replace(*replace)
    return Program(source=src)


def vecadd_task(cases: int = 2, odd_size: bool = False, tolerance: Tolerance | None = None) -> Task:
    cs = [InputCase(name=f"case{i}", seed=100 + i) for i in range(cases)]
    if odd_size:
        cs.append(InputCase(name="odd", seed=7, sizes={"N": 997}))
    return Task(
        name="vecadd", description="c = a + b for float32 vectors of length N",
        inputs=[TensorSpec(name="a", dtype="float32", shape=["N"]),
                TensorSpec(name="b", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="c", dtype="float32", shape=["N"])],
        sizes={"N": 1000}, cases=cs, tolerance=tolerance,
        reference=Reference(code="def reference(inputs, sizes):\n    return {'c': inputs['a'] + inputs['b']}\n"),
    )


class MutantBackend(CudaBackend):
    """The real cuda backend, passing the chosen misbehaviour (and schedule) to the program."""

    def __init__(self, *args, schedules: list[str] | None = None, **kw) -> None:
        super().__init__(*args, **kw)
        self.mutation = ""
        self.env: dict[str, str] = {}
        self._schedules = schedules or ["default"]

    def schedules(self, *, thorough: bool = True) -> list[str]:
        return list(self._schedules)

    def command(self, exe, args, *, schedule="default"):
        argv, env = super().command(exe, args, schedule=schedule)
        return argv, {**env, **self.env, "MUTATION": self.mutation, "SCHEDULE": schedule}

    # These programs compute on the host by design (no GPU runs their kernels here): the
    # kernel-dependence runs, which would rightly reject them, are not what these tests test.
    def kernel_inputs_env(self, inputs_file, log_file):
        return None

    def upload_log_env(self):
        return None

    def no_launch_env(self):
        return None


INT_TEMPLATE = r"""
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cuda_runtime.h>
#ifndef N
#define N 256
#endif
__global__ void touch(int* p) { if (p) p[0] += 0; }
static int32_t x[N], y[N];
int main() {
  const char* in = "data/x.bin";
  FILE* f = fopen(in, "rb"); fread(x, 4, N, f); fclose(f);
  int* d = nullptr;
  if (cudaMalloc(&d, 4) == cudaSuccess) touch<<<1, 1>>>(d);
  int bump = getenv("MUTATION") && getenv("MUTATION")[0] == 'o';
  for (int i = 0; i < N; i++) y[i] = 2 * x[i] + (bump && i == 40);
  const char* out = "data/y.bin";
  FILE* o = fopen(out, "wb"); fwrite(y, 4, N, o); fclose(o);
  return 0;
}
"""


def double_task() -> Task:
    return Task(
        name="double", description="y = 2 * x for int32 x of length N",
        inputs=[TensorSpec(name="x", dtype="int32", shape=["N"])],
        outputs=[TensorSpec(name="y", dtype="int32", shape=["N"])],
        sizes={"N": 256}, cases=[InputCase(name="c0", seed=1)],
        reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * 2}\n"),
    )


DOUBLE = Program(source=INT_TEMPLATE)
