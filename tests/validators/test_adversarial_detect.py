"""Issue 21, class 2: a program must not tell which check it is in. Each exploit here passed
before: it read the shim's settings from its own `.preinit_array` entry (ahead of the runtime's),
or switched to atomics only where the race build's macro said so. The honest versions pass."""

from __future__ import annotations

import os
import subprocess

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec
from schemas.tensor import ValueDistribution
from validators.backends import get_backend
from validators.cpu.toolchain import compile_program
from validators.engine import Engine

pytestmark = pytest.mark.skipif(get_backend("cpu").available() is not None,
                                reason="no cpu backend")

# --- settings read before the runtime wipes them ---------------------------------------------

PEEK = r"""
#include <cstdio>
#include <cstring>
static int seen = 0;
static void peek(int, char**, char** envp) {
  for (char** e = envp; e && *e; e++) if (!strncmp(*e, "CUDASHIM_", 9)) seen++;
}
__attribute__((section(".preinit_array"), used)) static void (*early)(int, char**, char**) = peek;
__global__ void k(int* p) { p[threadIdx.x] = 1; }
int main() {
  int* d; cudaMalloc(&d, 64); k<<<1, 16>>>(d); cudaDeviceSynchronize();
  printf("settings seen: %d\n", seen); return 0; }
"""


@pytest.mark.parametrize("variant", ["plain", "race"])
def test_a_preinit_entry_of_the_program_sees_no_settings(tmp_path, variant):
    out = compile_program(PEEK, tmp_path / "b", variant=variant)
    assert out.ok, out.diagnostics
    env = {**os.environ, "CUDASHIM_NO_LAUNCH": "1", "CUDASHIM_SCHEDULE": "reverse"}
    proc = subprocess.run([str(out.exe)], capture_output=True, text=True, timeout=60, env=env,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "settings seen: 0" in proc.stdout



SCALE = Task(
    name="scale", description="y = 2 x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": 256}, cases=[InputCase(name="a", seed=5)],
    reference=Reference(code=(
        "import numpy as np\n"
        "def reference(inputs, sizes):\n"
        "    return {'y': (2 * inputs['x']).astype(np.float32)}\n")),
)
SCALE_IO = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define N 256
static float x[N], y[N];
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) exit(1); fclose(f); }
static void save() { FILE* o = fopen("data/y.bin", "wb"); fwrite(y, 4, N, o); fclose(o); }
"""
# The host computes y; the kernel is a token. In the no-launch run (told by the settings its
# own pre-init entry read) it writes zeros, so the no-launch run's outputs differ.
HOST_CHEAT = SCALE_IO + r"""
static bool no_launch = false;
static void peek(int, char**, char** envp) {
  for (char** e = envp; e && *e; e++) if (!strncmp(*e, "CUDASHIM_NO_LAUNCH=1", 20)) no_launch = true;
}
__attribute__((section(".preinit_array"), used)) static void (*early)(int, char**, char**) = peek;
__global__ void touch(float* p) { p[threadIdx.x] = 0.f; }
int main() {
  load(); float* d; cudaMalloc(&d, 4 * N); touch<<<1, 32>>>(d); cudaDeviceSynchronize();
  for (int i = 0; i < N; i++) y[i] = no_launch ? 0.f : 2 * x[i];
  save(); return 0; }
"""
HONEST_SCALE = SCALE_IO + r"""
__global__ void scale(const float* a, float* b, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = 2 * a[i]; }
int main() {
  load(); float *da, *db; cudaMalloc(&da, 4 * N); cudaMalloc(&db, 4 * N);
  cudaMemcpy(da, x, 4 * N, cudaMemcpyHostToDevice);
  scale<<<N / 64, 64>>>(da, db, N);
  cudaMemcpy(y, db, 4 * N, cudaMemcpyDeviceToHost); save(); return 0; }
