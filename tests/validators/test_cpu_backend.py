"""CpuBackend: builds through the cache, schedules/variants, verdicts from real runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from schemas import Program, Status
from validators.backends import get_backend
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.cpu import toolchain
from validators.cpu.diagnostics import gpu_feature_from_errors
from validators.engine import run_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


@pytest.fixture
def backend(tmp_path) -> CpuBackend:
    return CpuBackend(cache=BuildCache(tmp_path / "builds"))


def program(name: str) -> Program:
    return Program(source=(PROGRAMS / name).read_text())


def test_registered_under_its_name():
    assert get_backend("cpu").name == "cpu"


def test_checks_on_by_default_and_switchable(backend):
    assert backend.schedules() == ["forward", "reverse"]
    assert backend.variants() == ["asan", "plain", "race"]
    assert backend.schedules(thorough=False) == ["forward"]
    assert backend.variants(thorough=False) == ["plain"]


def test_build_is_cached_per_defines_and_variant(backend, monkeypatch):
    # Sizes compiled in (a program that reads them at run time shares one build across sizes:
    # tests/validators/test_cpu_runtime_sizes.py).
    monkeypatch.setattr(toolchain, "RUNTIME_SIZES", False)
    first = backend.build(program("reductions.cu"), {"N": 300})
    again = backend.build(program("reductions.cu"), {"N": 300})
    other = backend.build(program("reductions.cu"), {"N": 301})
    assert first.compile.ok and not first.compile.cached
    assert again.compile.cached and again.path == first.path
    assert not other.compile.cached and other.path != first.path
    asan = backend.build(program("reductions.cu"), {"N": 300}, variant="asan")
    assert asan.variant == "asan" and backend.sandbox_overrides(asan) == {"memory_bytes": None}


def test_schedule_reaches_the_runtime(backend):
    exe = backend.build(program("missing_sync.cu"), {})
    argv, env = backend.command(exe, ["x"], schedule="reverse")
    assert argv == [str(exe.path), "x"]
    assert env["CUDASHIM_SCHEDULE"].strip() == "reverse"


def test_deadlock_verdict(backend):
    res = run_program(program("split_barrier.cu"), backend)
    assert res.status == Status.RUNTIME_ERROR
    assert res.reason.startswith(
        "deadlock: in kernel 'k' block (0,0,0): threads wait at different __syncthreads() calls"
    ), res.reason


def test_a_sync_mask_that_leaves_out_the_calling_lane_is_named_in_the_deadlock(backend):
    """bscan's warp scan passes `__ballot_sync` each lane's lanes-below mask, its own bit not in
    it (undefined in CUDA): the lanes wait for different groups, and the verdict says why rather
    than only that no thread can move."""
    source = """
__global__ void k(unsigned *out) {
  unsigned lane = threadIdx.x & 31;
  out[threadIdx.x] = __popc(__ballot_sync((1u << lane) - 1, 1));
  __syncthreads();
}
int main() {
  unsigned *d;
  cudaMalloc(&d, 32 * sizeof(unsigned));
  k<<<1, 32>>>(d);
  return cudaDeviceSynchronize() != cudaSuccess;
}
"""
    res = run_program(Program(source=source, filename="main.cu"), backend)
    assert res.status == Status.RUNTIME_ERROR
    assert res.reason.startswith("deadlock: "), res.reason
    assert "passed __ballot_sync the mask 0x00000001, which leaves out its own lane" in res.reason, res.reason


def test_threads_that_exited_do_not_hold_a_barrier_and_the_run_says_so(backend):
    """Undefined in CUDA, but GPUs since Volta release a barrier without threads that exited
    (10 of 223 real benchmark solutions rely on it): the run passes with a portability note
    naming the line (it was a deadlock)."""
    res = run_program(program("divergent_barrier.cu"), backend)
    assert res.status == Status.PASSED, res.reason
    assert any(n.startswith("portability: __syncthreads() at main.cu:8") and "50 of 64" in n
               for n in res.notes), res.notes


def test_asan_verdict_names_the_line(backend, tmp_path):
    exe = backend.build(program("overrun.cu"), {}, variant="asan")
    from validators.sandbox import Limits, run_sandboxed

    argv, env = backend.command(exe, [])
    out = run_sandboxed(
        argv, tmp_path, limits=Limits().with_overrides(backend.sandbox_overrides(exe)), env=env
    )
    verdict = backend.classify(exe, out)
    assert verdict.status == Status.RUNTIME_ERROR
    assert verdict.reason.startswith(
        "out-of-bounds access (AddressSanitizer heap-buffer-overflow, WRITE of size 4) at main.cu:5 in fill"
    )


def test_legacy_texture_reference_needs_a_gpu(backend):
    # Texture objects run (tests/validators/test_cpu_texture.py); CUDA 12 removed references.
    src = """
