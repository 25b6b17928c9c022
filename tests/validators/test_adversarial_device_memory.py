"""Issue 21, class 1: host code must not touch device memory, on the emulator as on a GPU.

On the cpu backend device memory is host memory, so host code could read the device's copy of
the inputs (the kernel-work run's second draw) and store an answer it computed itself through the
device pointer, its kernels doing nothing, and pass every check. A GPU faults on such an access;
the runtime keeps device allocations closed to host code outside launches, copies and library
calls, so the emulator faults too, and the verdict names the access. Each cheat has an honest twin
whose kernels do the same work; both are checked plain and thorough."""

from __future__ import annotations

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec

N = 1024
SQUARE = Task(
    name="square_dm", description="y = x * x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": N}, cases=[InputCase(name="a", seed=7)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * inputs['x']}\n"),
)

IO = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define N 1024
static float x[N], y[N];
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) exit(1); fclose(f); }
static void save() { FILE* f = fopen("data/y.bin", "wb"); fwrite(y, 4, N, f); fclose(f); }
__global__ void sq(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] * a[i]; }
__global__ void touch(float* b) { if (threadIdx.x == 0 && b[0] != b[0]) b[0] = 0.0f; }
static float *da, *db;
static void up() { cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); }
"""

CHEATS = {
    # Reads the device's copy of the input and stores the squares through the device pointer:
    # the outputs follow the inputs the device got, so the kernel-work run took it for kernel work.
    "host_reads_and_writes_device_memory": IO + r"""
