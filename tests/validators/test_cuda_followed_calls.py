"""The cuda backend's kernel checks on programs that copy or launch by other ways than
cudaMemcpy and <<<>>>: 3D and CUDA-array copies, stream capture and graphs, cuBLAS's own copies
and kernels, and calls the interposed runtime does not follow.

SIMULATION, as in test_cuda_kernel_work.py (whose stand-in runtime this extends): "device"
memory is host memory, kernels are host functions, and a stand-in libcublas computes inside
itself, past the runtime, as the real one launches its kernels. The stand-in's capture records
copies and launches and refuses to synchronise a capturing stream, as the real runtime does.
Before these fixes an honest program that uploaded its inputs with cudaMemcpy3D or into a CUDA
array was `rejected` on a GPU ("nothing the device received changed"), and a cuBLAS program got
no kernel check at all.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas import CompileInfo, Program, Status
from tests.validators.test_adversarial_kernel_work import POLY
from tests.validators.test_cuda_kernel_work import (  # noqa: F401
    FAKE_RUNTIME,
    PRELUDE,
    SQUARE,
    FakeGpuBackend,
    _gxx,
    _program,
    pytestmark,
)
from validators.backends.base import Executable
from validators.backends.cuda import library_compute_calls, unfollowed

EXTRA_RUNTIME = r"""
#include <vector>
struct cudaArray { unsigned char* data; size_t bytes; cudaChannelFormatDesc desc; };
struct Op { int kind; void* d; const void* s; size_t n; const void* f; void* a0; void* a1; };
struct Graph { std::vector<Op> ops; };
static cudaStream_t capturing_stream;
static bool capturing, broken;
static std::vector<Op> recorded;
static std::vector<std::pair<const void*, std::vector<size_t>>> params;
extern "C" {
void* fakeArrayData(cudaArray_t a) { return a->data; }
// What the compiler records for each kernel: its parameters' sizes, here told by the program.
void fakeParams(const void* f, size_t n, const size_t* sizes) { params.push_back({f, std::vector<size_t>(sizes, sizes + n)}); }
cudaError_t cudaFuncGetParamInfo(const void* f, size_t i, size_t* off, size_t* size) {
  for (auto& p : params)
    if (p.first == f && i < p.second.size()) {
      *off = 0; for (size_t k = 0; k < i; k++) *off += p.second[k];
      *size = p.second[i]; return cudaSuccess;
    }
  return cudaErrorInvalidValue;
}
cudaError_t cudaMallocArray(cudaArray_t* a, const cudaChannelFormatDesc* d, size_t w, size_t h, unsigned) {
  *a = new cudaArray{(unsigned char*)calloc(w * (h ? h : 1), (d->x + d->y + d->z + d->w) / 8),
                     w * (h ? h : 1) * ((d->x + d->y + d->z + d->w) / 8), *d};
  return cudaSuccess;
}
cudaError_t cudaArrayGetInfo(cudaChannelFormatDesc* d, cudaExtent* e, unsigned* f, cudaArray_t a) {
  *d = a->desc; if (e) *e = cudaExtent{0, 0, 0}; if (f) *f = 0; return cudaSuccess;
}
cudaError_t cudaMemcpy2DToArray(cudaArray_t a, size_t wo, size_t ho, const void* s, size_t sp, size_t w, size_t h,
                                cudaMemcpyKind) {
  for (size_t r = 0; r < h; r++) memmove(a->data + (ho + r) * w + wo, (const char*)s + r * sp, w);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DFromArray(void* d, size_t dp, cudaArray_const_t a, size_t wo, size_t ho, size_t w, size_t h,
                                  cudaMemcpyKind) {
  for (size_t r = 0; r < h; r++) memmove((char*)d + r * dp, a->data + (ho + r) * w + wo, w);
  return cudaSuccess;
}
// Pointer to pointer only (the programs below), with the real struct's layout and positions.
cudaError_t cudaMemcpy3D(const cudaMemcpy3DParms* p) {
  for (size_t z = 0; z < p->extent.depth; z++)
    for (size_t y = 0; y < p->extent.height; y++) {
      size_t so = (p->srcPos.z + z) * p->srcPtr.pitch * p->srcPtr.ysize + (p->srcPos.y + y) * p->srcPtr.pitch + p->srcPos.x;
      size_t d_o = (p->dstPos.z + z) * p->dstPtr.pitch * p->dstPtr.ysize + (p->dstPos.y + y) * p->dstPtr.pitch + p->dstPos.x;
      memmove((char*)p->dstPtr.ptr + d_o, (const char*)p->srcPtr.ptr + so, p->extent.width);
    }
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t s, cudaStreamCaptureMode) {
  capturing = true; broken = false; capturing_stream = s; recorded.clear(); return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t* g) {
  capturing = false;
  if (broken) { *g = nullptr; return cudaErrorStreamCaptureInvalidated; }
  *g = (cudaGraph_t) new Graph{recorded}; return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t* x, cudaGraph_t g, unsigned long long) {
  *x = (cudaGraphExec_t) new Graph(*(Graph*)g); return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t x, cudaStream_t) {
  for (const Op& o : ((Graph*)x)->ops) {
    if (o.kind == 0) memmove(o.d, o.s, o.n);
    else { void* a[] = {(void*)&o.a0, (void*)&o.a1}; ((void (*)(void**))o.f)(a); }
  }
  return cudaSuccess;
}
cudaError_t cudaMemcpyBatchAsync(void* const*, const void* const*, const size_t*, size_t, cudaMemcpyAttributes*,
                                 size_t*, size_t, cudaStream_t) {
  return cudaSuccess;
}
}
// Recorded while capturing; synchronising a capturing stream ends the capture with an error.
static bool record_copy(void* d, const void* s, size_t n, cudaStream_t st) {
  if (!capturing || st != capturing_stream) return false;
  recorded.push_back(Op{0, d, s, n, nullptr, nullptr, nullptr}); return true;
}
static bool record_launch(const void* f, void** a, cudaStream_t st) {
  if (!capturing || st != capturing_stream) return false;
  recorded.push_back(Op{1, nullptr, nullptr, 0, f, *(void**)a[0], *(void**)a[1]}); return true;
}
"""

# The base stand-in's copy, launch and synchronisation entry points, capture-aware.
CAPTURE_AWARE = {
    "cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t) { return cudaMemcpy(d, s, n, k); }":
    "cudaError_t cudaMemcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st) { if (record_copy(d, s, n, st)) return cudaSuccess; return cudaMemcpy(d, s, n, k); }",
    "cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }":
    "cudaError_t cudaStreamSynchronize(cudaStream_t s) { if (capturing && s == capturing_stream) { broken = true; return cudaErrorStreamCaptureUnsupported; } return cudaSuccess; }",
    "cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }":
    "cudaError_t cudaDeviceSynchronize() { if (capturing) { broken = true; return cudaErrorStreamCaptureUnsupported; } return cudaSuccess; }",
    "cudaError_t cudaLaunchKernel(const void* f, dim3, dim3, void** args, size_t, cudaStream_t) {":
    "cudaError_t cudaLaunchKernel(const void* f, dim3, dim3, void** args, size_t, cudaStream_t st) { if (record_launch(f, args, st)) return cudaSuccess;",
}

FAKE_CUBLAS = r"""
#include <cstring>
extern "C" {
typedef int cublasStatus_t;
// The library's own copies and a computation made inside it (no cudaLaunchKernel).
cublasStatus_t cublasSetMatrix(int r, int c, int e, const void* a, int lda, void* b, int ldb) {
  for (int j = 0; j < c; j++) memcpy((char*)b + (size_t)j * ldb * e, (const char*)a + (size_t)j * lda * e, (size_t)r * e);
  return 0;
}
static void strided(int n, int e, const void* x, int incx, void* y, int incy) {
  for (int i = 0; i < n; i++) memcpy((char*)y + (size_t)i * incy * e, (const char*)x + (size_t)i * incx * e, e);
}
cublasStatus_t cublasSetVector(int n, int e, const void* x, int incx, void* y, int incy) {
  strided(n, e, x, incx, y, incy); return 0;
}
cublasStatus_t cublasGetVector(int n, int e, const void* x, int incx, void* y, int incy) {
  strided(n, e, x, incx, y, incy); return 0;
}
cublasStatus_t cublasFakeSquare(const float* x, float* y, int n) { for (int i = 0; i < n; i++) y[i] = x[i] * x[i]; return 0; }
cublasStatus_t cublasFakeSquareD(const double* x, float* y, int n) { for (int i = 0; i < n; i++) y[i] = (float)(x[i] * x[i]); return 0; }
}
"""

CUBLAS_DECLS = r"""
extern "C" {
int cublasSetMatrix(int, int, int, const void*, int, void*, int);
int cublasSetVector(int, int, const void*, int, void*, int);
int cublasGetVector(int, int, const void*, int, void*, int);
int cublasFakeSquare(const float*, float*, int);
int cublasFakeSquareD(const double*, float*, int);
}
"""

HONEST = {
    # Inputs up and results back with cudaMemcpy3D (a pitched host buffer, positions set).
    "memcpy3d": PRELUDE + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  static float padded[16][80]; for (int r = 0; r < 16; r++) memcpy(&padded[r][8], x + r * 64, 256);
  cudaMemcpy3DParms p; memset(&p, 0, sizeof p);
  p.srcPtr.ptr = padded; p.srcPtr.pitch = 320; p.srcPtr.xsize = 80; p.srcPtr.ysize = 16; p.srcPos.x = 32;
  p.dstPtr.ptr = da; p.dstPtr.pitch = 256; p.dstPtr.xsize = 64; p.dstPtr.ysize = 16;
  p.extent.width = 256; p.extent.height = 16; p.extent.depth = 1; p.kind = cudaMemcpyHostToDevice;
  cudaMemcpy3D(&p);
  void* args[] = {&da, &db}; launch(sq, args);
  cudaMemcpy3DParms q; memset(&q, 0, sizeof q);
  q.srcPtr.ptr = db; q.srcPtr.pitch = 256; q.srcPtr.ysize = 16; q.dstPtr.ptr = y; q.dstPtr.pitch = 256;
  q.dstPtr.ysize = 16; q.extent.width = 256; q.extent.height = 16; q.extent.depth = 1; q.kind = cudaMemcpyDeviceToHost;
  cudaMemcpy3D(&q); save(); }
""",
    # A CUDA array (a texture's storage) filled by cudaMemcpy2DToArray, read by the kernel.
    "cuda_array": PRELUDE + r"""
extern "C" void* fakeArrayData(cudaArray_t);
int main() { load(); cudaChannelFormatDesc d = {32, 0, 0, 0, cudaChannelFormatKindFloat};
  cudaArray_t arr; cudaMallocArray(&arr, &d, 64, 16, 0);
  cudaMemcpy2DToArray(arr, 0, 0, x, 256, 256, 16, cudaMemcpyHostToDevice);
  float* src = (float*)fakeArrayData(arr); float* db; cudaMalloc((void**)&db, N * 4);
  void* args[] = {&src, &db}; launch(sq, args); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    # Upload, kernel and read-back captured into a graph, which then runs.
    "graph": PRELUDE + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  cudaStream_t s; cudaStreamCreate(&s); cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(da, x, N * 4, cudaMemcpyHostToDevice, s);
  void* args[] = {&da, &db}; cudaLaunchKernel((const void*)sq, dim3(4), dim3(256), args, 0, s);
  cudaMemcpyAsync(y, db, N * 4, cudaMemcpyDeviceToHost, s);
  cudaGraph_t g; if (cudaStreamEndCapture(s, &g) != cudaSuccess) return 3;
  cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0); cudaGraphLaunch(e, s); cudaStreamSynchronize(s); save(); }
""",
    # cuBLAS: a padded matrix up with cublasSetMatrix, the library computes, a vector comes back.
    "cublas": PRELUDE + CUBLAS_DECLS + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  static float padded[16][80]; for (int c = 0; c < 16; c++) memcpy(padded[c], x + c * 64, 256);
  cublasSetMatrix(64, 16, 4, padded, 80, da, 64); cublasFakeSquare(da, db, N);
  cublasGetVector(N, 4, db, 1, y, 1); save(); }
