"""Issue 21, class 1 on the `cuda` backend: the kernel-work run through an interposed runtime.

SIMULATION: there is no GPU here. A stand-in `libcudart.so.13` (built below with g++ against
the toolkit's own `cuda_runtime_api.h`, so its functions have the real signatures) keeps
"device" memory in host memory and runs each "kernel" (a host function) when it is launched
through `cudaLaunchKernel` / `__cudaLaunchKernel`. Programs are plain C++ linked against it, and
the real interposer (`validators/backends/cuda_interposer.cpp`, built as the backend builds it)
is preloaded in front of it, as it is in front of the toolkit's runtime on a GPU machine. What
this cannot show: timing on a real device, and the real runtime's own behaviour (asynchrony,
cudaPointerGetAttributes on driver memory); a GPU run of the same programs is the check for that.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from schemas import CompileInfo, InputCase, Program, Reference, Status, Task, TensorSpec
from validators import kernel_work
from validators.backends.base import Executable, RunOutcome
from validators.backends.cuda import CudaBackend, interposer_library, runtime_linkage
from validators.engine import upload_hash

CUDA_INCLUDE = Path(os.environ.get("CUDA_HOME", "/usr/local/cuda")) / "include"
pytestmark = pytest.mark.skipif(
    shutil.which("g++") is None or not (CUDA_INCLUDE / "cuda_runtime_api.h").is_file(),
    reason="needs g++ and the CUDA toolkit's headers")

N = 1024

FAKE_RUNTIME = r"""
#include <cuda_runtime_api.h>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
// Device, managed and pinned memory are host memory here; kernels are host functions.
static std::set<void*> dev, managed, pinned;
static std::mutex mu;
extern "C" {
cudaError_t cudaMalloc(void** p, size_t n) { *p = calloc(1, n); std::lock_guard<std::mutex> l(mu); dev.insert(*p); return cudaSuccess; }
cudaError_t cudaMallocManaged(void** p, size_t n, unsigned) { *p = calloc(1, n); std::lock_guard<std::mutex> l(mu); managed.insert(*p); return cudaSuccess; }
cudaError_t cudaMallocHost(void** p, size_t n) { *p = calloc(1, n); std::lock_guard<std::mutex> l(mu); pinned.insert(*p); return cudaSuccess; }
cudaError_t cudaHostAlloc(void** p, size_t n, unsigned) { return cudaMallocHost(p, n); }
cudaError_t cudaHostRegister(void*, size_t, unsigned) { return cudaSuccess; }
cudaError_t cudaHostUnregister(void*) { return cudaSuccess; }
cudaError_t cudaFree(void* p) { std::lock_guard<std::mutex> l(mu); dev.erase(p); managed.erase(p); free(p); return cudaSuccess; }
cudaError_t cudaFreeHost(void* p) { std::lock_guard<std::mutex> l(mu); pinned.erase(p); free(p); return cudaSuccess; }
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* a, const void* p) {
  std::lock_guard<std::mutex> l(mu);
  void* q = const_cast<void*>(p);
  memset(a, 0, sizeof *a);
  a->type = dev.count(q) ? cudaMemoryTypeDevice : managed.count(q) ? cudaMemoryTypeManaged
            : pinned.count(q) ? cudaMemoryTypeHost : cudaMemoryTypeUnregistered;
  a->devicePointer = a->hostPointer = q;
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind) { memmove(d, s, n); return cudaSuccess; }
cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { return cudaMemcpy(d, s, n, k); }
cudaError_t cudaMemcpy2D(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind) {
  for (size_t r = 0; r < h; r++) memmove((char*)d + r * dp, (const char*)s + r * sp, w);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t) {
  return cudaMemcpy2D(d, dp, s, sp, w, h, k);
}
cudaError_t cudaMemcpyToSymbol(const void* y, const void* s, size_t n, size_t o, cudaMemcpyKind) { memmove((char*)y + o, s, n); return cudaSuccess; }
cudaError_t cudaMemcpyFromSymbol(void* d, const void* y, size_t n, size_t o, cudaMemcpyKind) { memmove(d, (const char*)y + o, n); return cudaSuccess; }
cudaError_t cudaStreamCreate(cudaStream_t* s) { *s = (cudaStream_t)calloc(1, 64); return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
cudaError_t cudaLaunchKernel(const void* f, dim3, dim3, void** args, size_t, cudaStream_t) {
  ((void (*)(void**))f)(args);
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t k, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st) {
  return cudaLaunchKernel((const void*)k, g, b, a, s, st);
}
}
"""

PRELUDE = r"""
#include <cuda_runtime_api.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define N 1024
extern "C" cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t, cudaStream_t);
static float x[N], y[N];
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) exit(1); fclose(f); }
static void save() { FILE* f = fopen("data/y.bin", "wb"); fwrite(y, 4, N, f); fclose(f); }
static void dump(const char* name, const void* p, size_t n) { FILE* f = fopen(name, "wb"); fwrite(p, 1, n, f); fclose(f); }
// "Kernels": host functions with the launch's argument array.
static void sq(void** a) { const float* s = *(const float**)a[0]; float* d = *(float**)a[1];
  for (int i = 0; i < N; i++) d[i] = s[i] * s[i]; }