texture<float, 2, cudaReadModeElementType> tr;
__global__ void k(float* o) { o[threadIdx.x] = tex2D(tr, 0.5f, 0.5f); }
int main() { return 0; }
"""
    exe = backend.build(Program(source=src), {})
    assert not exe.compile.ok
    assert exe.needs_gpu and exe.needs_gpu.startswith("texture")


@pytest.mark.parametrize(
    "diag, feature",
    [
        ("main.cu:3:10: fatal error: cublas_v2.h: No such file or directory", "cublas"),
        ("main.cu:9:5: error: ‘__hadd2’ was not declared in this scope", "__hadd2"),
        ("main.cu:9:5: error: ‘this_grid’ is not a member of ‘cooperative_groups’", "grid_sync"),
        ("/tmp/cc.s:20: Error: no such instruction: `mov.u32 %eax,%laneid'", "inline_ptx"),
    ],
)
def test_compile_errors_map_to_features(diag, feature):
    assert feature in (gpu_feature_from_errors(diag) or "")


PTX_MMA = r"""
#include <cstdint>
__global__ void k(float* d, const uint32_t* a, const uint32_t* b) {
  float c0 = 0, c1 = 0, c2 = 0, c3 = 0;
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(c0), "+f"(c1), "+f"(c2), "+f"(c3)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  d[threadIdx.x] = c0 + c1 + c2 + c3;
}
int main() { float* d; uint32_t* a; cudaMalloc(&d, 128); cudaMalloc(&a, 16);
  k<<<1, 32>>>(d, a, a); cudaDeviceSynchronize(); }
"""


def test_inline_ptx_is_needs_gpu_whatever_g_plus_plus_says(backend):
    """`mma.sync` with "+f" constraints fails in g++ before the assembler (a constraint error, not
    an asm error): it was a compile_error. PTX in an asm statement is a GPU feature."""
    exe = backend.build(Program(source=PTX_MMA), {})
    assert not exe.compile.ok
    assert exe.needs_gpu and exe.needs_gpu.startswith("inline_ptx") and "mma.sync" in exe.needs_gpu


def test_only_ptx_asm_counts_not_x86_host_asm():
    from validators.cpu.diagnostics import ptx_in_source

    host = 'int main() { unsigned lo, hi; asm volatile("rdtsc" : "=a"(lo), "=d"(hi)); }'
    assert ptx_in_source(host) is None
    assert ptx_in_source(PTX_MMA).startswith("mma.sync")
    assert ptx_in_source('__device__ int f() { int r; asm("mov.u32 %0, %%laneid;" : "=r"(r)); '
                         'return r; }') == "mov.u32"


def test_ordinary_compile_error_is_not_a_feature():
    assert (
        gpu_feature_from_errors("main.cu:4:3: error: ‘resutl’ was not declared in this scope")
        is None
    )


@pytest.mark.skipif(toolchain.cccl_dir() is None, reason="no CCCL (Thrust) headers installed")
def test_thrust_runs_on_its_cpp_system(backend):
    src = """