""",
}

# cuBLAS on inputs the host converted to double first: no run of their bytes reaches the device,
# so the no-launch run decides, with the library's compute calls made no-ops there by the stubs.
CUBLAS_ON_CONVERTED_INPUTS = PRELUDE + CUBLAS_DECLS + r"""
int main() { load(); static double xd[N]; for (int i = 0; i < N; i++) xd[i] = x[i];
  double* da; float* db; cudaMalloc((void**)&da, N * 8); cudaMalloc((void**)&db, N * 4);
  cublasSetVector(N, 8, xd, 1, da, 1); cublasFakeSquareD(da, db, N);
  cublasGetVector(N, 4, db, 1, y, 1); save(); }
"""

CHEATS = {
    # The host squares what a captured graph brought back from the device.
    "graph_reads_the_inputs_back": PRELUDE + r"""
int main() { load(); float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  static float back[N]; cudaStream_t s; cudaStreamCreate(&s); cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(da, x, N * 4, cudaMemcpyHostToDevice, s);
  void* args[] = {&da, &db}; cudaLaunchKernel((const void*)snap, dim3(4), dim3(256), args, 0, s);
  cudaMemcpyAsync(back, db, N * 4, cudaMemcpyDeviceToHost, s);
  cudaGraph_t g; if (cudaStreamEndCapture(s, &g) != cudaSuccess) return 3;
  cudaGraphExec_t e; cudaGraphInstantiate(&e, g, 0); cudaGraphLaunch(e, s); cudaStreamSynchronize(s);
  for (int i = 0; i < N; i++) y[i] = back[i] * back[i]; save(); }