static void snap(void** a) { memcpy(*(void**)a[1], *(const void**)a[0], N * 4); }
static void launch(void (*k)(void**), void** args) { cudaLaunchKernel((const void*)k, dim3(4), dim3(256), args, 0, 0); }
"""

# Every path the interposer wraps, each leaving what the device (or the host) saw in a file.
PROBE = PRELUDE + r"""
static float sym[N];  // the stand-in's "symbol" is the variable itself
int main() {
  FILE* e = fopen("env.txt", "w");
  fprintf(e, "%d %d\n", getenv("CUDASHIM_KERNEL_INPUTS") != nullptr, fopen(".ckd-kernel-inputs", "rb") != nullptr);
  fclose(e);
  load();
  float *d1, *d2, *d3; cudaMalloc((void**)&d1, N * 4); cudaMalloc((void**)&d2, N * 4); cudaMalloc((void**)&d3, N * 4);
  cudaMemcpy(d1, x, N * 4, cudaMemcpyHostToDevice); dump("whole.bin", d1, N * 4);
  cudaStream_t s; cudaStreamCreate(&s);
  for (int c = 0; c < N; c += 128) cudaMemcpyAsync(d2 + c, x + c, 512, cudaMemcpyHostToDevice, s);
  cudaStreamSynchronize(s); dump("chunked.bin", d2, N * 4);
  static float staging[N / 64][80]; memset(staging, 0, sizeof staging);
  for (int r = 0; r < N / 64; r++) memcpy(staging[r], x + r * 64, 256);
  cudaMemcpy2D(d3, 256, staging, 320, 256, N / 64, cudaMemcpyDefault); dump("padded.bin", d3, N * 4);
  static float back[N]; cudaMemcpy(back, d1, N * 4, cudaMemcpyDeviceToHost); dump("back.bin", back, N * 4);
  cudaMemcpyToSymbol(sym, x, N * 4); dump("symbol.bin", sym, N * 4);
  static float sback[N]; cudaMemcpyFromSymbol(sback, sym, N * 4); dump("symbol_back.bin", sback, N * 4);
  float *m, *shot; cudaMallocManaged((void**)&m, N * 4, 1); shot = (float*)calloc(N, 4);
  memcpy(m, x, N * 4); void* args[] = {&m, &shot}; launch(snap, args);
  dump("managed_kernel.bin", shot, N * 4); dump("managed_host.bin", m, N * 4);
  float *p, *shot2; cudaMallocHost((void**)&p, N * 4); shot2 = (float*)calloc(N, 4);
  memcpy(p, x, N * 4); void* args2[] = {&p, &shot2};
  __cudaLaunchKernel((cudaKernel_t)snap, dim3(1), dim3(1), args2, 0, 0);  // what <<<>>> calls (CUDA 13)
  dump("pinned_kernel.bin", shot2, N * 4); dump("pinned_host.bin", p, N * 4);
  return 0;
}
"""

HONEST = PRELUDE + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); void* args[] = {&da, &db}; launch(sq, args);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
"""

CHEATS = {
    # The host's answer plus a kernel-written zero computed from the uploaded input.
    "plus_a_kernel_zero": PRELUDE + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); void* args[] = {&da, &db}; launch(sq, args);
  static float k[N]; cudaMemcpy(k, db, N * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i] + 0.0f * k[i]; save(); }
