"""Warp-lockstep copies of barrier-free kernels (validators/cpu/lockstep.py): which kernels get
one, that every kernel computes what its host version computes with the copies on and off, under
every schedule and build, that errors still point at the user's lines, and that a copy never
costs a program its build."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from lockstep_fuzz import program as fuzz_program

from validators.cpu.rewrite import rewrite
from validators.cpu.toolchain import compile_program

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

SOURCE = (Path(__file__).resolve().parent / "cpu_programs" / "lockstep.cu").read_text()
COPIED = {"fma_chain", "column_sums", "branches", "mixed", "calls", "divide", "inner", "strided", "leaving",
          "blocks3d"}


def run(exe: Path, *args: str, schedule: str = "forward", lockstep: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "CUDASHIM_SCHEDULE": schedule, "CUDASHIM_LOCKSTEP": "1" if lockstep else "0"}
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=120, env=env,
                          cwd=exe.parent)


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, Path]:
    out = {}
    for variant in ("plain", "asan"):
        made = compile_program(SOURCE, tmp_path_factory.mktemp("lockstep") / variant, variant=variant)
        assert made.ok, made.diagnostics
        # the copies compiled (no fallback to the build without them)
        assert set(made.rewrite.lockstep) == COPIED, made.rewrite.lockstep_skipped
        out[variant] = made.exe
    return out


def test_kernels_with_uniform_loops_get_copies_and_the_others_say_why():
    result = rewrite(SOURCE)
    assert set(result.lockstep) == COPIED
    assert result.lockstep_skipped == {
        "asserting": "assert", "locked": "may wait for another thread (locks, fences, polling)"}
    text = result.text
    assert text.count("::cudashim::launch_lockstep(") == len(COPIED)  # one launch site each
    # the user's lines keep their numbers after the copies
    for number, line in enumerate(SOURCE.splitlines(), 1):
        if "__global__ void" in line:
            name = line.split("void", 1)[1].split("(")[0].strip()
            assert f'#line {number} "main.cu"\ntemplate <int = 0>\nstatic void __cudashim_ls_{name}(' in text \
                or name not in COPIED


@pytest.mark.parametrize("variant", ["plain", "asan"])
@pytest.mark.parametrize("schedule", ["forward", "reverse", "random:7"])
@pytest.mark.parametrize("lockstep", [True, False])
def test_every_kernel_matches_its_host_version(builds, variant, schedule, lockstep):
    if variant == "asan" and schedule.startswith("random"):
        pytest.skip("one random schedule is enough")
    proc = run(builds[variant], schedule=schedule, lockstep=lockstep)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    oks = [line for line in proc.stdout.splitlines() if line.endswith(": ok")]
    assert len(oks) == 12, proc.stdout


def test_the_copy_runs_and_the_thread_loop_does_not(builds):
    # `asserting` keeps the thread loop (its message quotes the source); the report names the
    # kernel and thread exactly as before.
    proc = run(builds["plain"], "asserting")
    assert "block: [1,0,0], thread: [6,0,0] Assertion `v[i] + k != 1003` failed" in proc.stderr
    assert re.search(r"main\.cu:\d+: void asserting\(", proc.stderr), proc.stderr


def _compile_and_run(tmp_path: Path, source: str, variant: str = "plain", **kw) -> tuple[object, subprocess.CompletedProcess]:
    made = compile_program(source, tmp_path / variant, variant=variant)
    assert made.ok, made.diagnostics
    return made, run(made.exe, **kw)


OOB = r"""
#include <cstdio>
__global__ void walk(const float* a, float* out, int n, int rows) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float s = 0.f;
  for (int k = 0; k < rows; ++k)
    s += a[k * n + i];  // OOB-LINE: rows is one too many
  out[i] = s;
}
int main() {
  const int n = 64, rows = 4;
  float *a, *out;
  cudaMalloc(&a, n * rows * sizeof(float));
  cudaMalloc(&out, n * sizeof(float));
  cudaMemset(a, 0, n * rows * sizeof(float));
  walk<<<2, 32>>>(a, out, n, rows + 1);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def test_sanitizer_reports_in_a_copy_name_the_users_line(tmp_path):
    line = next(i for i, t in enumerate(OOB.splitlines(), 1) if "OOB-LINE" in t)
    made, proc = _compile_and_run(tmp_path, OOB, variant="asan")
    assert made.rewrite.lockstep == ["walk"]
    assert proc.returncode != 0
    assert "heap-buffer-overflow" in proc.stderr
    assert f"main.cu:{line}" in proc.stderr, proc.stderr


RACY_LOOP = r"""
#include <cstdio>
__global__ void total(const int* a, int* out, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  for (int r = 0; r < reps; ++r) out[0] += a[i];  // LOST-UPDATE
}
int main() {
  int *a, *out;
  cudaMalloc(&a, 64 * sizeof(int));
  cudaMalloc(&out, sizeof(int));
  cudaMemset(a, 1, 64 * sizeof(int));
  cudaMemset(out, 0, sizeof(int));
  total<<<1, 64>>>(a, out, 64, 2);
  cudaDeviceSynchronize();
  printf("done\n");
  return 0;
}
"""


def test_the_race_build_judges_each_thread_as_before(tmp_path):
    # The race detector names the CUDA thread of each write, so that build runs threads one at
    # a time even where a copy exists.
    made, proc = _compile_and_run(tmp_path, RACY_LOOP, variant="race", schedule="reverse")
    assert made.rewrite.lockstep == ["total"]
    assert proc.returncode == 87, proc.stdout + proc.stderr
    assert "race in kernel 'total': lost update of global memory" in proc.stderr


NO_DEFAULT_CTOR = r"""
#include <cstdio>
struct Acc { explicit Acc(float v) : v(v) {} float v; };
__global__ void sums(const float* a, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Acc acc = Acc(0.f);
  for (int k = 0; k < 8; ++k) acc.v += a[i] * k;
  out[i] = acc.v;
}
int main() {
  float h[40], *a, *out;
  for (int i = 0; i < 40; ++i) h[i] = (float)i;
  cudaMalloc(&a, sizeof h); cudaMalloc(&out, sizeof h);
  cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
  sums<<<2, 32>>>(a, out, 40);
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g %g\n", h[1], h[39]);
  return 0;
}
"""


def test_a_copy_that_does_not_compile_costs_nothing_but_a_note(tmp_path):
    # `Acc` has no default constructor, so its per-lane array cannot be declared.
    assert rewrite(NO_DEFAULT_CTOR).lockstep == ["sums"]
    made, proc = _compile_and_run(tmp_path, NO_DEFAULT_CTOR)
    assert made.rewrite.lockstep == []  # the build that succeeded has no copies
    assert "lockstep copies left out" in made.diagnostics
    assert proc.stdout.strip() == "28 1092"


def test_a_program_that_does_not_compile_reports_its_own_error_once(tmp_path):
    broken = NO_DEFAULT_CTOR.replace("out[i] = acc.v;", "out[i] = acc.v + missing_name;")
    made = compile_program(broken, tmp_path / "b")
    assert not made.ok
    assert "missing_name" in made.diagnostics
    assert "__cudashim_ls_" not in made.diagnostics


SKIPPED = {
    "shared memory": "__shared__ float s[32]; s[threadIdx.x] = 0; for (int k = 0; k < n; ++k) out[i] += k;",
    "goto": "for (int k = 0; k < n; ++k) { if (k == 3) goto done; out[i] += k; } done: ;",
    "assigns a parameter": "for (int k = 0; k < n; ++k) out[i] += k; n = 0;",
    "auto": "auto x = 1; for (int k = 0; k < n; ++k) out[i] += k * x;",
    "shadows": "int k = 2; for (int j = 0; j < n; ++j) { for (int k = 0; k < 2; ++k) out[i] += k; }",
    "macro": "int base = 1; for (int k = 0; k < n; ++k) out[i] += USES_BASE;",
    "no loop": "out[i] = n;",
    "syntax errors": "for (int k = 0; k < n; ++k) out[i] += k @ 2;",
}


@pytest.mark.parametrize("what", sorted(SKIPPED))
def test_kernels_outside_the_subset_get_no_copy_and_a_reason(what):
    body = SKIPPED[what]
    source = (
        "#define USES_BASE (base + 1)\n"
        "__global__ void k(int* out, int n) {\n  int i = threadIdx.x;\n  " + body + "\n}\n"
        "int main() { k<<<1, 32>>>(nullptr, 4); return 0; }\n"
    )
    result = rewrite(source)
    assert result.lockstep == [], what
    assert "k" in result.lockstep_skipped or what == "shared memory", result.lockstep_skipped
    assert "launch_lockstep" not in result.text


def test_a_launch_before_the_definition_uses_the_thread_loop():
    source = (
        "__global__ void k(float* out, int n);\n"
        "void go(float* o) { k<<<1, 32>>>(o, 4); }\n"
        "__global__ void k(float* out, int n) {\n  int i = threadIdx.x;\n  float s = 0;\n"
        "  for (int j = 0; j < n; ++j) s += j;\n  out[i] = s;\n}\n"
        "void again(float* o) { k<<<1, 32>>>(o, 4); }\n"
    )
    result = rewrite(source)
    assert result.lockstep == ["k"]
    assert result.text.count("launch_lockstep(") == 1
    assert result.text.index("launch_lockstep(") > result.text.index("void again")


INTERLEAVE = (Path(__file__).resolve().parent / "cpu_programs" / "interleave.cu").read_text()


@pytest.mark.parametrize(
    "schedule, lockstep, want",
    [("forward", True, "0 1 2 3 0 1 2 3"), ("reverse", True, "3 2 1 0 3 2 1 0"),
     ("forward", False, "0 0 1 1 2 2 3 3"), ("reverse", False, "3 3 2 2 1 1 0 0")],
)
def test_lanes_take_each_iteration_together(tmp_path, schedule, lockstep, want):
    # A racy log of who ran when: with the copy, the lanes of a warp take each loop iteration
    # together (as on a GPU); without it, each thread runs its whole loop in turn.
    made, proc = _compile_and_run(tmp_path, INTERLEAVE, schedule=schedule, lockstep=lockstep)
    assert made.rewrite.lockstep == ["order"]
    assert proc.stdout.split() == want.split()


HEADER_MACRO = r"""
#include <cstdio>
#include "tid.h"
__global__ void scaled(const int* v, int* out, int n) {
  int i = TID;  // a macro of a header the rewrite does not see
  if (i >= n) return;
  int acc = 0;
  for (int k = 0; k < 4; ++k) {
    if (v[i] > k) {  // a comment inside a statement that spans lines
      acc += k;      // (the copy joins its lines)
    }
  }
  out[i] = acc + LANE_OF_BLOCK * 100;
}
int main() {
  int h[70], *v, *out;
  for (int i = 0; i < 70; ++i) h[i] = i % 6;
  cudaMalloc(&v, sizeof h); cudaMalloc(&out, sizeof h);
  cudaMemcpy(v, h, sizeof h, cudaMemcpyHostToDevice);
  scaled<<<3, 32>>>(v, out, 70);
  cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 70; ++i) printf("%d ", h[i]);
  return 0;
}
"""


def test_names_from_unseen_headers_see_the_lanes_thread_index(tmp_path):
    include = tmp_path / "inc"
    include.mkdir()
    (include / "tid.h").write_text("#define TID (blockIdx.x * blockDim.x + threadIdx.x)\n"
                                   "#define LANE_OF_BLOCK (threadIdx.x % 4)\n")
    made = compile_program(HEADER_MACRO, tmp_path / "b", extra_flags=[f"-I{include}"])
    assert made.ok, made.diagnostics
    assert made.rewrite.lockstep == ["scaled"]
    want = []
    for i in range(70):
        v = i % 6
        want.append(sum(k for k in range(4) if v > k) + (i % 32 % 4) * 100)
    for schedule in ("forward", "reverse"):
        proc = run(made.exe, schedule=schedule)
        assert [int(x) for x in proc.stdout.split()] == want


@pytest.mark.parametrize("body, reason", [
    ("STEP(acc); for (int k = 0; k < n; ++k) out[i] += k;", "macro STEP is a statement"),
    ("BAIL; for (int k = 0; k < n; ++k) out[i] += k;", "leaves the statement"),
    ("decltype(n) m = n; for (int k = 0; k < m; ++k) out[i] += k;", "decltype"),
])
def test_macros_that_are_statements_and_decltype_get_no_copy(body, reason):
    source = (
        "#define STEP(x) x += 1\n#define BAIL if (n < 0) return\n"
        "__global__ void k(int* out, int n) {\n  int i = threadIdx.x; int acc = 0;\n  " + body + "\n}\n"
    )
    result = rewrite(source)
    assert result.lockstep == []
    assert reason in result.lockstep_skipped["k"]


@pytest.mark.parametrize("seed", [0, 1])
def test_random_race_free_kernels_compute_the_same_bits_with_and_without_copies(tmp_path, seed):
    # 24 generated kernels per program (tests/validators/lockstep_fuzz.py; seeds 0-79 pass too): uniform loops,
    # grid-stride and while loops, branches around loops, returns, break/continue, calls that
    # read threadIdx. Seed 0 of an earlier version caught a return guard calling a device
    # function without the lane's threadIdx.
    source = fuzz_program(seed)
    made = compile_program(source, tmp_path / "b")
    assert made.ok, made.diagnostics
    assert len(made.rewrite.lockstep) >= 15, made.rewrite.lockstep_skipped
    want = run(made.exe, lockstep=False)
    assert want.returncode == 0 and want.stdout.count("\n") == 24, want.stdout + want.stderr
    for schedule in ("forward", "reverse"):
        got = run(made.exe, schedule=schedule)
        assert got.stdout == want.stdout, schedule


# Issue 27: one thread per output element, each recomputing its row's statistics (a softmax
# as CUDABench's reference programs write it). Every lane of a warp reads the same row, so the
# copy computes each exponential once per warp; expf is wrapped at link time to count calls.
ROW_STATS = r"""
#include <atomic>
#include <cmath>
#include <cstdio>
static std::atomic<long> calls{0};
extern "C" float __real_expf(float);
extern "C" float __wrap_expf(float x) { calls.fetch_add(1, std::memory_order_relaxed); return __real_expf(x); }
#define M 64
#define N 64
__global__ void softmax(const float* A, float* C) {
  int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
  if (row < M && col < N) {
    float mx = -1e30f;
    for (int j = 0; j < N; ++j) { float v = A[row * N + j]; if (v > mx) mx = v; }
    float s = 0.0f, num = 0.0f;
    for (int j = 0; j < N; ++j) {
      float e = expf(A[row * N + j] - mx);
      if (j == col) num = e;
      s += e;
    }
    C[row * N + col] = num / s;
  }
}
int main() {
  static float h[M * N], got[M * N];
  for (int i = 0; i < M * N; ++i) h[i] = (float)((i * 37) % 101) / 17.0f - 3.0f;
  float *A, *C;
  cudaMalloc(&A, sizeof h); cudaMalloc(&C, sizeof h);
  cudaMemcpy(A, h, sizeof h, cudaMemcpyHostToDevice);
  softmax<<<dim3(N / 32, M / 32), dim3(32, 32)>>>(A, C);
  cudaDeviceSynchronize();
  long in_kernel = calls.load();
  cudaMemcpy(got, C, sizeof got, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int r = 0; r < M; ++r)
    for (int c = 0; c < N; ++c) {
      float mx = -1e30f, s = 0.0f, num = 0.0f;
      for (int j = 0; j < N; ++j) if (h[r * N + j] > mx) mx = h[r * N + j];
      for (int j = 0; j < N; ++j) { float e = expf(h[r * N + j] - mx); if (j == c) num = e; s += e; }
      bad += got[r * N + c] != num / s;  // the same operations in the same order: the same bits
    }
  printf("calls %ld bad %d\n", in_kernel, bad);
  return 0;
}
"""


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_a_row_statistic_is_computed_once_per_warp(tmp_path, schedule):
    made = compile_program(ROW_STATS, tmp_path / "plain", extra_flags=["-Wl,--wrap=expf"])
    assert made.ok, made.diagnostics
    assert made.rewrite.lockstep == ["softmax"]
    threads_times_n = 64 * 64 * 64
    for lockstep, most in ((True, threads_times_n // 32), (False, threads_times_n)):
        proc = run(made.exe, schedule=schedule, lockstep=lockstep)
        assert proc.returncode == 0, proc.stderr
        calls, bad = (int(w) for w in proc.stdout.split()[1::2])
        assert bad == 0, proc.stdout
        assert 0 < calls <= most, (lockstep, proc.stdout)


# 256 threads (4 x 64) log their index twice through an atomic counter: the log shows which
# threads take each loop iteration together.
FOUR_WARPS = r"""
#include <cstdio>
__global__ void order(int* log, int* pos) {
  int t = threadIdx.y * blockDim.x + threadIdx.x;
  for (int k = 0; k < 2; ++k) log[atomicAdd(pos, 1)] = t;
}
int main(int argc, char** argv) {
  int *log, *pos, h[512];
  cudaMalloc(&log, sizeof h); cudaMalloc(&pos, sizeof(int));
  cudaMemset(pos, 0, sizeof(int));
  if (argv[1][0] == 'w') order<<<1, dim3(64, 4)>>>(log, pos);   // 256 threads: 4 warps a chunk
  else order<<<1, dim3(32, 2)>>>(log, pos);                      // 64 threads: a warp a chunk
  cudaMemcpy(h, log, sizeof h, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 512; ++i) printf("%d ", h[i]);
  printf("\n");
  return 0;
}
"""


def test_blocks_of_128_threads_run_four_warps_per_chunk(tmp_path):
    made = compile_program(FOUR_WARPS, tmp_path / "plain")
    assert made.ok and made.rewrite.lockstep == ["order"], made.diagnostics
    wide = [int(w) for w in run(made.exe, "w").stdout.split()]
    chunk = list(range(128))
    assert wide[:256] == chunk + chunk  # threads 0-127 take iteration 0, then iteration 1
    small = [int(w) for w in run(made.exe, "s").stdout.split()]
    warp = list(range(32))
    assert small[:128] == warp + warp + [t + 32 for t in warp + warp]  # one warp at a time


# Warp-shared math where only some warps share (rows of 16 or 64 threads), under partial masks
# (a tail block, a branch taken by every third thread), in 4-warp and 1-warp chunks: the copy
# must give the thread loop's bits, and compute fewer exponentials where a warp shares its row.
MIXED_ROWS = r"""
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstring>
static std::atomic<long> calls{0};
extern "C" float __real_expf(float);
extern "C" float __wrap_expf(float x) { calls.fetch_add(1, std::memory_order_relaxed); return __real_expf(x); }
__global__ void rows(const float* A, float* C, int n, int w) {
  int t = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
  if (t >= n) return;
  int row = t / w;
  float s = 0.f;
  for (int j = 0; j < 8; ++j) {
    float e = expf(A[row * 8 + j] - 1.0f);
    s += e;
    float l = logf(1.0f + A[row * 8 + j] * A[row * 8 + j]);
    s -= 0.5f * l;
  }
  if (t % 3 == 0) {
    for (int j = 0; j < 4; ++j) s += sinf(A[row * 8 + j]) * expf(-A[row * 8 + j]);
  }
  C[t] = s;
}
int main() {
  const int n = 1000;  // not a multiple of any block: the last block is partial
  static float h[n * 8], got[n];
  for (int i = 0; i < n * 8; ++i) h[i] = (float)((i * 37) % 101) / 29.0f - 1.5f;
  float *A, *C;
  cudaMalloc(&A, sizeof h); cudaMalloc(&C, sizeof got);
  cudaMemcpy(A, h, sizeof h, cudaMemcpyHostToDevice);
  const dim3 shapes[2] = {dim3(32, 4), dim3(32, 3)};  // 128 threads: 4 warps a chunk; 96: one
  for (const dim3& b : shapes)
    for (int w : {16, 64}) {
      const int per = b.x * b.y;
      long before = calls.load();
      rows<<<(n + per - 1) / per, b>>>(A, C, n, w);
      cudaDeviceSynchronize();
      long used = calls.load() - before;
      cudaMemcpy(got, C, sizeof got, cudaMemcpyDeviceToHost);
      unsigned long long sum = 0;
      for (int i = 0; i < n; ++i) { unsigned u; memcpy(&u, &got[i], 4); sum = sum * 1000003ull + u; }
      printf("%d %d %llu %ld\n", per, w, sum, used);
    }
  return 0;
}
"""


@pytest.mark.parametrize("schedule", ["forward", "reverse"])
def test_warp_shared_math_gives_the_thread_loops_bits(tmp_path, schedule):
    made = compile_program(MIXED_ROWS, tmp_path / "plain", extra_flags=["-Wl,--wrap=expf"])
    assert made.ok and made.rewrite.lockstep == ["rows"], made.diagnostics

    def results(lockstep: bool) -> dict[tuple[str, str], tuple[str, int]]:
        proc = run(made.exe, schedule=schedule, lockstep=lockstep)
        assert proc.returncode == 0, proc.stderr
        return {(p, w): (bits, int(used)) for p, w, bits, used in
                (line.split() for line in proc.stdout.splitlines())}

    copy, loop = results(True), results(False)
    assert {k: v[0] for k, v in copy.items()} == {k: v[0] for k, v in loop.items()}
    for per in ("128", "96"):
        # rows of 64 threads: one warp, one row (the tail chunk and the branch, whose math reads
        # memory under a partial mask, still compute per lane); rows of 16: nothing shared
        assert copy[(per, "64")][1] * 3 < loop[(per, "64")][1], (per, copy, loop)
        assert copy[(per, "16")][1] == loop[(per, "16")][1], (per, copy, loop)


def test_a_text_is_rewritten_once_for_every_build_and_each_caller_gets_its_own_copy(monkeypatch):
    """A thorough check builds one source three times (plain, ASan, race): one rewrite serves
    them, and a warning one caller adds never reaches the next."""
    from validators.cpu import rewrite as rw

    calls = []
    real = rw._rewrite
    monkeypatch.setattr(rw, "_rewrite", lambda *a: calls.append(a) or real(*a))
    source = ("__global__ void k(float* x) { x[threadIdx.x] *= 2.0f; }\n"
              "int main() { float* d; cudaMalloc(&d, 128); k<<<1, 32>>>(d); return 0; }\n")
    first = rw.rewrite(source, filename="memo_test.cu")
    first.warnings.append("a caller's note")
    first.launches.clear()
    again = rw.rewrite(source, filename="memo_test.cu")
    assert len(calls) == 1
    assert again.warnings == [] and len(again.launches) == 1 and again.text == first.text
    assert again.lockstep == real(source, "memo_test.cu", True, frozenset()).lockstep
    rw.rewrite(source, filename="memo_test.cu", lockstep=False)
    assert len(calls) == 2  # another argument, another rewrite


COMMENTED_PARAMS = {
    "kernels.cuh": """\
__global__ void scale(
    float *__restrict__ out,        //output: scaled values
    const float *__restrict__ in,   //input: values
    const int n)  /* the count */
{
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float s = 0.f;
  for (int k = 0; k < 4; k++) s += in[i] * k;
  if (i < n) out[i] = s;
}
""",
    "main.cu": r"""#include <cstdio>
#include "kernels.cuh"
int main() {
  const int n = 64;
  float h[n], *din, *dout;
  for (int i = 0; i < n; i++) h[i] = i;
  cudaMalloc(&din, sizeof h); cudaMalloc(&dout, sizeof h);
  cudaMemcpy(din, h, sizeof h, cudaMemcpyHostToDevice);
  scale<<<2, 32>>>(dout, din, n);
  cudaMemcpy(h, dout, sizeof h, cudaMemcpyDeviceToHost);
  printf("%g %g\n", h[10], h[63]);
  return 0;
}
""",
}


def test_a_kernel_whose_parameters_carry_comments_gets_a_copy_that_compiles(tmp_path):
    """particles' collideK: the copy's parameter list is one line, and the first `//` comment
    swallowed the rest of it."""
    header = COMMENTED_PARAMS["kernels.cuh"]
    result = rewrite(header, filename="kernels.cuh")
    assert result.lockstep == ["scale"]
    signature = next(ln for ln in result.text.splitlines() if "void __cudashim_ls_scale(" in ln)
    assert "//" not in signature and "/*" not in signature
    assert signature.endswith("float *__restrict__ out, const float *__restrict__ in, const int n) {")
    # With the launch in the same file the copy runs.
    source = header + COMMENTED_PARAMS["main.cu"].replace('#include "kernels.cuh"\n', "")
    made, proc = _compile_and_run(tmp_path, source)
    assert made.rewrite.lockstep == ["scale"], made.diagnostics
    assert proc.stdout.split() == ["60", "378"]


def test_a_copy_in_a_header_that_does_not_compile_costs_nothing_but_a_note(tmp_path, monkeypatch):
    """g++ names the copy only where it says which function an error is in; for a kernel in a
    header it did not, and the build without copies was never tried. An error on the lines of a
    copied kernel now tries it (the copy's own error simulated: its parameters joined with their
    comments, as before they were dropped)."""
    from validators.cpu import lockstep
    from validators.cpu.rewrite import copy_errors
    from validators.cpu.syntax import text

    monkeypatch.setattr(lockstep._Kernel, "_one_line", lambda self, n: " ".join(text(self.src, n).split()))
    files = {name: f"// {tmp_path.name}\n{code}" for name, code in COMMENTED_PARAMS.items()}  # not memoised
    made = compile_program("", tmp_path / "b", files=files, units=["main.cu"])
    assert made.ok, made.diagnostics
    assert "lockstep copies left out" in made.diagnostics and "kernels.cuh:" in made.diagnostics
    assert made.rewrite.lockstep == []
    assert run(made.exe).stdout.split() == ["60", "378"]
    # The lines of kernels with copies, by file: an error elsewhere is the program's alone.
    lines = [("kernels.cuh", 2, 11)]
    assert copy_errors("In file included from main.cu:3:\nkernels.cuh:5:32: error: expected ')'\n", lines)
    assert copy_errors("/tmp/b/./sub/kernels.cuh:2:1: error: x\n", [("sub/kernels.cuh", 2, 11)])
    assert not copy_errors("main.cu:5:3: error: 'x' was not declared\n", lines)
    assert not copy_errors("kernels.cuh:12:3: error: 'x' was not declared\n", lines)
    assert not copy_errors("other_kernels.cuh:5:3: error: x\n", lines)
