"""`validators run` reports the run's own time split (issue 27, target 3): start-up, host code,
kernels, copies and exit, measured by the cpu runtime (CUDASHIM_RUN_TIMING) and read back.

Real runs through the CLI in the sandbox. No assertion on a duration: the checks are structural
(counts, parts that add up to the whole) and relative (a program that spends its time on the
host shows more host than kernel time, and the other way round)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from validators.run_timing import RunReport, parse, split

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="g++ not installed")

# HOST_ITERS of host arithmetic, then three launches of a kernel of KERNEL_ITERS per thread;
# copies: two uploads, one 2D read-back (one copy, whatever its rows), one fill.
PROGRAM = r"""
#include <cstdio>
#ifndef HOST_ITERS
#define HOST_ITERS 1
#endif
#ifndef KERNEL_ITERS
#define KERNEL_ITERS 1
#endif
__global__ void spin(float* a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float x = a[i];
  for (int k = 0; k < KERNEL_ITERS; ++k) x = x * 0.999f + 0.001f;
  a[i] = x;
}
int main() {
  const int n = 1 << 14;
  static float h[1 << 14];
  volatile double acc = 0;
  for (long k = 0; k < HOST_ITERS; ++k) acc = acc * 0.5 + k;
  for (int i = 0; i < n; ++i) h[i] = i;
  float *d, *e;
  cudaMalloc(&d, n * 4);
  cudaMalloc(&e, n * 4);
  cudaMemcpy(d, h, n * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(e, h, n * 4, cudaMemcpyHostToDevice);
  cudaMemset(e, 0, n * 4);
  for (int r = 0; r < 3; ++r) spin<<<n / 128, 128>>>(d, n);
  cudaMemcpy2D(h, 64 * 4, d, 64 * 4, 64 * 4, n / 64, cudaMemcpyDeviceToHost);
  printf("%f %f\n", h[7], (double)acc);
  return 0;
}
"""

PARTS = ("startup_s", "host_s", "kernels_s", "copies_s", "exit_s")


def _run(tmp_path: Path, source: str, *extra: str, json_out: bool = True) -> subprocess.CompletedProcess:
    # A folder of its own, readable by the sandbox's build user (tmp_path is 0700).
    folder = tmp_path / "prog"
    folder.mkdir(parents=True, exist_ok=True)
    prog = folder / "prog.cu"
    prog.write_text(source)
    env = {**os.environ, "CKD_ALLOW_WEAK_SANDBOX": "1"}
    cmd = [sys.executable, "-m", "validators", "run", str(prog), "--backend", "cpu",
           "--timeout", "120", *extra, *(["--json"] if json_out else [])]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)


def _timing(tmp_path: Path, *defines: str) -> dict:
    out = _run(tmp_path, PROGRAM, *(f"-D{d}" for d in defines))
    assert out.returncode == 0, out.stdout + out.stderr
    report = json.loads(out.stdout)
    assert report["timing"] is not None, report
    return report["timing"]


def test_split_counts_every_launch_and_copy_and_adds_up(tmp_path):
    t = _timing(tmp_path)
    assert t["launches"] == 3
    assert t["copy_calls"] == 4  # two uploads, a fill, a 2D read-back counted once
    assert all(t[k] >= 0 for k in PARTS)
    # The parts are disjoint spans of the run's wall time: they add up to it (rounding aside).
    assert sum(t[k] for k in PARTS) == pytest.approx(t["total_s"], abs=0.002)
    assert t["startup_s"] > 0 and t["kernels_s"] > 0


def test_split_follows_where_the_program_spends_its_time(tmp_path):
    host_heavy = _timing(tmp_path / "h", "HOST_ITERS=100000000", "KERNEL_ITERS=1")
    kernel_heavy = _timing(tmp_path / "k", "HOST_ITERS=1", "KERNEL_ITERS=20000")
    assert host_heavy["host_s"] > host_heavy["kernels_s"]
    assert kernel_heavy["kernels_s"] > kernel_heavy["host_s"]
    assert kernel_heavy["kernels_s"] > host_heavy["kernels_s"]
    assert host_heavy["host_s"] > kernel_heavy["host_s"]


def test_human_output_shows_the_split_and_kept_outputs_leave_the_report_out(tmp_path):
    keep = tmp_path / "kept"
    out = _run(tmp_path, PROGRAM, "--keep-outputs", str(keep), json_out=False)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "run split: start-up" in out.stdout and "(3 launches)" in out.stdout
    assert not (keep / ".ckd-run-timing").exists()


def test_a_program_that_takes_the_report_file_still_runs_and_reports_none(tmp_path):
    taker = PROGRAM.replace("int main() {", "#include <sys/stat.h>\nint main() {\n"
                            "  mkdir(\".ckd-run-timing\", 0755);", 1)
    out = _run(tmp_path, taker)
    assert out.returncode == 0, out.stdout + out.stderr
    assert json.loads(out.stdout)["timing"] is None


def test_parse_and_split_refuse_what_is_not_this_runs_report():
    good = "start 10.0\nend 12.0\nkernels 0.5 2\ncopies 0.25 3\n"
    report = parse(good)
    assert report == RunReport(10.0, 12.0, 0.5, 2, 0.25, 3)
    s = split(report, spawned=9.0, returned=12.5)
    assert (s.startup_s, s.host_s, s.kernels_s, s.copies_s, s.exit_s, s.total_s) == (
        1.0, 1.25, 0.5, 0.25, 0.5, 3.5)
    assert split(report, spawned=10.5, returned=12.5) is None  # started before the sandbox
    assert split(report, spawned=9.0, returned=11.0) is None  # ended after it
    for bad in ("", "start x\nend 1\nkernels 0 0\ncopies 0 0\n", good.replace("end 12.0", "end 9.0"),
                good.replace("kernels 0.5 2", "kernels -1 2"), "start 1\nend 2\n"):
        assert parse(bad) is None, bad


# The block workers of a run follow the cores it may use, a cgroup CPU quota included (a
# container's --cpus or a Kubernetes limit, which the affinity mask does not show).
def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def test_usable_cores_honours_a_cgroup_quota_anywhere_above_the_process(tmp_path):
    from validators.backends.cpu import cgroup_cpu_quota, usable_cores

    affinity = len(os.sched_getaffinity(0))
    v2 = tmp_path / "v2"
    _tree(v2, {"proc": "0::/pod/ckd\n", "pod/cpu.max": "50000 100000\n", "pod/ckd/cpu.max": "max 100000\n"})
    assert cgroup_cpu_quota(v2, v2 / "proc") == 0.5
    assert usable_cores(v2, v2 / "proc") == 1
    v1 = tmp_path / "v1"
    _tree(v1, {"proc": "4:memory:/x\n2:cpu,cpuacct:/x\n", "cpu,cpuacct/x/cpu.cfs_quota_us": "250000\n",
               "cpu,cpuacct/x/cpu.cfs_period_us": "100000\n", "cpu,cpuacct/cpu.cfs_quota_us": "-1\n",
               "cpu,cpuacct/cpu.cfs_period_us": "100000\n"})
    assert cgroup_cpu_quota(v1, v1 / "proc") == 2.5
    assert usable_cores(v1, v1 / "proc") == min(affinity, 3)
    none = tmp_path / "none"
    _tree(none, {"proc": "0::/\n", "cpu.max": "max 100000\n"})
    assert cgroup_cpu_quota(none, none / "proc") is None
    assert usable_cores(none, none / "proc") == affinity
    bad = tmp_path / "bad"
    _tree(bad, {"proc": "0::/a\n", "a/cpu.max": "lots\n"})
    assert usable_cores(bad, bad / "proc") == affinity  # unreadable: the mask alone
    assert usable_cores(tmp_path / "absent", tmp_path / "absent" / "proc") == affinity
