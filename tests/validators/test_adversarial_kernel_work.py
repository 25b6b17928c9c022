"""Issue 21, class 1: the kernels must have done the work.

Each cheat below computes its outputs on the host and passed the old no-launch check (which
only asked whether *some* kernel effect reached the outputs, and could be detected). The
kernel-work run gives the device another draw of the inputs than the host reads: outputs that
follow the host's inputs are rejected. The honest programs beside them (inputs uploaded whole,
in pieces, padded, through managed memory, transformed on the host, a copy task) must pass."""

from __future__ import annotations

import pytest

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec

N = 1024
SQUARE = Task(
    name="square_kw", description="y = x * x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": N}, cases=[InputCase(name="a", seed=21)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * inputs['x']}\n"),
)
COPY = SQUARE.model_copy(update={
    "name": "copy_kw", "description": "y = x",
    "reference": Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'].copy()}\n")})

IO = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define N 1024
static float x[N], y[N];
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) exit(1); fclose(f); }
static void save() { FILE* f = fopen("data/y.bin", "wb"); fwrite(y, 4, N, f); fclose(f); }
__global__ void sq(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] * a[i]; }
__global__ void sqd(const double* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = (float)(a[i] * a[i]); }
__global__ void copy(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }
__global__ void fill(float* b, float v, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = v; }
__global__ void flag(int* f) { *f = 1; }
static float *da, *db;
static void dev() { cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4); }
"""

CHEATS = {
    # The host's answer times a kernel-written mask of ones.
    "times_a_kernel_mask_of_ones": IO + r"""
int main() { load(); dev(); fill<<<N / 256, 256>>>(db, 1.0f, N);
  static float ones[N]; cudaMemcpy(ones, db, N * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i] * ones[i]; save(); }
""",
    # The host's answer plus a kernel-written zero, computed from the uploaded input.
    "plus_a_kernel_zero_from_the_input": IO + r"""
int main() { load(); dev(); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  sq<<<N / 256, 256>>>(da, db, N); static float k[N];
  cudaMemcpy(k, db, N * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i] + 0.0f * k[i]; save(); }
""",
    # The host's answer uploaded in pieces, each copied by a kernel.
    "answer_uploaded_in_pieces": IO + r"""
int main() { load(); dev(); static float h[N]; for (int i = 0; i < N; i++) h[i] = x[i] * x[i];
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  for (int c = 0; c < N; c += 64) cudaMemcpy(da + c, h + c, 64 * 4, cudaMemcpyHostToDevice);
  copy<<<N / 256, 256>>>(da, db, N); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    # A sentinel kernel tells the no-launch run apart: wrong outputs only there.
    "detects_the_no_launch_run": IO + r"""
int main() { load(); dev(); int* f; cudaMalloc(&f, 4); cudaMemset(f, 0, 4); flag<<<1, 1>>>(f);
  int h = 0; cudaMemcpy(&h, f, 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = h ? x[i] * x[i] : -1.0f; save(); }
""",
    # The inputs go up and a kernel copies them back: the host computes on what it downloaded.
    "reads_the_inputs_back_from_the_device": IO + r"""
int main() { load(); dev(); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  copy<<<N / 256, 256>>>(da, db, N); static float back[N];
  cudaMemcpy(back, db, N * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < N; i++) y[i] = back[i] * back[i]; save(); }
""",
    # Copied into managed memory, which the host reads in place: it must not see the device's
    # inputs there.
    "reads_managed_memory_it_copied_into": IO + r"""
int main() { load(); dev(); fill<<<N / 256, 256>>>(db, 0.0f, N); cudaDeviceSynchronize();
  float* m; cudaMallocManaged(&m, N * 4); cudaMemcpy(m, x, N * 4, cudaMemcpyHostToDevice);
  for (int i = 0; i < N; i++) y[i] = m[i] * m[i]; save(); }
""",
    # The kernel squares the first 64 elements, the host the other 960: the outputs follow
    # neither input set whole, but most of their elements follow the host's.
    "kernel_computes_a_part": IO + r"""
int main() { load(); dev(); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  sq<<<1, 64>>>(da, db, 64); cudaMemcpy(y, db, 64 * 4, cudaMemcpyDeviceToHost);
  for (int i = 64; i < N; i++) y[i] = x[i] * x[i]; save(); }
""",
    # (Host code storing through a device pointer now faults before any check can judge its
    # outputs, as on a GPU: test_adversarial_device_memory.py.)
}