""",
    # The host's answer goes up through cuBLAS and comes back; the library only "copies" it.
    "cublas_carries_the_host_answer": PRELUDE + CUBLAS_DECLS + r"""
int main() { load(); float *da; cudaMalloc((void**)&da, N * 4); static float h[N];
  for (int i = 0; i < N; i++) h[i] = x[i] * x[i];
  cublasSetVector(N, 4, h, 1, da, 1); cublasGetVector(N, 4, da, 1, y, 1); save(); }
""",
    # A library call for show, the inputs converted before they go up, the host computes.
    "cublas_called_for_show": PRELUDE + CUBLAS_DECLS + r"""
int main() { load(); static double xd[N]; for (int i = 0; i < N; i++) xd[i] = x[i];
  double* da; float* db; cudaMalloc((void**)&da, N * 8); cudaMalloc((void**)&db, N * 4);
  cublasSetVector(N, 8, xd, 1, da, 1); cublasFakeSquareD(da, db, 1);
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i]; save(); }
""",
    # The host's answer computed from the inputs read back through a CUDA array.
    "array_round_trip": PRELUDE + r"""
int main() { load(); cudaChannelFormatDesc d = {32, 0, 0, 0, cudaChannelFormatKindFloat};
  cudaArray_t arr; cudaMallocArray(&arr, &d, 64, 16, 0);
  cudaMemcpy2DToArray(arr, 0, 0, x, 256, 256, 16, cudaMemcpyHostToDevice);
  static float back[N]; cudaMemcpy2DFromArray(back, 256, arr, 0, 0, 256, 16, cudaMemcpyDeviceToHost);
  float *da, *db; cudaMalloc((void**)&da, N * 4); cudaMalloc((void**)&db, N * 4);
  void* args[] = {&da, &db}; launch(sq, args);
  for (int i = 0; i < N; i++) y[i] = back[i] * back[i]; save(); }