"""


@pytest.fixture(scope="module")
def fast_engine() -> Engine:
    return Engine(get_backend("cpu"))


def test_host_answer_that_hides_from_the_no_launch_run_is_rejected(fast_engine):
    honest = fast_engine.check(SCALE, Program(source=HONEST_SCALE), thorough=False)
    assert honest.status == Status.PASSED, honest.reason
    res = fast_engine.check(SCALE, Program(source=HOST_CHEAT), thorough=False)
    assert res.status == Status.REJECTED, res.reason
    assert "kernel" in res.reason, res.reason


# Code the dynamic loader runs while it relocates, before any .preinit_array entry.
IFUNC = HONEST_SCALE.replace("int main() {", r"""
static int impl() { return 7; }
extern "C" void* pick() { return (void*)impl; }
int f() __attribute__((ifunc("pick")));
int main() { if (f() != 7) return 2;""")


def test_code_the_loader_runs_before_the_runtime_is_a_runtime_error(fast_engine):
    res = fast_engine.check(SCALE, Program(source=IFUNC), thorough=False)
    assert res.status == Status.RUNTIME_ERROR, res.reason
    assert "runs code before the runtime starts" in res.reason, res.reason


# --- the race build named by a macro ----------------------------------------------------------

HIST = Task(
    name="hist16", description="h[b] = how many x[i] % 16 == b",
    inputs=[TensorSpec(name="x", dtype="int32", shape=["N"])],
    outputs=[TensorSpec(name="h", dtype="int32", shape=[16])],
    sizes={"N": 1024},
    cases=[InputCase(name="a", seed=2,
                     distributions={"x": ValueDistribution(kind="randint", low=0, high=1000)})],
    reference=Reference(code=(
        "import numpy as np\n"
        "def reference(inputs, sizes):\n"
        "    return {'h': np.bincount(inputs['x'] % 16, minlength=16).astype(np.int32)}\n")),
)
HIST_SOURCE = r"""
#include <cstdio>
#include <cstdlib>
#define N 1024
static int x[N], h[16];
__global__ void hist(const int* in, int* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { COUNT; }
}
int main() {
  FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) return 1; fclose(f);
  int *dx, *dh; cudaMalloc(&dx, 4 * N); cudaMalloc(&dh, 64); cudaMemset(dh, 0, 64);
  cudaMemcpy(dx, x, 4 * N, cudaMemcpyHostToDevice);
  hist<<<N / 128, 128>>>(dx, dh, N);
  cudaMemcpy(h, dh, 64, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/h.bin", "wb"); fwrite(h, 4, 16, o); fclose(o); return 0; }
"""
HONEST_HIST = HIST_SOURCE.replace("COUNT", "atomicAdd(&out[in[i] % 16], 1)")
# Atomic where a macro says "race build", a lost update everywhere else (on a GPU too).
RACY_HIST = HIST_SOURCE.replace("COUNT", r"""
#if defined(CUDASHIM_RACE) || defined(__SANITIZE_THREAD__)
    atomicAdd(&out[in[i] % 16], 1)
#else
    out[in[i] % 16] += 1
#endif
""")


def test_atomics_only_in_the_race_build_fail_as_a_race():
    engine = Engine(get_backend("cpu"))
    honest = engine.check(HIST, Program(source=HONEST_HIST), thorough=True)
    assert honest.status == Status.PASSED, honest.reason
    res = engine.check(HIST, Program(source=RACY_HIST), thorough=True)
    assert res.status == Status.FAILED, res.reason
    assert "race in kernel 'hist'" in res.reason, res.reason


def test_the_program_sees_the_same_macros_in_every_build(tmp_path):
    probe = r"""
#include <cstdio>
int main() {
#if defined(CUDASHIM_RACE) || defined(__SANITIZE_THREAD__)
  puts("race build");
#else
  puts("a build");
#endif
  return 0; }
"""
    said = set()
    for variant in ("plain", "race"):
        out = compile_program(probe, tmp_path / variant, variant=variant)
        assert out.ok, out.diagnostics
        proc = subprocess.run([str(out.exe)], capture_output=True, text=True, timeout=60,
                              cwd=tmp_path)
        said.add(proc.stdout.strip())
    assert said == {"a build"}


# --- files that appear only in some runs ------------------------------------------------------

# The host computes y and uploads x for show; where a log of the runtime's appears in its work
# folder (the runs that note uploads or substitute the device's inputs) it writes zeros, so
# those runs see outputs that follow neither input set.
FILE_CHEAT = SCALE_IO + r"""
#include <unistd.h>
__global__ void touch(float* p) { p[threadIdx.x] += 0.f; }
int main() {
  load(); float* d; cudaMalloc(&d, 4 * N);
  cudaMemcpy(d, x, 4 * N, cudaMemcpyHostToDevice);
  touch<<<1, 32>>>(d); cudaDeviceSynchronize();
  bool special = access(".ckd-uploads", F_OK) == 0 || access(".ckd-kernel-inputs.log", F_OK) == 0
              || access(".ckd-kernel-inputs", F_OK) == 0;
  for (int i = 0; i < N; i++) y[i] = special ? 0.f : 2 * x[i];
  save(); return 0; }
"""


def test_runtime_logs_are_not_in_the_program_s_view(fast_engine):
    # The runtime now creates its logs in every run before the program's code runs (held open,
    # written with the run's nonce at exit): the program sees them in every run alike, so its
    # "special" branch is all it ever computes (zeros, rejected); without it, the host's answer
    # meets the kernel-work run.
    res = fast_engine.check(SCALE, Program(source=FILE_CHEAT), thorough=True)
    assert res.status == Status.REJECTED, res.reason
    assert all(c.status == Status.REJECTED for c in res.cases), [c.reason for c in res.cases]
    assert "all zeros" in res.reason, res.reason
    honest_elsewhere = FILE_CHEAT.replace("special ? 0.f : 2 * x[i]", "special ? 2 * x[i] : 0.f")
    res = fast_engine.check(SCALE, Program(source=honest_elsewhere), thorough=True)
    assert res.status == Status.REJECTED, res.reason
    assert "outputs do not depend on the kernels" in res.reason, res.reason


# The host computes y. A sentinel kernel tells the no-launch run (a difference no run can hide,
# see validators/cpu/README.md); a mapping of the runtime's input file in /proc/self/maps told
# the kernel-work run. In both it wrote zeros, so neither run could tie the outputs to the host.
MAPS_CHEAT = SCALE_IO + r"""
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>
__global__ void sentinel(float* p, int* flag) { p[threadIdx.x] += 0.f; if (threadIdx.x == 0) *flag = 1; }
static bool mapped_file_of_ours() {
  // Spelled at run time and opened by a raw system call: past the static check and the
  // access log, as a policy that meets them would learn to.
  char path[16]; const char* parts[] = {"/pr", "oc/se", "lf/ma", "ps"}; path[0] = 0;
  for (const char* q : parts) strcat(path, q);
  int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY);
  if (fd < 0) return false;
  static char text[1 << 20]; size_t n = 0; ssize_t r;
  while (n < sizeof text - 1 && (r = read(fd, text + n, sizeof text - 1 - n)) > 0) n += (size_t)r;
  close(fd); text[n] = 0;
  return strstr(text, ".ckd-") != nullptr;
}
int main() {
  load(); float* d; int* dflag; int flag = 0;
  cudaMalloc(&d, 4 * N); cudaMalloc(&dflag, 4); cudaMemset(dflag, 0, 4);
  cudaMemcpy(d, x, 4 * N, cudaMemcpyHostToDevice);
  sentinel<<<1, 32>>>(d, dflag); cudaMemcpy(&flag, dflag, 4, cudaMemcpyDeviceToHost);
  bool special = flag != 1 || mapped_file_of_ours();
  for (int i = 0; i < N; i++) y[i] = special ? 0.f : 2 * x[i];
  save(); return 0; }
"""


def test_the_kernel_work_run_leaves_no_trace_in_the_process(fast_engine):
    res = fast_engine.check(SCALE, Program(source=MAPS_CHEAT), thorough=True)
    assert res.status == Status.REJECTED, res.reason
    assert "host" in res.reason, res.reason


# The checking builds start device memory filled with a poison byte; the kernel-work and no-launch
# runs used to start it zeroed. The host computes y and reads a fresh allocation to tell.
POISON_CHEAT = SCALE_IO + r"""
__global__ void touch(float* p) { p[threadIdx.x] += 0.f; }
int main() {
  load(); float* d; unsigned char* probe; unsigned char first = 0;
  cudaMalloc(&d, 4 * N); cudaMalloc(&probe, 64);
  cudaMemcpy(d, x, 4 * N, cudaMemcpyHostToDevice);
  touch<<<1, 32>>>(d); cudaDeviceSynchronize();
  cudaMemcpy(&first, probe, 1, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = first == 0 ? 0.f : 2 * x[i];
  save(); return 0; }
"""


def test_every_run_of_a_thorough_check_starts_device_memory_alike(fast_engine):
    res = fast_engine.check(SCALE, Program(source=POISON_CHEAT), thorough=True)
    assert res.status == Status.REJECTED, res.reason
    assert "host" in res.reason, res.reason


# Removing the kernel-work run's input file as the runtime starts changed the work folder after
# the validator had set up (and protected) the inputs; in the other runs it did not. The host
# computes y and compares the two change times before it opens anything.
CTIME_CHEAT = SCALE_IO + r"""
#include <sys/stat.h>
__global__ void sentinel(float* p, int* flag) { p[threadIdx.x] += 0.f; if (threadIdx.x == 0) *flag = 1; }
static bool after(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec != b.tv_sec ? a.tv_sec > b.tv_sec : a.tv_nsec > b.tv_nsec;
}
int main() {
  struct stat here, input;
  bool moved = stat(".", &here) == 0 && stat("data/x.bin", &input) == 0 && after(here.st_ctim, input.st_ctim);
  load(); float* d; int* dflag; int flag = 0;
  cudaMalloc(&d, 4 * N); cudaMalloc(&dflag, 4); cudaMemset(dflag, 0, 4);
  cudaMemcpy(d, x, 4 * N, cudaMemcpyHostToDevice);
  sentinel<<<1, 32>>>(d, dflag); cudaMemcpy(&flag, dflag, 4, cudaMemcpyDeviceToHost);
  bool special = flag != 1 || moved;
  for (int i = 0; i < N; i++) y[i] = special ? 0.f : 2 * x[i];
  save(); return 0; }
"""


def test_the_work_folder_changes_alike_in_every_run(fast_engine):
    res = fast_engine.check(SCALE, Program(source=CTIME_CHEAT), thorough=True)
    assert res.status != Status.PASSED, res.reason