HONEST = {
    "whole": IO + r"""
int main() { load(); dev(); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  sq<<<N / 256, 256>>>(da, db, N); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    # Ends without exit handlers (skipping slow destructors): the runtime's logs are still
    # written, and the run is not taken for one whose log was tampered with.
    **{f"ends_with_{end.split('(')[0].lstrip('_')}": IO + r"""
#include <unistd.h>
int main() { load(); dev(); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  sq<<<N / 256, 256>>>(da, db, N); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save();
  fflush(NULL); @END@; }
""".replace("@END@", end) for end in ("_exit(0)", "_Exit(0)", "quick_exit(0)")},
    "in_pieces_async": IO + r"""
int main() { load(); dev(); cudaStream_t s; cudaStreamCreate(&s);
  for (int c = 0; c < N; c += 128) cudaMemcpyAsync(da + c, x + c, 128 * 4, cudaMemcpyHostToDevice, s);
  sq<<<N / 256, 256, 0, s>>>(da, db, N); cudaMemcpyAsync(y, db, N * 4, cudaMemcpyDeviceToHost, s);
  cudaStreamSynchronize(s); save(); }
""",
    "padded_rows_default_kind": IO + r"""
int main() { load(); float* p; size_t pitch; cudaMallocPitch((void**)&p, &pitch, 64 * 4, N / 64);
  static float staging[N / 64][80]; memset(staging, 0, sizeof staging);
  for (int r = 0; r < N / 64; r++) memcpy(staging[r], x + r * 64, 64 * 4);
  cudaMemcpy2D(p, pitch, staging, 80 * 4, 64 * 4, N / 64, cudaMemcpyDefault);
  float* out; cudaMalloc(&out, N * 4);
  for (int r = 0; r < N / 64; r++) sq<<<1, 64>>>((float*)((char*)p + r * pitch), out + r * 64, 64);
  cudaMemcpy(y, out, N * 4, cudaMemcpyDefault); save(); }
""",
    "managed_memory": IO + r"""
int main() { load(); float *a, *b; cudaMallocManaged(&a, N * 4); cudaMallocManaged(&b, N * 4);
  memcpy(a, x, N * 4); sq<<<N / 256, 256>>>(a, b, N); cudaDeviceSynchronize();
  memcpy(y, b, N * 4); save(); }
""",
    # Other ways up and back (on a GPU, copies the interposed runtime stages and patches too).
    "memcpy3d_pitched": IO + r"""
int main() { load(); cudaPitchedPtr d; cudaMalloc3D(&d, make_cudaExtent(64 * 4, 16, 1));
  static float padded[16][80]; for (int r = 0; r < 16; r++) memcpy(&padded[r][8], x + r * 64, 256);
  cudaMemcpy3DParms p = {}; p.srcPtr = make_cudaPitchedPtr(padded, 80 * 4, 80, 16);
  p.srcPos = make_cudaPos(8 * 4, 0, 0); p.dstPtr = d; p.extent = make_cudaExtent(64 * 4, 16, 1);
  p.kind = cudaMemcpyHostToDevice; cudaMemcpy3D(&p); float* out; cudaMalloc(&out, N * 4);
  for (int r = 0; r < 16; r++) sq<<<1, 64>>>((float*)((char*)d.ptr + r * d.pitch), out + r * 64, 64);
  cudaMemcpy3DParms q = {}; q.srcPtr = make_cudaPitchedPtr(out, 64 * 4, 64, 16);
  q.dstPtr = make_cudaPitchedPtr(y, 64 * 4, 64, 16); q.extent = make_cudaExtent(64 * 4, 16, 1);
  q.kind = cudaMemcpyDeviceToHost; cudaMemcpy3D(&q); save(); }
""",
    "texture_array": IO + r"""
__global__ void sq_tex(cudaTextureObject_t t, float* b, int w) {
  int i = blockIdx.x * blockDim.x + threadIdx.x, j = blockIdx.y;
  float v = tex2D<float>(t, i + 0.5f, j + 0.5f); b[j * w + i] = v * v; }
int main() { load(); cudaChannelFormatDesc f = cudaCreateChannelDesc<float>(); cudaArray_t arr;
  cudaMallocArray(&arr, &f, 64, 16); cudaMemcpy2DToArray(arr, 0, 0, x, 64 * 4, 64 * 4, 16, cudaMemcpyHostToDevice);
  cudaResourceDesc r = {}; r.resType = cudaResourceTypeArray; r.res.array.array = arr;
  cudaTextureDesc t = {}; t.filterMode = cudaFilterModePoint; t.readMode = cudaReadModeElementType;
  cudaTextureObject_t tex; cudaCreateTextureObject(&tex, &r, &t, nullptr); dev();
  sq_tex<<<dim3(1, 16), 64>>>(tex, db, 64); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    "graph_captured": IO + r"""
int main() { load(); dev(); cudaStream_t s; cudaStreamCreate(&s);
  cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
  cudaMemcpyAsync(da, x, N * 4, cudaMemcpyHostToDevice, s); sq<<<N / 256, 256, 0, s>>>(da, db, N);
  cudaMemcpyAsync(y, db, N * 4, cudaMemcpyDeviceToHost, s);
  cudaGraph_t g; if (cudaStreamEndCapture(s, &g) != cudaSuccess) return 3;
  cudaGraphExec_t e; if (cudaGraphInstantiate(&e, g, 0) != cudaSuccess) return 4;
  cudaGraphLaunch(e, s); cudaStreamSynchronize(s); save(); }
""",
    "transformed_on_the_host": IO + r"""
int main() { load(); static double xd[N]; for (int i = 0; i < N; i++) xd[i] = x[i];
  double* d; cudaMalloc(&d, N * 8); cudaMalloc(&db, N * 4);
  cudaMemcpy(d, xd, N * 8, cudaMemcpyHostToDevice); sqd<<<N / 256, 256>>>(d, db, N);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
}

COPY_HONEST = IO + r"""
int main() { load(); dev(); cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice);
  copy<<<N / 256, 256>>>(da, db, N); cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
"""


@pytest.fixture(scope="module")
def engine():
    from validators.backends import get_backend
    from validators.engine import Engine

    backend = get_backend("cpu")
    backend._schedules = ["forward"]
    return Engine(backend)


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_host_computed_outputs_are_rejected(engine, name):
    res = engine.check(SQUARE, Program(source=CHEATS[name]), thorough=False)
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)
    assert "outputs do not depend on the kernels" in res.reason


@pytest.mark.parametrize("name", sorted(HONEST))
def test_honest_programs_pass(engine, name):
    res = engine.check(SQUARE, Program(source=HONEST[name]), thorough=False)
    assert res.status == Status.PASSED, (res.status, res.reason)
    assert res.kernel_check.startswith("outputs depend on the kernels"), res.kernel_check


def test_uploads_reach_the_device_as_the_second_draw(engine):
    """Whole, chunked and padded uploads, and managed memory kernels read in place, are all
    recognised: the check decides on the device's inputs (not the no-launch fallback)."""
    for name in ("whole", "in_pieces_async", "padded_rows_default_kind", "managed_memory"):
        res = engine.check(SQUARE, Program(source=HONEST[name]), thorough=False)
        assert "they follow the inputs the kernels saw" in res.kernel_check, (name, res.kernel_check)


def test_where_it_cannot_tell_it_says_why(engine):
    """Inputs converted on the host give the device no run of their bytes to replace: the
    check falls back to the no-launch run and names the reason."""
    res = engine.check(SQUARE, Program(source=HONEST["transformed_on_the_host"]), thorough=False)
    assert ("by the no-launch run (without them y differs from the reference): the device-input "
            "run could not tell") in res.kernel_check, res.kernel_check
    assert "no input reached the device" in res.kernel_check


def test_a_copy_task_is_not_mistaken_for_the_host_reading_back(engine):
    res = engine.check(COPY, Program(source=COPY_HONEST), thorough=False)
    assert res.status == Status.PASSED, (res.reason, res.kernel_check)


POLY = Task(
    name="poly_kw", description="y[i] = sum_k c[k] * (i / N)^k",
    inputs=[TensorSpec(name="c", dtype="float32", shape=[8])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": N}, cases=[InputCase(name="a", seed=5)],
    reference=Reference(code=(
        "import numpy as np\n"
        "def reference(inputs, sizes):\n"
        "    t = np.arange(sizes['N'], dtype=np.float64) / sizes['N']\n"
        "    c = inputs['c'].astype(np.float64)\n"
        "    return {'y': sum(c[k] * t**k for k in range(8)).astype(np.float32)}\n")),
)
POLY_BY_VALUE = r"""
#include <cstdio>
#define N 1024
struct Coeffs { float c[8]; };
__global__ void poly(Coeffs k, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x; if (i >= N) return;
  double t = (double)i / N, p = 1.0, s = 0.0;
  for (int j = 0; j < 8; j++) { s += k.c[j] * p; p *= t; }
  y[i] = (float)s;
}
int main() { Coeffs k; FILE* f = fopen("data/c.bin", "rb"); if (fread(k.c, 4, 8, f) != 8) return 1; fclose(f);
  float* d; cudaMalloc(&d, N * 4); poly<<<N / 256, 256>>>(k, d);
  static float y[N]; cudaMemcpy(y, d, N * 4, cudaMemcpyDeviceToHost);
  f = fopen("data/y.bin", "wb"); fwrite(y, 4, N, f); fclose(f); }
"""


def test_inputs_passed_as_kernel_arguments_count_as_reaching_the_device(engine):
    """The only input goes to the device by value, in the launch's arguments: not an upload the
    check can replace, but not "nothing input-dependent reached the device" either."""
    res = engine.check(POLY, Program(source=POLY_BY_VALUE), thorough=False)
    assert res.status == Status.PASSED, (res.status, res.reason)
    assert "by the no-launch run" in res.kernel_check, res.kernel_check


def test_elements_that_copy_an_input_may_hold_the_hosts_bytes():
    """A stencil copies its boundary from the input: the runtime gives the host its own bytes
    for that copy, so those elements follow the host's inputs while the rest follow the device's.
    Elements a host computed are no copy of an input value and do not get that allowance."""
    import numpy as np

    from validators import kernel_work

    rng = np.random.default_rng(0)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    stencil = SQUARE.model_copy(update={"sizes": {"N": 64}})

    def ref(x):  # boundary copied, interior squared
        y = x * x
        y[0], y[-1] = x[0], x[-1]
        return {"y": y}

    plan = kernel_work.Plan(["x"], {"x": b})
    honest = ref(b)
    honest["y"][[0, -1]] = a[[0, -1]]  # the copy came back as the host's bytes
    v = kernel_work.judge(stencil, honest, ref(a), ref(b), {"x": b}, plan, {"x": 1.0}, 8, "a",
                          host_inputs={"x": a})
    assert v.kind == "device", v.note
    cheat = ref(b)
    cheat["y"][1:5] = (a * a)[1:5]  # a few elements computed on the host's inputs
    v = kernel_work.judge(stencil, cheat, ref(a), ref(b), {"x": b}, plan, {"x": 1.0}, 8, "a",
                          host_inputs={"x": a})
    assert v.kind == "unknown", v.note


def test_an_even_split_between_outputs_is_not_decided_by_chance():
    """One output computed from raw uploads, another from inputs the host transformed first
    (CI's flaky WMMA program: float inputs for one kernel, doubles for another): an element of the
    device's output whose two references happen to agree must not tip the count to `host`. A
    kernel computing a small part while the host computes the rest is still host work."""
    import numpy as np

    from validators import kernel_work

    rng = np.random.default_rng(1)
    a = rng.standard_normal(64).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    b[5] = -a[5]  # y's two references agree here (z's do not): this element of y tells nothing
    two = SQUARE.model_copy(update={"sizes": {"N": 64}, "outputs": [
        TensorSpec(name="y", dtype="float32", shape=["N"]),
        TensorSpec(name="z", dtype="float32", shape=["N"])]})

    def ref(x):
        return {"y": x * x, "z": x * x * x}

    plan = kernel_work.Plan(["x"], {"x": b})
    split = {"y": b * b, "z": a * a * a}  # 63 elements follow the device, 64 the host
    v = kernel_work.judge(two, split, ref(a), ref(b), {"x": b}, plan, {"x": 1.0}, 0, "a")
    assert v.kind == "unknown", v.note
    part = ref(a)
    part["y"][:8] = (b * b)[:8]  # the kernel did 8 of 128 elements
    v = kernel_work.judge(two, part, ref(a), ref(b), {"x": b}, plan, {"x": 1.0}, 0, "a")
    assert v.kind == "host" and "120 of the 127" in v.note, v.note


# The red-team audit's p7: the host computes; a sentinel kernel stops the program in the no-launch
# run, and the runtime's kernel-work log is blocked so that the device-input run "could not tell"
# (it passed so: the runtime appended to the log at exit with O_APPEND|O_CREAT, which a read-only
# file of the program's refused). The runtime now creates its logs before main (O_EXCL, held
# open) and writes them with the run's nonce at exit; a log without it is the program's doing.
LOG_BLOCKERS = {
    "pre_creates_the_log_read_only": "",
    "replaces_the_log_read_only": "unlink(p);",
}
BLOCK_LOG = IO + r"""
#include <fcntl.h>
#include <unistd.h>
int main() { char p[64]; snprintf(p, sizeof p, ".ckd-kernel-%s.log", "inputs");  // no literal path
  @BLOCK@ int fd = open(p, O_CREAT | O_EXCL | O_WRONLY, 0400); if (fd >= 0) close(fd);
  load(); dev(); int* f; cudaMalloc(&f, 4); int h = 0; cudaMemcpy(f, &h, 4, cudaMemcpyHostToDevice);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); flag<<<1, 1>>>(f);
  cudaMemcpy(&h, f, 4, cudaMemcpyDeviceToHost); if (h != 1) return 1;
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i]; save(); }
"""


@pytest.mark.parametrize("name", sorted(LOG_BLOCKERS))
def test_a_blocked_or_replaced_runtime_log_is_no_way_out(engine, name):
    from validators.engine import LOG_TAMPERED

    source = BLOCK_LOG.replace("@BLOCK@", LOG_BLOCKERS[name])
    res = engine.check(SQUARE, Program(source=source), thorough=False)
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)
    if name.startswith("replaces"):
        assert LOG_TAMPERED in res.reason and ".ckd-kernel-inputs.log" in res.reason, res.reason
    else:  # the runtime's own file was there first: the check decides as for any host answer
        assert "outputs do not depend on the kernels" in res.reason, res.reason


# A host path for the sizes a single probe case would not have: an honest kernel at the fresh
# case's size, the host's answer at every other (the odd size, the small one). Every case gets
# the kernel-work run, so it is rejected whichever case the seed makes fresh.
SIZED = SQUARE.model_copy(update={"name": "square_sizes", "cases": [
    InputCase(name="a", seed=21), InputCase(name="odd", seed=22, sizes={"N": 1000}),
    InputCase(name="small", seed=23, sizes={"N": 256})]})
SIZE_SWITCH = r"""
#include <cstdio>
#include <cstdlib>
#ifndef N
#define N 1024
#endif
__global__ void sq(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] * a[i]; }
__global__ void touch(float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] += 0.0f; }
int main() {
  float* x = (float*)malloc(N * 4); float* y = (float*)malloc(N * 4);
  FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != (size_t)N) return 1; fclose(f);
  float *da, *db; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4);
  if (N == @SIZE@) {
    cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); sq<<<(N + 255) / 256, 256>>>(da, db, N);
  } else {
    for (int i = 0; i < N; i++) y[i] = x[i] * x[i];
    cudaMemcpy(db, y, N * 4, cudaMemcpyHostToDevice); touch<<<(N + 255) / 256, 256>>>(db, N);
  }
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost);
  FILE* o = fopen("data/y.bin", "wb"); fwrite(y, 4, N, o); fclose(o); return 0; }
"""


@pytest.mark.parametrize("fresh", ["a", "odd"])
def test_a_host_path_for_the_other_sizes_is_found_whichever_case_is_fresh(engine, fresh):
    from validators.engine import with_fresh_case

    seed = next(s for s in range(256) if with_fresh_case(SIZED, s)[1].name == f"{fresh}+fresh")
    size = SIZED.case_sizes(next(c for c in SIZED.cases if c.name == fresh))["N"]
    res = engine.check(SIZED, Program(source=SIZE_SWITCH.replace("@SIZE@", str(size))),
                       thorough=False, fresh_seed=seed)
    assert res.status == Status.REJECTED, (res.status, res.reason, res.kernel_check)
    assert "outputs do not depend on the kernels" in res.reason, res.reason
    honest = engine.check(SIZED, Program(source=SIZE_SWITCH.replace("N == @SIZE@", "N > 0")),
                          thorough=False, fresh_seed=seed)
    assert honest.status == Status.PASSED, (honest.status, honest.reason)
    assert all(c.status == Status.PASSED for c in honest.cases)