#include <thrust/device_vector.h>
#include <thrust/reduce.h>
#include <thrust/sequence.h>
#include <cstdio>
int main() {
  thrust::device_vector<int> v(1000);
  thrust::sequence(v.begin(), v.end());
  printf("sum=%d\\n", thrust::reduce(v.begin(), v.end()));
  return 0;
}
"""
    assert backend.unsupported_features(["thrust", "half"]) == []
    res = run_program(Program(source=src), backend)
    assert res.status == Status.PASSED, res.reason
    assert res.outcome.stdout.strip() == "sum=499500"


def test_std_flags_below_cxx20_are_replaced_with_a_note(backend):
    # HeCBench Makefiles pass -std=c++17 to nvcc; the shim's headers need C++20.
    prog = Program(
        source=(PROGRAMS / "reductions.cu").read_text(), extra_flags=["-std=c++17", "-DN=64"]
    )
    exe = backend.build(prog, {})
    assert exe.compile.ok, exe.compile.diagnostics
    assert "-std=c++17" not in exe.compile.command and "-DN=64" in exe.compile.command
    assert "-std=c++17 replaced by -std=c++20" in exe.compile.diagnostics
    newer = backend.build(prog.model_copy(update={"extra_flags": ["-std=gnu++20"]}), {})
    assert newer.compile.ok and "-std=gnu++20" in newer.compile.command
    assert "replaced" not in newer.compile.diagnostics


@pytest.mark.parametrize("also_reads_etc", [False, True])
def test_asan_out_of_bounds_read_is_the_reason_not_the_symbolizer_reads(
    tmp_path, also_reads_etc
):
    # ASan's symbolizer reads the vDSO (`linux-vdso.so.1`), debug files and the executable;
    # none of that is the program opening files, and the sanitizer report is the run's cause.
    from schemas import InputCase, Reference, Task, TensorSpec
    from validators.engine import Engine

    task = Task(
        name="transpose",
        description="out = in transposed",
        inputs=[TensorSpec(name="input", dtype="float32", shape=["ROWS", "COLS"])],
        outputs=[TensorSpec(name="output", dtype="float32", shape=["COLS", "ROWS"])],
        sizes={"ROWS": 20, "COLS": 13},
        cases=[InputCase(name="one", seed=1)],
        reference=Reference(
            code="def reference(inputs, sizes):\n    return {'output': inputs['input'].T.copy()}\n"
        ),
    )
    flags = ["-DALSO_READ_ETC"] if also_reads_etc else []
    prog = Program(source=(PROGRAMS / "transpose_oob.cu").read_text(), extra_flags=flags)
    engine = Engine(CpuBackend(cache=BuildCache(tmp_path / "builds")))
    res = engine.check(task, prog, thorough=True)
    assert res.status == Status.RUNTIME_ERROR, res.reason
    case = res.cases[0]
    assert case.reason.startswith(
        "out-of-bounds access (AddressSanitizer heap-buffer-overflow, READ of size 4) at main.cu:13"
    ), case.reason
    assert "vdso" not in case.reason and "debug" not in case.reason
    # A real forbidden read is still reported, after the sanitizer's reason.
    assert ("/etc/hostname" in case.reason) == also_reads_etc


def test_kernels_launched_through_untyped_pointers_run(backend):
    """`cudaLaunchKernel((void*)k, ...)` (79 of 223 real benchmark solutions) and
    `cudaLaunchCooperativeKernel((const void*)k, ...)` were compile errors: the cast lost the
    parameter types. The pointer now carries a launcher; one that is no kernel is error 98
    (cudaErrorInvalidDeviceFunction), as on a GPU."""
    from validators.engine import run_program

    source = (Path(__file__).parent / "cpu_programs" / "launch_by_pointer.cu").read_text()
    res = run_program(Program(source=source), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["0", "0", "0", "98", "1", "1999", "1e+06"]


def test_launches_described_by_a_configuration_run(backend):
    """cudaLaunchKernelEx (typed, arguments converted to the kernel's types, a cluster attribute
    accepted) and cudaLaunchKernelExC with the cooperative attribute (a grid-wide barrier)."""
    from validators.engine import run_program

    source = (Path(__file__).parent / "cpu_programs" / "launch_ex.cu").read_text()
    res = run_program(Program(source=source), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["0", "0", "3", "256"]


def test_the_generic_thread_group_and_run_time_tiles(backend):
    """`cooperative_groups::thread_group` (a block, `tiled_partition(g, 16)`, a
    `thread_block_tile<8>` passed as one) was missing from the shim."""
    from validators.engine import run_program

    source = (Path(__file__).parent / "cpu_programs" / "thread_group.cu").read_text()
    res = run_program(Program(source=source), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["bad", "0", "first", "128329"]


def test_pinned_memory_with_flags(backend):
    """`cudaMallocHost(ptr, size, flags)`, the runtime's C++ overload, did not compile."""
    from validators.engine import run_program

    src = """
#include <cstdio>
__global__ void inc(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
int main() {
  float* h; void* raw;
  cudaError_t e1 = cudaMallocHost(&h, 256 * sizeof(float), cudaHostAllocPortable);
  cudaError_t e2 = cudaMallocHost(&raw, 64, cudaHostAllocDefault);
  for (int i = 0; i < 256; i++) h[i] = i;
  float* d; cudaMalloc(&d, 256 * sizeof(float));
  cudaMemcpy(d, h, 256 * sizeof(float), cudaMemcpyHostToDevice);
  inc<<<1, 256>>>(d, 256);
  cudaMemcpy(h, d, 256 * sizeof(float), cudaMemcpyDeviceToHost);
  printf("%d %d %g\\n", e1, e2, h[255]);
  return 0;
}
"""
    res = run_program(Program(source=src), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["0", "0", "256"]


def test_the_runtime_s_other_cxx_overloads(backend):
    """`cudaEventCreate(&e, flags)` and a typed `cudaHostGetDevicePointer(&float_ptr, h, 0)`,
    which nvcc accepts, were compile errors."""
    from validators.engine import run_program

    src = """
#include <cstdio>
__global__ void inc(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
int main() {
  cudaEvent_t e; cudaError_t e1 = cudaEventCreate(&e, cudaEventDisableTiming);
  float* h; cudaHostAlloc(&h, 64 * sizeof(float), cudaHostAllocMapped);
  for (int i = 0; i < 64; i++) h[i] = i;
  float* d = nullptr; cudaError_t e2 = cudaHostGetDevicePointer(&d, h, 0);
  inc<<<1, 64>>>(d, 64); cudaEventRecord(e); cudaEventSynchronize(e);
  printf("%d %d %g\\n", e1, e2, h[63]);
  return 0;
}
"""
    res = run_program(Program(source=src), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["0", "0", "64"]


@pytest.mark.skipif(toolchain.cccl_dir() is None, reason="no CCCL (libcu++) headers installed")
def test_libcuxx_builds_without_thrust(backend):
    """`cuda/std/*` and `cuda/atomic` were found only by programs that used Thrust (7 of 223
    real benchmark solutions were needs_gpu for it); `cuda/barrier` and `cuda/pipeline` are the
    shim's own since issue 26 (test_cpu_libcuxx_sync.py, test_cpu_libcuxx_pipeline.py)."""
    from validators.engine import run_program

    source = (Path(__file__).parent / "cpu_programs" / "libcuxx.cu").read_text()
    res = run_program(Program(source=source), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["1280", "5"]
    pipeline = run_program(Program(source="#include <cuda/pipeline>\nint main() { return 0; }\n"),
                           backend)
    assert pipeline.status == Status.PASSED, pipeline.reason


def test_cuda_graphs_capture_and_replay_and_explicit_graphs(backend):
    """Stream capture defers the work (the upload has not run when capture ends), keeps a
    launch's argument values as of the launch, follows a fork to another stream and back, and
    replays three times after the graph is destroyed; an explicit graph runs by its
    dependencies. (CUDA graphs were needs_gpu.)"""
    from validators.engine import run_program

    source = (Path(__file__).parent / "cpu_programs" / "cuda_graphs.cu").read_text()
    res = run_program(Program(source=source), backend)
    assert res.status == Status.PASSED, (res.reason, res.compile.diagnostics[-1500:])
    assert res.outcome.stdout.split() == ["1", "0", "6", "3", "2", "1", "cudaSuccess"]