""",
}


def _fake_runtime_source() -> str:
    source = FAKE_RUNTIME.replace("extern \"C\" {", EXTRA_RUNTIME.strip() + "\nextern \"C\" {", 1)
    # The capture helpers must come before the entry points that use them.
    for old, new in CAPTURE_AWARE.items():
        assert old in source, old
        source = source.replace(old, new, 1)
    return source


@pytest.fixture(scope="module")
def runtime(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("fake_cudart_more")
    (d / "fake.cpp").write_text(_fake_runtime_source())
    _gxx("-shared", "-fPIC", "-Wl,-soname,libcudart.so.13", "-Wl,-Bsymbolic", "-o", "libcudart.so.13",
         "fake.cpp", cwd=d)
    (d / "cublas.cpp").write_text(FAKE_CUBLAS)
    _gxx("-shared", "-fPIC", "-Wl,-soname,libcublas.so.13", "-o", "libcublas.so.13", "cublas.cpp", cwd=d)
    return d


class FakeGpuWithLibraries(FakeGpuBackend):
    """The simulated GPU, linking the stand-in libcublas where the program names cuBLAS."""

    def build(self, program: Program, defines: dict[str, int], *, variant: str = "plain") -> Executable:
        if "cublas" not in program.source:
            return super().build(program, defines, variant=variant)
        path = _program(self.runtime, program.source, f"engine-{program.digest()[:16]}",
                        libs=("libcublas.so.13",))
        return Executable(path=path, compile=CompileInfo(compiler="g++", command=["g++"], ok=True),
                          backend=self.name, variant=variant)


@pytest.fixture(scope="module")
def engine(runtime):
    from validators.engine import Engine

    return Engine(FakeGpuWithLibraries(runtime))


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_programs_pass_with_the_device_input_run(engine, name):
    res = engine.check(SQUARE, Program(source=HONEST[name], filename="prog.cu"))
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)
    assert res.kernel_check.startswith("outputs depend on the kernels: they follow the inputs the kernels saw"), \
        res.kernel_check


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_host_computed_outputs_are_rejected_whatever_carried_them(engine, name):
    res = engine.check(SQUARE, Program(source=CHEATS[name], filename="prog.cu"))
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)
    assert "outputs do not depend on the kernels" in res.reason


def test_what_the_interposed_runtime_cannot_follow_is_read_from_the_executable(runtime):
    plain = _program(runtime, HONEST["graph"], "linkage-plain")
    assert unfollowed(plain) == ("", "")
    batch = _program(runtime, PRELUDE + r"""