""",
    # The host's answer uploaded in pieces through a stream, a kernel only copies it.
    "answer_uploaded_in_pieces": PRELUDE + r"""
static void cp(void** a) { memcpy(*(void**)a[1], *(const void**)a[0], N * 4); }
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  static float h[N]; for (int i = 0; i < N; i++) h[i] = x[i] * x[i];
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  for (int c = 0; c < N; c += 64) cudaMemcpyAsync(da + c, h + c, 256, cudaMemcpyHostToDevice, 0);
  void* args[] = {&da, &db}; launch(cp, args); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    # Uploads into managed memory and computes on it with the host; a kernel runs first, on
    # nothing (passed on an H100 before the fix: the no-launch run did not reject it).
    "reads_managed_memory_it_copied_into": PRELUDE + r"""
static void fill0(void** a) { memset(*(void**)a[0], 0, N * 4); }
int main() { load(); float* db; cudaMalloc((void**)&db, N * 4); void* args[] = {&db}; launch(fill0, args);
  cudaDeviceSynchronize(); float* m; cudaMallocManaged((void**)&m, N * 4, 1);
  cudaMemcpy(m, x, N * 4, cudaMemcpyHostToDevice);
  for (int i = 0; i < N; i++) y[i] = m[i] * m[i]; save(); }
""",
    # The inputs go up and come back through a kernel: the host computes on the copy.
    "reads_the_inputs_back": PRELUDE + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); void* args[] = {&da, &db}; launch(snap, args);
  static float back[N]; cudaMemcpy(back, db, N * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = back[i] * back[i]; save(); }
