"""The cudashim runtime on small programs: correct results, schedules, deadlocks, ASan, errors."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from validators.cpu.toolchain import compile_program

PROGRAMS = Path(__file__).resolve().parent / "cpu_programs"

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")


def build(tmp_path: Path, name: str, variant: str = "plain", **kw) -> Path:
    out = compile_program(
        (PROGRAMS / name).read_text(), tmp_path / f"{name}-{variant}", variant=variant, **kw
    )
    assert out.ok, out.diagnostics
    return out.exe


def run(exe: Path, schedule: str = "forward", **env: str) -> subprocess.CompletedProcess:
    full = {**os.environ, "CUDASHIM_SCHEDULE": schedule, "ASAN_OPTIONS": "detect_leaks=0", **env}
    return subprocess.run(
        [str(exe)], capture_output=True, text=True, timeout=60, env=full, cwd=exe.parent
    )


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:7"])
def test_add_and_reductions_agree_under_every_schedule(tmp_path, schedule):
    exe = build(tmp_path, "reductions.cu")
    proc = run(exe, schedule)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "add_mismatches=0 tree=100003 shfl=100003 error=no error" in proc.stdout


def test_single_worker_and_odd_sizes(tmp_path):
    exe = build(tmp_path, "reductions.cu", defines={"N": 257})
    proc = run(exe, "reverse", CUDASHIM_WORKERS="1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "tree=257 shfl=257" in proc.stdout


def test_divergent_barrier_is_a_deadlock_not_a_hang(tmp_path):
    exe = build(tmp_path, "split_barrier.cu")
    proc = run(exe)
    assert proc.returncode == 86
    assert "cudashim: deadlock in kernel 'k' block (0,0,0)" in proc.stderr
    assert "threads wait at different __syncthreads() calls" in proc.stderr
    assert "main.cu:7" in proc.stderr and "main.cu:9" in proc.stderr  # both barriers' lines


@pytest.mark.parametrize("variant", ["plain", "asan", "race"])
def test_a_barrier_reached_at_different_calls_completes_as_on_a_gpu(tmp_path, variant):
    """Since Volta a block barrier counts threads, whichever __syncthreads() they reached (the
    fill threads of vLLM's moe_align meet the others at their own call and return). It was a
    deadlock; the run now says what it relied on."""
    exe = build(tmp_path, "barrier_sites.cu", variant)
    for schedule in ("forward", "reverse", "random:9"):
        proc = run(exe, schedule)
        assert proc.returncode == 0 and proc.stdout.strip() == "PASS 0", (schedule, proc.stderr)
    assert "meet at different __syncthreads() calls (main.cu:" in proc.stderr


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_exited_threads_release_the_barrier_as_on_a_gpu(tmp_path, schedule):
    exe = build(tmp_path, "divergent_barrier.cu")
    proc = run(exe, schedule)
    assert proc.returncode == 0, proc.stderr
    assert "cudashim: portability: __syncthreads() at main.cu:8" in proc.stderr
    assert "reached by 50 of 64 threads" in proc.stderr


def test_missing_barrier_changes_the_result_with_the_schedule(tmp_path):
    exe = build(tmp_path, "missing_sync.cu")
    outs = {s: run(exe, s).stdout for s in ("forward", "reverse")}
    assert all("checksum=" in o for o in outs.values())
    assert outs["forward"] != outs["reverse"]


def test_asan_build_reports_the_overrun_with_its_line(tmp_path):
    exe = build(tmp_path, "overrun.cu", variant="asan")
    proc = run(exe)
    assert proc.returncode != 0
    assert "heap-buffer-overflow" in proc.stderr
    assert "main.cu:5" in proc.stderr


def test_invalid_launches_set_the_gpu_errors(tmp_path):
    exe = build(tmp_path, "bad_launch.cu")
    proc = run(exe)
    assert proc.stdout.strip() == (
        "cudaErrorInvalidConfiguration|cudaErrorInvalidConfiguration|cudaErrorInvalidValue|cudaSuccess"
    )


@pytest.mark.parametrize(
    "which, kind", [(0, "global-buffer-overflow"), (1, "heap-buffer-overflow")]
)
def test_asan_sees_static_and_dynamic_shared_memory_overruns(tmp_path, which, kind):
    exe = build(tmp_path, "shared_overrun.cu", variant="asan", defines={"WHICH": which})
    proc = run(exe)
    assert proc.returncode != 0
    assert kind in proc.stderr
    assert "main.cu:13" in proc.stderr


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_a_shuffle_does_not_wait_for_lanes_that_exited(tmp_path, schedule):
    """Lanes past n exit before a full-mask shuffle: GPUs since Volta do not wait for them
    (it was a deadlock); the run says so whichever order the lanes ran in."""
    exe = build(tmp_path, "warp_exit.cu")
    proc = run(exe, schedule)
    assert proc.returncode == 0, proc.stderr
    assert "cudashim: portability: __shfl_down_sync at main.cu:7" in proc.stderr
    assert "exited" in proc.stderr


@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:3"])
def test_common_idioms_compile_and_agree(tmp_path, schedule):
    exe = build(tmp_path, "idioms.cu")
    proc = run(exe, schedule)
    assert proc.returncode == 0, proc.stderr
    # misc: 4 + 3 + .5 + .5 + 1 + 2 + 0 + 3 + 31 + 4 + 2 + 1 + 0 + .5 + 0 (see the kernel)
    assert proc.stdout.strip() == "sum=1000 misc=52.5 x=50 counter=32 warp=32 ull=32"


def test_half_and_bfloat16(tmp_path):
    exe = build(tmp_path, "half.cu")
    proc = run(exe, "reverse")
    assert proc.returncode == 0, proc.stderr
    # sum over t of 2 * (t/4 + 1/2) = 32 + 2 * (0 + ... + 31) / 4 = 280; out[3] = 2.5 + 1.75
    assert proc.stdout.strip() == "count=32 sum=280 out3=4.25"


def test_shim_identifiers_do_not_collide_with_user_macros(tmp_path):
    # nvcc builds a program given -DC=64 or -DTILE=16; so must the shim's own header text
    # (no precompiled header, which g++ would set aside under different macros anyway).
    names = [chr(c) for c in range(ord("A"), ord("Z") + 1)]
    names += ["BLOCK_SIZE", "TILE", "WARP_SIZE", "BLOCK", "WARP", "SIZE", "N", "M", "K"]
    exe = build(tmp_path, "macro_names.cu", use_pch=False, defines=dict.fromkeys(names, 64))
    proc = run(exe, "reverse")
    assert proc.returncode == 0, proc.stderr
    # every lane holds 2 after the shuffle (lane 31 keeps its own 1 + 1): 64, + max(1,2) + 1.5
    assert proc.stdout.strip() == "macro_names 67.5 32"


def test_null_and_zero_kernel_arguments_convert_like_nvcc(tmp_path):
    exe = build(tmp_path, "null_args.cu")
    proc = run(exe)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "null_args 62 6 0 no error"


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_aligned_alloc_follows_glibc_under_asan_and_overruns_are_still_caught(tmp_path, variant):
    """ASan alone returns NULL for aligned_alloc(1024, 4000) (C11's size rule); the real program,
    linked against glibc, gets memory. The shim keeps glibc's behaviour and ASan's exact bounds."""
    proc = run(build(tmp_path, "aligned_alloc.cu", variant=variant))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "aligned=1 last=1998" in proc.stdout
    if variant == "asan":
        over = run(build(tmp_path, "aligned_alloc.cu", variant=variant, defines={"OVERRUN": 1}))
        assert over.returncode != 0 and "heap-buffer-overflow" in over.stderr, over.stderr


def test_cucomplex_arithmetic_matches_python_complex(tmp_path):
    """Including division by huge and tiny divisors, where an unscaled |b|^2 over/underflows."""
    import numpy as np

    proc = run(build(tmp_path, "complex.cu"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [list(map(float, line.split())) for line in proc.stdout.splitlines()]
    assert len(rows) == 5
    f32 = lambda v: float(np.float32(v))  # noqa: E731 - %.9g names the float, not its exact value
    for r in rows:
        a, b = complex(f32(r[0]), f32(r[1])), complex(f32(r[2]), f32(r[3]))
        got = [complex(r[4 + 2 * k], r[5 + 2 * k]) for k in range(6)]
        want = [a + b, a - b, a * b, a / b, complex(abs(a), -a.imag), a * b + a]
        for k, (g, w) in enumerate(zip(got, want, strict=True)):
            if k == 2 and abs(a) > 1e19:  # a*b itself overflows float, as on a GPU
                continue
            if k == 5 and abs(a) > 1e19:
                continue
            assert abs(g - w) <= 1e-6 * max(1.0, abs(w)), (k, a, b, g, w)
        assert abs(complex(r[16], r[17]) - a / b) <= 1e-12 * abs(a / b)


def test_launch_after_a_construct_the_grammar_misparses_is_still_rewritten():
    """tree-sitter-cuda's error recovery (here after `__shared__ __align__(16)` and C-style
    casts) can glue earlier statements onto a launch's callee; only the launch itself may be
    replaced, and line numbers must still hold."""
    from validators.cpu.rewrite import rewrite

    src = (PROGRAMS / "async_copy_misuse.cu").read_text()
    src = src.replace("static_cast<unsigned char>(i + 1)", "(unsigned char)(i + 1)")
    src = src.replace("static_cast<float>(i)", "(float)(i)")
    out = rewrite(src)
    assert len(out.launches) == src.count(">>>(") and not out.warnings
    assert len(out.text.splitlines()) == len(src.splitlines())
    for before, after in zip(src.splitlines(), out.text.splitlines(), strict=True):
        if ">>>(" not in before:
            # a shared declaration gets its registration appended, nothing else changes
            assert after == before or (after.startswith(before) and "::cudashim::shared_decl(" in after)
        else:
            assert before[: before.index(before.strip())] + "::cudashim::launch" in after


def test_a_template_kernel_spread_over_lines_launches_in_a_macro_and_outside(tmp_path):
    """The kernel expression appears twice in a launch's replacement; spread over lines (with
    comments, or line continuations in a macro body) it made the rewrite fail outright."""
    src = r"""