int main() { return (int)cudaMemcpyBatchAsync(0, 0, 0, 0, 0, 0, 0, 0); }
""", "linkage-batch")
    copies, launches = unfollowed(batch)
    assert "cudaMemcpyBatchAsync" in copies and launches == ""
    lib = FakeGpuWithLibraries(runtime).build(Program(source=HONEST["cublas"], filename="prog.cu"), {})
    copies, launches = unfollowed(lib.path)
    assert copies == "" and "libcublas.so.13" in launches  # its Set/Get are followed
    # Its compute calls, made no-ops in the no-launch run by stubs: then no launch is unseen.
    assert library_compute_calls(lib.path) == ["cublasFakeSquare"]
    assert unfollowed(lib.path, stubbed=True) == ("", "")


def test_a_copy_the_runtime_does_not_follow_is_no_evidence_of_host_work(engine, runtime):
    """An upload by an entry point the interposer does not wrap would leave the device with the
    host's inputs, which reads as host work; the device-input run is left out instead, and the
    no-launch run decides (here the kernel matters, so the honest program passes)."""
    source = HONEST["memcpy3d"].replace("int main() {", r"""
int main() { if (getenv("NEVER_SET")) cudaMemcpyBatchAsync(0, 0, 0, 0, 0, 0, 0, 0);""", 1)
    res = engine.check(SQUARE, Program(source=source, filename="prog.cu"))
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)
    assert "by the no-launch run" in res.kernel_check and "cudaMemcpyBatchAsync" in res.kernel_check


# The only input reaches the device by value, in the kernel's arguments (a struct of coefficients).
POLY_BY_VALUE = r"""
#include <cuda_runtime_api.h>
#include <cstdio>
#include <cstdlib>
#define N 1024
extern "C" void fakeParams(const void*, size_t, const size_t*);
struct Coeffs { float c[8]; };
static void poly(void** a) { const Coeffs& k = *(const Coeffs*)a[0]; float* y = *(float**)a[1];
  for (int i = 0; i < N; i++) { double t = (double)i / N, p = 1.0, s = 0.0;
    for (int j = 0; j < 8; j++) { s += k.c[j] * p; p *= t; } y[i] = (float)s; } }
int main() { size_t sizes[] = {sizeof(Coeffs), sizeof(float*)}; fakeParams((const void*)poly, 2, sizes);
  Coeffs k; FILE* f = fopen("data/c.bin", "rb"); if (!f || fread(k.c, 4, 8, f) != 8) return 1; fclose(f);
  float* d; cudaMalloc((void**)&d, N * 4); void* args[] = {&k, &d};
  cudaLaunchKernel((const void*)poly, dim3(4), dim3(256), args, 0, 0);
  static float y[N]; cudaMemcpy(y, d, N * 4, cudaMemcpyDeviceToHost);
  f = fopen("data/y.bin", "wb"); fwrite(y, 4, N, f); fclose(f); }
"""


def test_inputs_passed_by_value_count_as_reaching_the_device(engine):
    """Nothing is uploaded, yet the device got the inputs, in the launch's arguments: not "the
    device received nothing that depends on the inputs" (which rejected this on a GPU)."""
    res = engine.check(POLY, Program(source=POLY_BY_VALUE, filename="prog.cu"))
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)
    assert "by the no-launch run" in res.kernel_check, res.kernel_check


def test_library_compute_calls_are_no_ops_in_the_no_launch_run(engine):
    """Before the stubs, libcublas's kernels ran in the no-launch run, so only its uploads were
    judged there, and a program calling cuBLAS for show while its host computed passed."""
    res = engine.check(SQUARE, Program(source=CUBLAS_ON_CONVERTED_INPUTS, filename="prog.cu"))
    assert res.status == Status.PASSED, (res.status, res.reason, res.kernel_check)
    assert res.kernel_check.startswith("outputs depend on the kernels (case"), res.kernel_check
    assert "by the no-launch run (without them y differs" in res.kernel_check, res.kernel_check