""",
}

SQUARE = Task(
    name="square_cuda_kw", description="y = x * x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": N}, cases=[InputCase(name="a", seed=21)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * inputs['x']}\n"),
)


def _gxx(*args: str | Path, cwd: Path) -> None:
    out = subprocess.run(["g++", "-O1", "-std=c++17", f"-I{CUDA_INCLUDE}", *map(str, args)],
                         cwd=cwd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Path:
    """A folder holding the stand-in libcudart.so.13 (programs are built beside it)."""
    d = tmp_path_factory.mktemp("fake_cudart")
    (d / "fake.cpp").write_text(FAKE_RUNTIME)
    _gxx("-shared", "-fPIC", "-Wl,-soname,libcudart.so.13", "-Wl,-Bsymbolic", "-o", "libcudart.so.13", "fake.cpp", cwd=d)
    return d


@pytest.fixture(scope="module")
def interposer() -> Path:
    path, why = interposer_library()
    assert path is not None, why
    return path


def _program(runtime: Path, source: str, name: str, *, static: bool = False,
             libs: tuple[str, ...] = ()) -> Path:
    """A program linked against the stand-in (dynamically, as nvcc -cudart shared links the
    toolkit's), or with it compiled in (as a static runtime is); `libs`: other stand-in
    libraries in `runtime` it links too."""
    d = runtime / name
    d.mkdir(exist_ok=True)
    (d / "prog.cpp").write_text(source)
    if static:
        _gxx("-o", "a.out", "prog.cpp", runtime / "fake.cpp", cwd=d)
    else:
        for lib in ("libcudart.so.13", *libs):
            shutil.copy(runtime / lib, d / lib)
        _gxx("-o", "a.out", "prog.cpp", "-L.", *(f"-l:{lib}" for lib in ("libcudart.so.13", *libs)),
             "-Wl,-rpath,$ORIGIN", cwd=d)
    return d / "a.out"


def _draws() -> tuple[np.ndarray, np.ndarray, kernel_work.Plan]:
    rng = np.random.default_rng(5)
    a = rng.standard_normal(N).astype(np.float32)
    b = rng.standard_normal(N).astype(np.float32)
    return a, b, kernel_work.Plan(["x"], {"x": b})


def test_interposed_runtime_gives_the_device_the_second_draw(runtime, interposer, tmp_path):
    """Whole, chunked (async) and padded 2D (cudaMemcpyDefault) uploads and a symbol reach the
    "device" as B; read-backs give the host A; managed and pinned memory hold B only while a
    kernel runs; the logs have the cpu runtime's format; settings and the inputs file are gone
    before main()."""
    exe = _program(runtime, PROBE, "probe")
    a, b, plan = _draws()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(a.tobytes())
    (tmp_path / kernel_work.INPUTS_FILE).write_bytes(kernel_work.inputs_file(plan, {"x": a}))
    env = {**os.environ, "LD_PRELOAD": str(interposer),
           **CudaBackend().kernel_inputs_env(str(tmp_path / kernel_work.INPUTS_FILE),
                                             str(tmp_path / kernel_work.LOG_FILE)),
           **CudaBackend().upload_log_env(), "CUDASHIM_UPLOAD_LOG": str(tmp_path / "uploads.log")}
    out = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr

    def seen(name: str) -> np.ndarray:
        return np.fromfile(tmp_path / name, dtype=np.float32)

    for name in ("whole", "chunked", "padded", "symbol", "managed_kernel", "pinned_kernel"):
        assert np.array_equal(seen(f"{name}.bin"), b), name
    for name in ("back", "symbol_back", "managed_host", "pinned_host"):
        assert np.array_equal(seen(f"{name}.bin"), a), name
    assert (tmp_path / "env.txt").read_text().split() == ["0", "0"]  # nothing readable in main
    assert not (tmp_path / kernel_work.INPUTS_FILE).exists()
    log = (tmp_path / kernel_work.LOG_FILE).read_text()
    ranges, returned = kernel_work.parse_log(log, plan)
    _, share = kernel_work.device_inputs({"x": a}, plan, ranges)
    assert share["x"] == 1.0 and returned >= 4 * N * 2, log
    assert all(ln.split()[0] in ("up", "down") for ln in log.splitlines())
    hashes = {tuple(map(int, ln.split())) for ln in (tmp_path / "uploads.log").read_text().splitlines()}
    assert upload_hash(a.tobytes()) in hashes


def test_no_launch_run_skips_the_kernels_and_notes_uploads(runtime, interposer, tmp_path):
    exe = _program(runtime, PROBE, "probe")
    a, _, _ = _draws()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(a.tobytes())
    env = {**os.environ, "LD_PRELOAD": str(interposer), **CudaBackend().no_launch_env(),
           "CUDASHIM_UPLOAD_LOG": str(tmp_path / "uploads.log")}
    out = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert not np.fromfile(tmp_path / "managed_kernel.bin", dtype=np.float32).any()
    assert np.array_equal(np.fromfile(tmp_path / "whole.bin", dtype=np.float32), a)
    lines = (tmp_path / "uploads.log").read_text().splitlines()
    assert upload_hash(a.tobytes()) in {tuple(map(int, ln.split())) for ln in lines}


def test_static_runtime_is_reported_not_interposable(runtime):
    assert runtime_linkage(_program(runtime, HONEST, "dyn")) == ""
    why = runtime_linkage(_program(runtime, HONEST, "static", static=True))
    assert "does not link the CUDA runtime dynamically" in why


class FakeGpuBackend(CudaBackend):
    """The cuda backend with g++ and the stand-in runtime in place of nvcc and a GPU."""

    def __init__(self, runtime: Path, *, static: bool = False) -> None:
        super().__init__(gpu_check=False)
        self.runtime, self.static = runtime, static

    def build(self, program: Program, defines: dict[str, int], *, variant: str = "plain") -> Executable:
        name = f"engine-{program.digest()[:16]}-{int(self.static)}"
        path = _program(self.runtime, program.source, name, static=self.static)
        return Executable(path=path, compile=CompileInfo(compiler="g++", command=["g++"], ok=True),
                          backend=self.name, variant=variant)


@pytest.fixture(scope="module")
def engine(runtime):
    from validators.engine import Engine

    return Engine(FakeGpuBackend(runtime))


def test_honest_program_passes_with_the_kernel_work_run(engine):
    res = engine.check(SQUARE, Program(source=HONEST, filename="prog.cu"))
    assert res.status == Status.PASSED, (res.status, res.reason)
    assert res.kernel_check.startswith("outputs depend on the kernels"), res.kernel_check
    assert "the device saw another draw of x (100%)" in res.kernel_check


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_host_computed_outputs_are_rejected_on_cuda(engine, name):
    res = engine.check(SQUARE, Program(source=CHEATS[name], filename="prog.cu"))
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)
    assert "outputs do not depend on the kernels" in res.reason


def test_static_runtime_makes_no_verdict_either_way(runtime):
    from validators.engine import NO_KERNEL_CHECK, Engine

    engine = Engine(FakeGpuBackend(runtime, static=True))
    for source in (HONEST, CHEATS["plus_a_kernel_zero"]):
        res = engine.check(SQUARE, Program(source=source, filename="prog.cu"))
        assert res.status == Status.ERROR, (res.status, res.reason)
        assert NO_KERNEL_CHECK in res.reason and "dynamically" in res.reason


# Issue 22, finding 5: the speed term times the kernels alone. This program sleeps in host code
# before its kernels (a second) and its two "kernels" sleep 50 ms each.
SLEEPY = PRELUDE + r"""
#include <unistd.h>
static void slow_sq(void** a) { usleep(50000); sq(a); }
int main() { load(); usleep(1000000); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); void* args[] = {&da, &db};
  launch(slow_sq, args); launch(slow_sq, args);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
"""


def test_timing_counts_the_kernels_not_the_host(runtime, interposer, tmp_path):
    exe = _program(runtime, SLEEPY, "sleepy")
    a, _, _ = _draws()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(a.tobytes())
    log = tmp_path / "timing.log"
    env = {**os.environ, "LD_PRELOAD": str(interposer), **CudaBackend().timing_env(str(log))}
    out = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seconds, launches = log.read_text().split()
    assert int(launches) == 2
    assert 0.1 <= float(seconds) < 0.9, seconds  # the two launches, never the host's second


def test_run_split_puts_the_host_sleep_in_host_time_and_counts_calls(runtime, interposer, tmp_path):
    """Issue 27, target 3: the run's split (`validators run`), in the cpu runtime's format."""
    from validators.run_timing import parse

    exe = _program(runtime, SLEEPY, "sleepy_split")
    a, _, _ = _draws()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(a.tobytes())
    log = tmp_path / "split.log"
    env = {**os.environ, "LD_PRELOAD": str(interposer), **CudaBackend().run_timing_env(str(log))}
    spawned = time.monotonic()
    out = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    returned = time.monotonic()
    assert out.returncode == 0, out.stderr
    report = parse(log.read_text())
    assert report is not None, log.read_text()
    assert (report.launches, report.copies) == (2, 2)
    assert spawned <= report.start <= report.end <= returned  # the validator's clock
    host = report.end - report.start - report.kernels_s - report.copies_s
    assert host > report.kernels_s > 0  # the host's second against the kernels' 2 x 50 ms


def test_validators_run_reports_the_interposed_split(runtime, tmp_path):
    """`run_program` (`validators run`) preloads the interposer on cuda and reads its split."""
    from validators.engine import run_program

    a, _, _ = _draws()
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(a.tobytes())
    run = run_program(Program(source=SLEEPY, filename="prog.cu"), FakeGpuBackend(runtime),
                      workdir_files=[tmp_path / "data"])
    assert run.status == Status.PASSED, (run.status, run.reason)
    t = run.timing
    assert t is not None and (t.launches, t.copy_calls) == (2, 2)
    assert t.host_s > t.kernels_s > 0


def test_kernel_seconds_through_the_engine_and_only_for_right_outputs(engine):
    fast = engine.kernel_seconds(SQUARE, Program(source=HONEST, filename="prog.cu"), repeats=2)
    slow = engine.kernel_seconds(SQUARE, Program(source=SLEEPY, filename="prog.cu"), repeats=2)
    assert fast is not None and slow is not None and slow >= 0.1 and fast < slow / 2, (fast, slow)
    # Outputs that do not match in the timed runs earn no time (and so no speed).
    wrong = HONEST.replace("d[i] = s[i] * s[i]", "d[i] = s[i]")
    if wrong != HONEST:
        assert engine.kernel_seconds(SQUARE, Program(source=wrong, filename="prog.cu"), repeats=1) is None


SANITIZER_STANDIN = r"""#!/bin/sh
# compute-sanitizer's stand-in: --tool T --error-exitcode N TARGET ARGS. Like the real tool it
# loads its target with its own injection, not the caller's LD_PRELOAD.
shift 4
unset LD_PRELOAD
"$@"; rc=$?
echo "========= ERROR SUMMARY: 0 errors"
exit $rc
"""


class FakeSanitizedBackend(FakeGpuBackend):
    """Thorough checks with the sanitizer builds, as on a GPU with compute-sanitizer."""

    def variants(self, *, thorough: bool = True) -> list[str]:
        return ["plain", "memcheck", "racecheck"] if thorough else ["plain"]


def test_thorough_checks_make_the_kernel_work_run_without_the_sanitizer(runtime, tmp_path,
                                                                        monkeypatch):
    """On an H100 every built-in task was rejected as host-computed when checked thoroughly:
    the kernel-work run was made with the last build's command, compute-sanitizer's, whose
    target the interposed runtime never sees. It is made with the plain build."""
    from validators.engine import Engine

    tools = tmp_path / "tools"
    tools.mkdir()
    tools.chmod(0o755)
    (tools / "compute-sanitizer").write_text(SANITIZER_STANDIN)
    (tools / "compute-sanitizer").chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    backend = FakeSanitizedBackend(runtime)
    engine = Engine(backend)
    res = engine.check(SQUARE, Program(source=HONEST, filename="prog.cu"), thorough=True)
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)
    assert "the device saw another draw of x (100%)" in res.kernel_check
    res = engine.check(SQUARE, Program(source=CHEATS["plus_a_kernel_zero"], filename="prog.cu"),
                       thorough=True)
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)


# The red-team audit's p5 (cuda) and p6: the interposer's exit status and words, and its timing
# file, are things a program can produce too.
FORGE_97 = HONEST.replace("save(); }", """save();
  fprintf(stderr, "cuda_interposer: malformed kernel-input file .ckd-kernel-inputs\\n");
  fflush(stderr); _exit(97); }""").replace("#define N 1024", "#include <unistd.h>\n#define N 1024")


def test_the_interposers_failure_is_ours_only_with_its_tag(runtime, interposer, engine, tmp_path):
    """A real failure of the interposer (a malformed inputs file, in its constructor) is an
    `error`; a program that prints the same words and exits 97 gets a verdict (it used to be an
    `error`: no verdict, and a wrong program escaped its zero)."""
    be = engine.backend
    exe = _program(runtime, HONEST, "honest_fatal")
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "x.bin").write_bytes(_draws()[0].tobytes())
    (tmp_path / kernel_work.INPUTS_FILE).write_bytes(b"not an inputs file")
    env = {**os.environ, "LD_PRELOAD": str(interposer),
           **be.kernel_inputs_env(str(tmp_path / kernel_work.INPUTS_FILE),
                                  str(tmp_path / kernel_work.LOG_FILE))}
    out = subprocess.run([str(exe)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    outcome = RunOutcome(exit_code=out.returncode, stderr=out.stderr)
    v = be.classify(Executable(path=exe, compile=CompileInfo(ok=True), backend="cuda"), outcome)
    assert v.status == Status.ERROR and "malformed kernel-input file" in v.reason, (v, out.stderr)
    assert be._fatal_tag not in v.reason
    res = engine.check(SQUARE, Program(source=FORGE_97, filename="prog.cu"), thorough=False)
    assert res.status == Status.RUNTIME_ERROR and res.error_origin is None, (res.status, res.reason)


# After its last launch the program writes the timing file itself: in place (the interposer's
# own file, emptied and rewritten at exit) or in a new file where the interposer's was.
FORGE_TIMING = HONEST.replace("save(); }", """save();
  char p[32]; snprintf(p, sizeof p, ".ckd-kernel-%s", "timing"); @HOW@
  FILE* t = fopen(p, "w"); if (t) { fputs("0.000000001 1\\n", t); fclose(t); } }""").replace(
    "#define N 1024", "#include <unistd.h>\n#define N 1024")


def test_a_forged_timing_file_earns_no_speed(engine):
    rewritten = engine.kernel_seconds(
        SQUARE, Program(source=FORGE_TIMING.replace("@HOW@", ""), filename="prog.cu"), repeats=1)
    assert rewritten is not None and rewritten != 1e-9  # the interposer's own figure
    replaced = engine.kernel_seconds(
        SQUARE, Program(source=FORGE_TIMING.replace("@HOW@", "unlink(p);"), filename="prog.cu"),
        repeats=1)
    assert replaced is None