#include <cstdio>
#include <cuda_runtime.h>
template <typename T, int K>
__global__ void scale(T* out, const T* in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * K;
}
#define LAUNCH(T, K)            \
  scale<                        \
      T,                        \
      K><<<(n + 63) / 64, 64>>>( \
      d_out, d_in, n);          \
  cudaDeviceSynchronize()
int main() {
  const int n = 100;
  float h[n], *d_in, *d_out;
  for (int i = 0; i < n; i++) h[i] = i;
  cudaMalloc(&d_in, n * sizeof(float));
  cudaMalloc(&d_out, n * sizeof(float));
  cudaMemcpy(d_in, h, sizeof h, cudaMemcpyHostToDevice);
  LAUNCH(float, 3);
  cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
  float sum = h[99];
  scale<float,  // the type
        2 /* the factor */><<<(n + 63) / 64,
                               64>>>(d_out, d_in, n);
  cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g %g line %d\n", sum, h[99], __LINE__);
  return 0;
}
"""
    out = compile_program(src, tmp_path / "multi-line")
    assert out.ok, out.diagnostics
    res = run(out.exe)
    assert res.returncode == 0, res.stderr
    line = next(i for i, t in enumerate(src.splitlines(), 1) if "__LINE__" in t)
    assert res.stdout.strip() == f"297 198 line {line}"  # the rewrite kept every line


@pytest.mark.parametrize("variant", ["plain", "asan", "race"])
def test_half_warp_rows_of_different_lengths_shuffle_within_their_segments(tmp_path, variant):
    """Width-16 shuffles under a full mask, each half-warp on its own row with its own trip
    count (HeCBench's jaccard): the halves reach different shuffles, and each segment exchanges
    within itself, as GPUs since Volta do. It was a deadlock; under ASan, a lane exiting while
    the other half waited then hit stale stack poison in the runtime (a memory error)."""
    exe = build(tmp_path, "warp_segments.cu", variant)
    for schedule in ("forward", "reverse", "random:5"):
        proc = run(exe, schedule)
        assert proc.returncode == 0 and proc.stdout.strip() == "PASS 0", (schedule, proc.stderr)
    assert "each segment exchanges within itself" in proc.stderr


def test_lanes_of_one_segment_at_different_shuffles_are_still_a_deadlock(tmp_path):
    src = r"""
#include <cstdio>
__global__ void k(int* x) {
  int v = x[threadIdx.x];
  if (threadIdx.x < 8) v += __shfl_xor_sync(0xffffffff, v, 1, 16);
  else v += __shfl_xor_sync(0xffffffff, v, 2, 16);
  x[threadIdx.x] = v;
}
int main() {
  int* d;
  cudaMalloc(&d, 32 * sizeof(int));
  cudaMemset(d, 0, 32 * sizeof(int));
  k<<<1, 32>>>(d);
  printf("%d\n", (int)cudaDeviceSynchronize());
  return 0;
}
"""
    out = compile_program(src, tmp_path / "split-segment")
    assert out.ok, out.diagnostics
    proc = run(out.exe)
    assert proc.returncode != 0
    assert "lanes of warp 0 meet at different warp operations" in proc.stderr


def test_a_file_scope_extern_shared_name_reused_by_a_parameter_or_local(tmp_path):
    """The file-scope array is a macro; a function declaring the same name had its parameter and
    its local array replaced by the macro's expansion (a compile error)."""
    from validators.cpu.rewrite import rewrite

    src = (PROGRAMS / "extern_shared_shadowed.cu").read_text()
    exe = build(tmp_path, "extern_shared_shadowed.cu")
    for schedule in ("forward", "reverse"):
        proc = run(exe, schedule)
        assert proc.returncode == 0 and proc.stdout.strip() == "PASS", proc.stderr
    # Every line keeps its number: the macro is undefined around the two functions only.
    text = rewrite(src, filename="main.cu").text
    assert text.count('#pragma push_macro("sdata")') == 2


def test_a_launch_after_bare_file_scope_macro_calls_is_rewritten_alone():
    """Two file-scope macro calls with no semicolon (CUB's `__ALIGN_BYTES(double, 8)` lines, in
    HeCBench's blockAccess) put tree-sitter's recovery off: it glued a loop's `i < n; ...` onto
    the next template kernel's launch as if `<` opened template arguments, and the launch was
    left unrewritten (a compile error)."""
    from validators.cpu.rewrite import rewrite

    src = (
        "__ALIGN_BYTES(double, 8)\n__ALIGN_BYTES(ulong2, 16)\nvoid f() {}\nint main() {\n"
        "  for (size_t i = 0; i < n; i++) {\n    A[i] = d(gen);\n  }\n"
        "  unsigned char *d_out, *d_out_ref;\n"
        "  kernel<block_size, items_per_thread><<<grid, block>>>(d_A, d_out, n);\n}\n"
    )
    out = rewrite(src, filename="main.cu")
    assert not out.warnings, out.warnings
    assert [launch.kernel for launch in out.launches] == ["kernel<block_size, items_per_thread>"]
    text = out.text.splitlines()
    assert len(text) == len(src.splitlines())
    assert text[4] == "  for (size_t i = 0; i < n; i++) {"  # the loop is left as it was
    assert text[8].startswith('  ::cudashim::launch("kernel<block_size, items_per_thread>", grid, block,')


LAUNCH_DIRECTIVES = r"""
#include <cstdio>
__global__ void k(int *o, int v) { o[threadIdx.x] = v; }
int main() {
  int *d, h[4];
  cudaMalloc(&d, sizeof h);
  k<<<1, 4
#ifdef DYNAMIC_PARTITION
    , 64
#endif
    >>>(d, 9
#ifdef DYNAMIC_PARTITION
    + 1
#endif
    );
  cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%d line %d\n", h[3], __LINE__);
  return 0;
}
"""


def test_preprocessor_lines_inside_a_launch_stay_lines_of_its_rewrite(tmp_path):
    """`#ifdef ... #endif` inside `<<< >>>` and the argument list (pad's kernel.cu): tree-sitter
    broke the launch apart at them and it was left unrewritten. The configuration goes whole to
    `launch_config`, every directive on its own line, so the preprocessor still chooses."""
    from validators.cpu.rewrite import rewrite

    out = rewrite(LAUNCH_DIRECTIVES)
    assert [x.kernel for x in out.launches] == ["k"] and not out.warnings, out.warnings
    assert len(out.text.splitlines()) == len(LAUNCH_DIRECTIVES.splitlines())
    assert out.text.count("\n#ifdef DYNAMIC_PARTITION\n") == 2
    line = next(i for i, t in enumerate(LAUNCH_DIRECTIVES.splitlines(), 1) if "__LINE__" in t)
    for flags, value in (([], 9), (["-DDYNAMIC_PARTITION"], 10)):
        made = compile_program(LAUNCH_DIRECTIVES, tmp_path / f"d{len(flags)}", extra_flags=flags)
        assert made.ok, made.diagnostics
        res = run(made.exe)
        assert res.returncode == 0 and res.stdout.strip() == f"{value} line {line}", res.stderr


def test_a_launch_after_a_statement_macro_without_a_semicolon_is_rewritten():
    """`CUERR` (bmf's `{ ... }` error check) used with no semicolon before a launch: tree-sitter
    read `CUERR\n k <<< 1, 4 >>>\n (d);` as a declaration of a function `k<...>` of type `CUERR`,
    and the launch was left as it was (a compile error). Launches the tree does not have are
    read again alone."""
    from validators.cpu.rewrite import rewrite

    src = (
        "#define CUERR { if (cudaGetLastError() != cudaSuccess) exit(1); }\n"
        "template <int N> __global__ void t(int *o) { o[threadIdx.x] = N; }\n"
        "__global__ void k(int *o) { o[threadIdx.x] = threadIdx.x; }\n"
        "int main() {\n"
        "  int *d;\n"
        "  cudaMalloc(&d, 16); CUERR\n"
        "  k <<< 1, 4 >>>\n"
        "    (d);\n"
        "  cudaDeviceSynchronize(); CUERR\n"
        "  t<3><<<1, 4>>>(d); CUERR\n"
        "  return 0;\n}\n"
    )
    out = rewrite(src, filename="main.cu")
    assert not out.warnings, out.warnings
    assert [(x.kernel, x.line) for x in out.launches] == [("k", 7), ("t<3>", 10)]
    text = out.text.splitlines()
    assert len(text) == len(src.splitlines())
    assert text[6].startswith('  ::cudashim::launch<false>("k", 1, 4, 0, 0, ') and text[6].endswith(", d)")
    assert text[5] == "  cudaMalloc(&d, 16); CUERR"
    assert "<<<" not in out.text


ALIAS_CHANGES_MEANING = r"""
#include <cstdio>
template <typename I, typename E> struct cfg { I a; E b; };
template <typename T> struct Solver {
  using cfg = cfg<int, float>;
  cfg c{1, 2.f};
};
__global__ void k(int *o) { o[0] = 7; }
int main() {
  Solver<int> s;
  int *d, h = 0;
  cudaMalloc(&d, sizeof h);
  k<<<1, 1>>>(d);
  cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
  printf("%s\n", (h == 7 && s.c.a == 1) ? "PASS" : "FAIL");
  return 0;
}
"""


def test_a_member_that_changes_the_meaning_of_its_name_builds_as_with_nvcc(tmp_path):
    """`using cfg = cfg<int, float>;` in a class (bmf): nvcc accepts it, g++ only with
    -fpermissive. The build is redone so only when every error is of that kind: -fpermissive
    must not let through what nvcc rejects."""
    made = compile_program(ALIAS_CHANGES_MEANING, tmp_path / "alias")
    assert made.ok, made.diagnostics
    assert "built with -fpermissive" in made.diagnostics
    res = run(made.exe)
    assert res.returncode == 0 and res.stdout.strip() == "PASS", res.stderr
    # With another error (one -fpermissive would make a warning), the build fails with both.
    broken = ALIAS_CHANGES_MEANING.replace("  Solver<int> s;", "  Solver<int> s; int *q = (void*)0;")
    made = compile_program(broken, tmp_path / "broken")
    assert not made.ok
    assert "invalid conversion" in made.diagnostics and "changes meaning" in made.diagnostics


# Each thread copies a 48-byte struct to an address-taken local, then meets a barrier, over four
# blocks: a block's stacks are reused by the next one. With an argument, thread 5 of block 2
# writes one element past a local array instead.
STACK_REUSE = r"""
#include <cstdio>
struct State { unsigned v[12]; };
__device__ __noinline__ unsigned next(State *st) { st->v[0] += 1; return st->v[3]; }
__device__ __noinline__ void fill(unsigned *a, int n) { for (int i = 0; i < n; i++) a[i] = i; }
__global__ void use(unsigned *out, const State *s, int overflow) {
  __shared__ unsigned sh[64];
  State local = s[threadIdx.x];
  sh[threadIdx.x] = next(&local);
  __syncthreads();
  unsigned arr[8];
  fill(arr, overflow && blockIdx.x == 2 && threadIdx.x == 5 ? 9 : 8);
  out[blockIdx.x * 64 + threadIdx.x] = sh[63 - threadIdx.x] + arr[7] - 7;
}
int main(int argc, char **argv) {
  State h_s[64]; unsigned *o, h[256];
  for (int i = 0; i < 64; i++) for (int j = 0; j < 12; j++) h_s[i].v[j] = i;
  State *s; cudaMalloc(&s, sizeof(h_s)); cudaMalloc(&o, sizeof(h));
  cudaMemcpy(s, h_s, sizeof(h_s), cudaMemcpyHostToDevice);
  use<<<4, 64>>>(o, s, argc > 1);
  cudaMemcpy(h, o, sizeof(h), cudaMemcpyDeviceToHost);
  printf(h[0] == 63 && h[255] == 0 ? "PASS\n" : "FAIL\n");
  return 0;
}
"""


def test_asan_fiber_stacks_reused_by_later_blocks_carry_no_stale_poison(tmp_path):
    """A finished fiber's last frames never return, so the redzones ASan poisoned in them stayed
    on its stack, under the locals of the next block's thread there: a correct kernel failed the
    asan build ("unknown-crash, WRITE of size 48"; cuda-samples MC_EstimatePiInlineP, shfl_scan,
    dct8x8). A real overflow of a local array is still caught."""
    made = compile_program(STACK_REUSE, tmp_path / "reuse", variant="asan")
    assert made.ok, made.diagnostics
    for schedule in ("forward", "reverse"):
        proc = run(made.exe, schedule)
        assert proc.returncode == 0 and proc.stdout.strip() == "PASS", (schedule, proc.stderr)
    env = {**os.environ, "ASAN_OPTIONS": "detect_leaks=0"}
    proc = subprocess.run(
        [str(made.exe), "overflow"], capture_output=True, text=True, timeout=60, env=env
    )
    assert proc.returncode != 0
    assert "stack-buffer-overflow" in proc.stderr, proc.stderr
    assert "'arr'" in proc.stderr, proc.stderr


SHARED_DECLARATIONS = r"""#include <cstdio>
#include <cstdint>
// cuda-samples cudasharedmem.h: a template specialisation per type, built by a macro whose body
// (a comment in it too) declares the dynamic shared array
template <typename T> struct SharedMemory;
#define BUILD_SHAREDMEMORY_TYPE(t, n) \
  template <> struct SharedMemory<t> { \
    __device__ t *getPointer() { \
      extern __shared__ t n[]; /* the block's dynamic shared memory */ \
      return n; \
    } \
  }
BUILD_SHAREDMEMORY_TYPE(float, s_float);
#define DYN_SMEM(T, name) __device__ T *name##_ptr() { extern __shared__ T name[]; return name; }
DYN_SMEM(int, s_int)
#define STATIC_SMEM(T, name) static __shared__ alignas(32) T \
  name[32]
#define WHOLE_DYN extern __shared__ float whole[]
#define aligned_to(p, n) (((uintptr_t)(p) % (n)) == 0)
__global__ void k(int *o) {
  __shared__ unsigned char __align__(8) buf[64], other;
  __shared__ alignas(alignof(float4)) float a[32];
  static __shared__ alignas(32) volatile int b[32];
  __shared__ float __attribute__((aligned(16))) alignas(64)
      c[32];
  volatile __shared__ [[gnu::aligned(32)]] int d[32];
  extern __shared__ __align__(16) float e[];
  STATIC_SMEM(float, f);
  WHOLE_DYN;
  int t = threadIdx.x;
  buf[t] = (unsigned char)t; buf[t + 32] = (unsigned char)(t + 32);
  a[t] = t; b[t] = t; c[t] = t; d[t] = t; f[t] = t;
  float *s = SharedMemory<float>().getPointer();
  s[t] = t;
  __syncthreads();
  int ok = buf[63 - t] == 63 - t && a[31 - t] == 31 - t && b[31 - t] == 31 - t && c[31 - t] == 31 - t
           && d[31 - t] == 31 - t && f[31 - t] == 31 - t && e[31 - t] == 31 - t && whole[31 - t] == 31 - t
           && s_int_ptr() == (int *)s
           && aligned_to(buf, 8) && aligned_to(a, 16) && aligned_to(b, 32) && aligned_to(c, 64)
           && aligned_to(d, 32) && aligned_to(f, 32);
  other = 1;
  o[t] = ok;
}
int main() {
  int *d, h[32];
  cudaMalloc(&d, sizeof(h));
  k<<<1, 32, 32 * sizeof(float)>>>(d);
  cudaMemcpy(h, d, sizeof(h), cudaMemcpyDeviceToHost);
  int ok = 1;
  for (int i = 0; i < 32; i++) ok &= h[i];
  printf(ok ? "PASS\n" : "FAIL\n");
  return 0;
}
"""


@pytest.mark.parametrize("variant", ["plain", "asan"])
def test_shared_declarations_with_alignment_specifiers_and_in_macros(tmp_path, variant):
    """nvcc accepts `__align__(n)` after the type (cuda-samples newdelete: it was read as the
    variable's name), `alignas(...)` after `__shared__` (globalToShmemAsyncCopy: g++ takes a
    standard attribute only first in a declaration), and `extern __shared__` or
    `static __shared__` in a macro's body (MC_SingleAsianOptionP's cudasharedmem.h: `extern
    static`, which does not compile)."""
    from validators.cpu.rewrite import rewrite

    made = compile_program(SHARED_DECLARATIONS, tmp_path / variant, variant=variant)
    assert made.ok, made.diagnostics
    proc = run(made.exe)
    assert proc.returncode == 0 and proc.stdout.strip() == "PASS", proc.stderr
    out = rewrite(SHARED_DECLARATIONS)
    assert not out.warnings
    assert len(out.text.splitlines()) == len(SHARED_DECLARATIONS.splitlines())
    assert {"n", "name", "e", "whole"} <= set(out.dynamic_shared)
    assert '"buf"' in out.text and '"other"' in out.text  # both registered by their names


def test_launch_syntax_in_literals_and_comments_is_not_a_missed_launch():
    """`getLastCudaError("k<<<>>> failed")` (cuda-samples) has no launch in it: no warning."""
    from validators.cpu.rewrite import rewrite

    src = (
        "#include <cstdio>\n__global__ void k() {}\n"
        "int main() {\n"
        '  k<<<1, 1>>>(); printf("k<<<1, 1>>>() failed %c\\n", \'>\');\n'
        "  /* k<<<1, 1>>>();\n  k<<<2, 2>>>(); */ puts(R\"(x<<<1>>>\n y<<<1>>>)\");\n"
        "}\n#define K k<<<1, 1>>>()\n"
    )
    out = rewrite(src)
    assert not out.warnings, out.warnings
    assert len(out.launches) == 2
    left = rewrite(src.replace("k<<<1, 1>>>(); printf", "k<<<1, 1>>>((k<<<1, 1>>>(), 0)); printf"))
    assert any("was not rewritten" in w for w in left.warnings)  # one left in code still is
