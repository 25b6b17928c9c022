"""`python -m validators run` options on the cpu backend, as a user runs them (subprocesses):
--variant, --schedule, --cpu-time, --memory, --keep-outputs, and host flags (-fopenmp)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

# Writes two files (one in a subfolder), leaves its input alone, and reports which thread of a
# block ran first (the schedule) and whether a 5 GiB allocation succeeded (the memory cap).
PROGRAM = r"""
#include <cstdio>
#include <cstdlib>
#include <sys/stat.h>
__global__ void first(int* order, int* count) {
  order[atomicAdd(count, 1)] = threadIdx.x;
}
int main(int argc, char** argv) {
  int *order, *count;
  cudaMallocManaged(&order, 64 * sizeof(int));
  cudaMallocManaged(&count, sizeof(int));
  *count = 0;
  first<<<1, 64>>>(order, count);
  cudaDeviceSynchronize();
  FILE* in = fopen("input.txt", "r");
  int v = 0;
  if (!in || fscanf(in, "%d", &v) != 1) return 3;
  FILE* out = fopen("result.txt", "w");
  fprintf(out, "%d\n", v * 2);
  fclose(out);
  mkdir("sub", 0755);
  out = fopen("sub/data.bin", "wb");
  fwrite(order, sizeof(int), 64, out);
  fclose(out);
  void* big = malloc(5ull << 30);
  printf("first %d big %s\n", order[0], big ? "ok" : "null");
  return 0;
}
"""

SPIN = r"""
#include <cstdio>
int main() {
  volatile unsigned long long x = 0;
  for (unsigned long long i = 0; i < 40000000000ull; ++i) x += i;
  printf("%llu\n", (unsigned long long)x);
}
"""

OVERFLOW = r"""
#include <cstdio>
__global__ void k(int* a, int n) { a[threadIdx.x] = n; }
int main() {
  int* a;
  cudaMalloc(&a, 32 * sizeof(int));
  k<<<1, 33>>>(a, 1);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
}
"""

OPENMP = r"""
#include <cstdio>
#include <omp.h>
int main() {
  int n = 0;
#pragma omp parallel num_threads(3)
  {
#pragma omp atomic
    n++;
  }
#ifdef _OPENMP
  printf("openmp %d\n", n);
#else
  printf("no openmp %d\n", n);
#endif
}
"""


def source(tmp_path: Path, name: str, text: str) -> Path:
    # Each program in a folder of its own: `run` puts the program's folder on the include path.
    folder = tmp_path / name.split(".")[0]
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "validators", "run", "--backend", "cpu", *args],
                          capture_output=True, text=True, env=dict(os.environ), timeout=300)


def report(*args: str) -> dict:
    r = cli(*args, "--json")
    assert r.stdout.startswith("{"), r.stderr
    return json.loads(r.stdout)


@pytest.fixture
def folder(tmp_path) -> Path:
    d = tmp_path / "prog"
    d.mkdir()
    (d / "main.cu").write_text(PROGRAM)
    (d / "input.txt").write_text("21\n")
    return d


def test_keep_outputs_gets_the_files_the_program_wrote(folder, tmp_path):
    keep = tmp_path / "kept"
    rep = report(str(folder / "main.cu"), "--with-dir", "--keep-outputs", str(keep))
    assert rep["status"] == "passed", rep
    assert sorted(rep["outputs"]) == [str(keep / "result.txt"), str(keep / "sub" / "data.bin")]
    assert (keep / "result.txt").read_text() == "42\n"
    assert len((keep / "sub" / "data.bin").read_bytes()) == 64 * 4
    assert not (keep / "input.txt").exists() and not (keep / "main.cu").exists()


def test_schedule_reaches_the_runtime(folder):
    forward = report(str(folder / "main.cu"), "--with-dir", "--schedule", "forward")
    reverse = report(str(folder / "main.cu"), "--with-dir", "--schedule", "reverse")
    seeded = report(str(folder / "main.cu"), "--with-dir", "--schedule", "random:7")
    assert forward["stdout"].startswith("first 0 ") and forward["schedule"] == "forward"
    assert reverse["stdout"].startswith("first 63 ")
    assert seeded["status"] == "passed", seeded


def _strict_overcommit() -> bool:
    try:
        return Path("/proc/sys/vm/overcommit_memory").read_text().strip() == "2"
    except OSError:
        return False


@pytest.mark.skipif(_strict_overcommit(), reason="the kernel refuses untouched 5 GiB mappings")
def test_memory_limit_default_allows_a_5_gib_allocation_and_can_be_lowered(folder):
    default = report(str(folder / "main.cu"), "--with-dir")
    assert default["stdout"].strip().endswith("big ok"), default
    capped = report(str(folder / "main.cu"), "--with-dir", "--memory", "2G")
    assert capped["stdout"].strip().endswith("big null"), capped
    assert capped["limits"]["memory_bytes"] == 2 << 30


def test_cpu_time_follows_the_timeout_and_can_be_set(tmp_path):
    prog = source(tmp_path, "spin.cu", SPIN)
    rep = report(str(prog), "--timeout", "120", "--cpu-time", "1")
    assert rep["limit_hit"] == "cpu", (rep["reason"], rep["stderr"])
    assert rep["limit_hit"] == "cpu" and rep["run_seconds"] < 60
    # Without --cpu-time the CPU budget is the wall clock on every core, not a fixed 60 s.
    prog.write_text("int main() { return 0; }\n")
    rep = report(str(prog), "--timeout", "120")
    assert rep["limits"]["cpu_seconds"] == 120 * len(os.sched_getaffinity(0))


def test_asan_variant_reports_the_overflow(tmp_path):
    prog = source(tmp_path, "overflow.cu", OVERFLOW)
    rep = report(str(prog), "--variant", "asan")
    assert rep["status"] == "runtime_error" and "AddressSanitizer" in rep["reason"], rep
    assert rep["variant"] == "asan"


@pytest.mark.parametrize("flags", [["-X=-fopenmp"], ["-X=-Xcompiler=-fopenmp"]])
def test_openmp_flags_reach_the_compiler(tmp_path, flags):
    prog = source(tmp_path, "omp.cpp", OPENMP)
    rep = report(str(prog), *flags, "-X=--use_fast_math")
    assert rep["status"] == "passed" and rep["stdout"].strip() == "openmp 3", rep
    assert any("--use_fast_math not passed to g++" in n for n in rep["build_notes"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--variant", "tsan"], "bad --variant 'tsan'"),
        (["--schedule", "sideways"], "bad --schedule 'sideways'"),
        (["--memory", "12Q"], "bad --memory '12Q'"),
        (["--cpu-time", "-1"], "bad --cpu-time '-1'"),
        (["--timeout", "0"], "bad --timeout 0"),
        (["--thorough", "--variant", "asan"], "give --thorough or --variant/--schedule"),
    ],
)
def test_bad_options_are_one_line_errors(folder, args, message):
    r = cli(str(folder / "main.cu"), *args)
    assert r.returncode == 2 and r.stderr.startswith(f"error: {message}"), r.stderr


def test_keep_outputs_must_be_a_directory(folder):
    r = cli(str(folder / "main.cu"), "--keep-outputs", str(folder / "input.txt"))
    assert r.returncode == 2 and "exists and is not a directory" in r.stderr, r.stderr


def test_a_folder_closed_to_other_users_is_a_clear_error(tmp_path):
    from validators.sandbox import sandbox_mode

    if sandbox_mode() != "namespaces+uid":
        pytest.skip("only a sandbox with its own uid cannot read a 0700 folder")
    prog = source(tmp_path, "closed.cu", "int main() { return 0; }\n")
    prog.parent.chmod(0o700)
    r = cli(str(prog))
    assert r.returncode == 2 and "is not readable by other users (mode 700)" in r.stderr, r.stderr
    prog.parent.chmod(0o755)
    assert cli(str(prog)).returncode == 0


INTERLEAVE = (Path(__file__).resolve().parent / "cpu_programs" / "interleave.cu").read_text()


def test_no_lockstep_runs_one_thread_at_a_time(tmp_path):
    prog = source(tmp_path, "interleave.cu", INTERLEAVE)
    lanes = report(str(prog))
    threads = report(str(prog), "--no-lockstep")
    assert lanes["stdout"].split() == "0 1 2 3 0 1 2 3".split(), lanes
    assert threads["stdout"].split() == "0 0 1 1 2 2 3 3".split(), threads


# Self-checking, with a missing __syncthreads: the second warp reads what the first wrote to
# shared memory, which holds only when the first warp happens to run first.
MISSING_SYNC = r"""
#include <cstdio>
__global__ void shift(int* out) {
  __shared__ int s[64];
  int t = threadIdx.x;
  s[t] = t;
  SYNC
  out[t] = s[t >= 32 ? t - 32 : t];
}
int main() {
  int* d; cudaMalloc(&d, 64 * sizeof(int));
  shift<<<1, 64>>>(d);
  int h[64]; cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int t = 0; t < 64; t++) bad += h[t] != (t >= 32 ? t - 32 : t);
  printf("bad %d\n", bad);
  return bad == 0 ? 0 : 1;
}
"""


def test_thorough_runs_every_build_and_schedule_and_a_race_fails_it(tmp_path):
    """Issue 26, item 7: a racy self-checking program passed `validators run` in the forward
    order; --thorough runs the checking builds under their schedules with poisoned memory."""
    tmp_path.chmod(0o755)  # the sandbox builds as another user
    racy = tmp_path / "racy.cu"
    racy.write_text(MISSING_SYNC.replace("SYNC", ""))
    assert report(str(racy))["status"] == "passed"  # one run, forward: the race hides
    rep = report(str(racy), "--thorough")
    assert rep["status"] != "passed", rep
    assert rep["runs"][-1]["status"] != "passed" and len(rep["runs"]) >= 2, rep["runs"]
    honest = tmp_path / "honest.cu"
    honest.write_text(MISSING_SYNC.replace("SYNC", "__syncthreads();"))
    rep = report(str(honest), "--thorough")
    assert rep["status"] == "passed", rep
    assert [(r["variant"], r["schedule"]) for r in rep["runs"]] == [
        ("asan", "forward"), ("asan", "reverse"), ("plain", "forward"), ("race", "reverse")]


def test_thorough_replaces_a_race_build_out_of_time_by_the_plain_build_and_says_so(tmp_path):
    """As a check does: the race detector records every write, so its build can run out of
    time where the program's plain build does not (cuda-samples' StreamPriorities: plain 2 s,
    race over 120 s). `--thorough` reported that as the program's `timeout`."""
    tmp_path.chmod(0o755)  # the sandbox builds as another user
    prog = source(tmp_path, "slow_race.cu", r"""
#include <cstdio>
#include <unistd.h>
namespace cudashim { bool race_build(); }
__global__ void twice(int* v) { v[threadIdx.x] *= 2; }
int main() {
  if (cudashim::race_build()) sleep(60);  // stands for a detector many times slower
  int* v;
  cudaMallocManaged(&v, 32 * sizeof(int));
  for (int i = 0; i < 32; ++i) v[i] = i;
  twice<<<1, 32>>>(v);
  cudaDeviceSynchronize();
  printf("%s\n", v[31] == 62 ? "PASS" : "FAIL");
  return 0;
}
""")
    rep = report(str(prog), "--thorough", "--timeout", "6")
    assert rep["status"] == "passed", rep
    assert rep["runs"][-1] == {"variant": "plain", "schedule": "reverse", "status": "passed", "reason": ""}, rep["runs"]
    assert any(n.startswith("the race build's reverse run stopped (timed out")
               and n.endswith("the plain build's run judged it instead") for n in rep["notes"]), rep["notes"]