int main() { load(); up(); touch<<<1, 32>>>(db); cudaDeviceSynchronize();
  for (int i = 0; i < N; i++) db[i] = da[i] * da[i];
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    # Reads the device's copy with a libc call (AddressSanitizer's interceptor in that build).
    "host_reads_device_memory_with_memcpy": IO + r"""
int main() { load(); up(); touch<<<1, 32>>>(db); cudaDeviceSynchronize();
  static float d[N]; memcpy(d, da, N * 4);
  for (int i = 0; i < N; i++) y[i] = d[i] * d[i]; save(); }
""",
    # Stores the host's answer through a device pointer and copies it back (sentinel included,
    # so the old no-launch run saw wrong outputs).
    "host_writes_device_memory": IO + r"""
__global__ void flag(int* f) { *f = 1; }
int main() { load(); up(); int* f; cudaMalloc(&f, 4); cudaMemset(f, 0, 4); flag<<<1, 1>>>(f);
  int h = 0; cudaMemcpy(&h, f, 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) db[i] = h ? x[i] * x[i] : 0.0f;
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
}

HONEST = {
    "host_reads_and_writes_device_memory": IO + r"""
int main() { load(); up(); touch<<<1, 32>>>(db); cudaDeviceSynchronize();
  sq<<<N / 256, 256>>>(da, db, N);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    "host_reads_device_memory_with_memcpy": IO + r"""
int main() { load(); up(); touch<<<1, 32>>>(db); sq<<<N / 256, 256>>>(da, db, N); cudaDeviceSynchronize();
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    # Pitched and 3-D allocations, 2-D copies and memsets, and managed and pinned memory the host
    # touches directly, which it may.
    "host_writes_device_memory": IO + r"""
int main() { load(); float *m, *p; cudaMallocManaged(&m, N * 4); cudaMallocHost(&p, N * 4);
  memcpy(p, x, N * 4); float* d; size_t pitch; cudaMallocPitch((void**)&d, &pitch, 64 * 4, N / 64);
  cudaMemset2D(d, pitch, 0, 64 * 4, N / 64);
  cudaMemcpy2D(d, pitch, p, 64 * 4, 64 * 4, N / 64, cudaMemcpyHostToDevice);
  cudaPitchedPtr v; cudaMalloc3D(&v, make_cudaExtent(64 * 4, N / 64, 1));
  for (int r = 0; r < N / 64; r++) sq<<<1, 64>>>((float*)((char*)d + r * pitch), (float*)((char*)v.ptr + r * v.pitch), 64);
  cudaMemcpy2D(m, 64 * 4, v.ptr, v.pitch, 64 * 4, N / 64, cudaMemcpyDeviceToHost);
  memcpy(y, m, N * 4); save(); }
""",
}


@pytest.fixture(scope="module")
def engine():
    from validators.backends import get_backend
    from validators.engine import Engine

    backend = get_backend("cpu")
    backend._schedules = ["forward"]
    return Engine(backend)


@pytest.mark.parametrize("thorough", [False, True], ids=["plain", "thorough"])
@pytest.mark.parametrize("name", sorted(CHEATS))
def test_host_access_to_device_memory_faults(engine, name, thorough):
    res = engine.check(SQUARE, Program(source=CHEATS[name]), thorough=thorough)
    assert res.status == Status.RUNTIME_ERROR, (res.status, res.reason, res.kernel_check)
    assert "host code accessed device memory at 0x" in res.reason, res.reason
    assert "a GPU faults here" in res.reason


@pytest.mark.parametrize("thorough", [False, True], ids=["plain", "thorough"])
@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_twins_pass(engine, name, thorough):
    res = engine.check(SQUARE, Program(source=HONEST[name]), thorough=thorough)
    assert res.status == Status.PASSED, (res.status, res.reason)


# Host code that opens device memory again itself: mprotect on the allocation's pages, by name, by
# its system-call number, or through a looked-up symbol. Refused before anything runs.
_OPENS = {
    "mprotect": "mprotect((void*)((unsigned long)db & ~4095ul), N * 4 + 4096, PROT_READ | PROT_WRITE);",
    "syscall_number": "syscall(SYS_mprotect, (void*)((unsigned long)db & ~4095ul), N * 4 + 4096, 3);",
    "bare_syscall_number": "long nr = 5 * 2; syscall(nr, (void*)((unsigned long)db & ~4095ul), N * 4 + 4096, 3);",
    "mprotect_by_address": ("int (*volatile mp)(void*, size_t, int) = &mprotect;"
                            " mp((void*)((unsigned long)db & ~4095ul), N * 4 + 4096, 3);"),
}
REOPENS = {name: IO.replace("#include <cstdio>", "#include <cstdio>\n#include <sys/mman.h>\n"
                            "#include <sys/syscall.h>\n#include <unistd.h>\n#include <dlfcn.h>")
           + "int main() { load(); up(); touch<<<1, 32>>>(db); cudaDeviceSynchronize();\n  "
           + line + "\n  for (int i = 0; i < N; i++) db[i] = x[i] * x[i];\n"
           "  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }\n"
           for name, line in _OPENS.items()}


@pytest.mark.parametrize("name", sorted(REOPENS))
def test_host_code_that_reopens_device_memory_is_refused(engine, name):
    res = engine.check(SQUARE, Program(source=REOPENS[name]), thorough=False)
    assert res.status == Status.REJECTED, (res.status, res.reason)
    assert "changing memory protection" in res.reason, res.reason


# The same calls spelt so that no reading of the source sees them (tokens pasted by the
# preprocessor, a path built at run time): the run's access shim refuses and names them.
_HIDDEN = {
    "pasted_mprotect": "CAT(mpro, tect)((void*)((unsigned long)db & ~4095ul), N * 4 + 4096, 3);",
    "pasted_syscall": "CAT(sys, call)(5 * 2, (void*)((unsigned long)db & ~4095ul), N * 4 + 4096, 3);",
    "proc_self_mem": ("char path[32]; snprintf(path, sizeof path, \"/proc/%s/mem\", \"self\");"
                      " FILE* m = fopen(path, \"r+b\"); if (m) { fseek(m, (long)db, SEEK_SET);"
                      " for (int i = 0; i < N; i++) y[i] = x[i] * x[i];"
                      " fwrite(y, 4, N, m); fclose(m); }"),
}
HIDDEN = {name: REOPENS["mprotect"].replace("#include <dlfcn.h>", "#include <dlfcn.h>\n#define CAT(a, b) a##b")
          .replace(_OPENS["mprotect"], line) for name, line in _HIDDEN.items()}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_hidden_calls_that_reopen_device_memory_are_refused_as_they_run(engine, name):
    from validators.anticheat import protection_tampering

    assert protection_tampering(HIDDEN[name]) == ""  # the source reading does not see it
    res = engine.check(SQUARE, Program(source=HIDDEN[name]), thorough=False)
    assert res.status == Status.REJECTED, (res.status, res.reason)
    assert ("called mprotect" in res.reason or "called syscall(SYS_mprotect)" in res.reason
            or "/mem: it reads and writes" in res.reason), res.reason


def test_a_system_call_in_inline_assembly_is_refused():
    """The cpu backend cannot run host assembly (`needs_gpu`, so it never runs there); the rule
    still names it, so the refusal does not hang on that."""
    from validators.anticheat import protection_tampering

    line = ('long r; asm volatile("syscall" : "=a"(r) : "a"(10L), "D"(p), "S"(n), "d"(3L)'
            ' : "rcx", "r11", "memory");')
    assert "inline assembly" in protection_tampering("void f(void* p, long n) { " + line + " }")
    split = 'asm volatile("mov $10, %%rax\\n\\tsyscall" ::: "rax");'
    assert "inline assembly" in protection_tampering(split)
    ptx = 'asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));'
    assert protection_tampering("__global__ void k() { unsigned l; " + ptx + " }") == ""


def test_harmless_system_calls_pass(engine):
    """The rule refuses what reaches mprotect, not every system call."""
    source = HONEST["host_reads_and_writes_device_memory"].replace(
        "#include <cstdio>", "#include <cstdio>\n#include <sys/syscall.h>\n#include <unistd.h>").replace(
        "int main() {", "int main() { if (syscall(SYS_gettid) <= 0) return 3;")
    res = engine.check(SQUARE, Program(source=source), thorough=False)
    assert res.status == Status.PASSED, (res.status, res.reason)


def test_the_words_in_a_comment_or_a_string_are_not_a_call(engine):
    source = HONEST["host_reads_and_writes_device_memory"].replace(
        "int main() {", '// no mprotect( here, nor cudashim::\nstatic const char* note = "dlsym(";\n'
        "int main() { (void)note;")
    res = engine.check(SQUARE, Program(source=source), thorough=False)
    assert res.status == Status.PASSED, (res.status, res.reason)
