"""Issue 22: what a real GPU does to the cuda backend, simulated here (no GPU).

- the driver connects to the MPS control socket and would write a JIT cache in $HOME at
  initialisation: a stand-in program does both, and the access check must allow exactly the
  driver's paths on `cuda` (and nothing more on `cpu`);
- "no GPU" text from a program while a GPU answers the probe is the program's failure, not a
  missing GPU (a probe that stops answering is a lost GPU);
- the architecture follows the device (`sm_90a` on compute capability 9.0), and a configured one
  the device cannot run is refused with the reason.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from c_programs import build_c_programs

from schemas import CompileInfo, InputCase, Program, Reference, Status, Task, TensorSpec
from validators import anticheat
from validators.backends import Executable, RunOutcome
from validators.backends import cuda as cuda_mod
from validators.backends.cpu import CpuBackend
from validators.backends.cuda import CudaBackend, GpuProbe, arch_runs_on, device_arch
from validators.nvcc import NvccOptions
from validators.sandbox import Limits, run_sandboxed, workspace

DRIVER_STANDIN = r"""
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
/* What libcuda does at cuInit (seen on an H100, driver 580): connect to the MPS control daemon
   (ENOENT without one), read the application profiles under /etc/nvidia and $HOME/.nv, and open
   the JIT cache under $HOME unless CUDA_CACHE_DISABLE=1. Then the program's own work. */
static void try_read(const char* dir, const char* name) {
  char p[512]; snprintf(p, sizeof p, "%s/%s", dir, name);
  int fd = open(p, O_RDONLY); if (fd >= 0) close(fd);
}
int main(void) {
  const char* profiles[] = {"nvidia-application-profiles-rc", "nvidia-application-profiles-rc.d",
                            "nvidia-application-profile-globals-rc"};

  const char* dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
  struct sockaddr_un a; memset(&a, 0, sizeof a); a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s/control", dir ? dir : "/tmp/nvidia-mps");
  int s = socket(AF_UNIX, SOCK_STREAM, 0);
  if (s >= 0) { connect(s, (struct sockaddr*)&a, sizeof a); close(s); }
  unlink("/dev/char/195:255");  /* it replaces the device nodes' links */
  char nv[512]; snprintf(nv, sizeof nv, "%s/.nv", getenv("HOME"));
  for (int i = 0; i < 3; i++) { try_read("/etc/nvidia", profiles[i]); try_read(nv, profiles[i]); }
  const char* off = getenv("CUDA_CACHE_DISABLE");
  if (!off || strcmp(off, "1") != 0) {
    char p[512]; snprintf(p, sizeof p, "%s/.nv/ComputeCache/index", getenv("HOME"));
    int fd = open(p, O_RDONLY); if (fd >= 0) close(fd);
  }
  FILE* f = fopen("data/x.bin", "rb"); float x[4]; if (!f || fread(x, 4, 4, f) != 4) return 1; fclose(f);
  f = fopen("data/y.bin", "wb"); fwrite(x, 4, 4, f); fclose(f);
  return 0;
}
"""

TASK = Task(
    name="copy4", description="y = x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=[4])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=[4])],
    cases=[InputCase(name="a", seed=1)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x']}\n"),
)


def _exe(variant: str = "plain") -> Executable:
    return Executable(path=None, compile=CompileInfo(ok=True), backend="cuda", variant=variant)


@pytest.fixture(scope="module")
def standin(tmp_path_factory) -> Path:
    if shutil.which("gcc") is None:
        pytest.skip("gcc not installed")
    return build_c_programs(tmp_path_factory.mktemp("driver"), {"driver": DRIVER_STANDIN})["driver"]


def _access_reasons(backend, program: Path) -> list[str]:
    from validators.cases import materialize, write_arrays

    shim = anticheat.shim_library()
    if shim is None:
        pytest.skip("no access shim here")
    limits = Limits(cpu_seconds=10, wall_seconds=30)
    _, env = backend.command(_exe(), []) if isinstance(backend, CudaBackend) else ([], {})
    with workspace(limits) as root:
        work = root / "work"
        work.mkdir()
        write_arrays(materialize(TASK, TASK.cases[0]), work)
        env = {**env, "CKD_ACCESS_LOG": str(work / anticheat.ACCESS_LOG)}
        out = run_sandboxed([str(program)], work, limits=limits, env=env, preload=shim)
        assert out.exit_code == 0, out.stderr
        entries = anticheat.read_access_log(work)
        own = (str(program.parent) + "/", str(shim.parent) + "/", *backend.runtime_paths())
        return anticheat.access_reasons(entries, work, TASK, extra_allowed=own,
                                        extra_reads=backend.runtime_reads(),
                                        extra_removes=backend.runtime_removes())


def test_the_drivers_own_files_are_allowed_on_cuda_only(standin):
    assert _access_reasons(CudaBackend(gpu_check=False), standin) == []
    reasons = _access_reasons(CpuBackend(), standin)
    assert any("/tmp/nvidia-mps/control" in r for r in reasons), reasons
    assert any("/etc/nvidia/nvidia-application-profiles-rc" in r for r in reasons), reasons
    assert any("/dev/char/195:255" in r for r in reasons), reasons


def test_only_reading_the_drivers_profiles_in_home_is_allowed(tmp_path):
    """The driver's reads of $HOME/.nv (the work folder) and its removals in /dev/char pass on
    cuda; a program writing there, reading another file there or removing elsewhere is caught."""
    (tmp_path / "data").mkdir()
    task_files = [("r", "data/x.bin"), ("w", "data/y.bin")]
    backend = CudaBackend(gpu_check=False)
    reads = backend.runtime_reads()

    def reasons(extra):
        return anticheat.access_reasons(task_files + extra, tmp_path, TASK,
                                        extra_reads=reads, extra_removes=backend.runtime_removes())

    assert reasons([("r", ".nv/nvidia-application-profiles-rc")]) == []
    assert reasons([("w", ".nv/nvidia-application-profiles-rc")])
    assert reasons([("r", ".nv/other")])
    assert reasons([("d", "/dev/char/195:0")]) == []
    assert reasons([("d", "/dev/shm/x")])


def test_the_jit_cache_is_off_in_cuda_runs():
    _, env = CudaBackend(gpu_check=False).command(_exe(), [])
    assert env["CUDA_CACHE_DISABLE"] == "1"


def test_an_operators_mps_pipe_directory_is_the_drivers(monkeypatch):
    monkeypatch.setenv("CUDA_MPS_PIPE_DIRECTORY", "/var/run/mps-pipe")
    assert "/var/run/mps-pipe/" in CudaBackend(gpu_check=False).runtime_paths()


class _Probes:
    """probe_gpu's stand-in: answers from a script, and counts how often the cache is cleared."""

    def __init__(self, *answers: GpuProbe) -> None:
        self.answers = list(answers)
        self.cleared = 0

    def __call__(self) -> GpuProbe:
        return self.answers[0] if len(self.answers) == 1 else self.answers.pop(0)

    def cache_clear(self) -> None:
        self.cleared += 1


H100 = GpuProbe(1, "cudaSuccess", "NVIDIA H100 80GB HBM3 sm_90")
GONE = GpuProbe(0, "cudaErrorNoDevice")


def test_no_gpu_text_with_a_gpu_present_is_a_runtime_error(monkeypatch):
    probes = _Probes(H100)
    monkeypatch.setattr(cuda_mod, "probe_gpu", probes)
    out = RunOutcome(exit_code=1, stdout="CUDA error: no CUDA-capable device is detected\n")
    v = CudaBackend().classify(_exe(), out)
    assert v.status == Status.RUNTIME_ERROR and "a GPU answers" in v.reason, v
    assert probes.cleared == 1  # asked again, not from the cache


def test_a_gpu_lost_since_the_probe_is_needs_gpu(monkeypatch):
    monkeypatch.setattr(cuda_mod, "probe_gpu", _Probes(H100, GONE))
    out = RunOutcome(exit_code=1, stdout="cudaErrorNoDevice\n")
    v = CudaBackend().classify(_exe(), out)
    assert v.status == Status.NEEDS_GPU and "stopped answering" in v.reason, v


@pytest.mark.parametrize(("cap", "arch"), [((9, 0), "sm_90a"), ((10, 0), "sm_100a"),
                                           ((12, 0), "sm_120a"), ((8, 6), "sm_86"), ((7, 5), "sm_75")])
def test_the_architecture_follows_the_device(monkeypatch, cap, arch):
    assert device_arch(cap) == arch
    monkeypatch.delenv("CKD_CUDA_ARCH", raising=False)
    monkeypatch.setattr(cuda_mod, "probe_gpu", _Probes(GpuProbe(1, "cudaSuccess", f"GPU sm_{cap[0]}{cap[1]}")))
    assert CudaBackend().arch() == arch


def test_without_a_gpu_the_default_architecture_stays(monkeypatch):
    monkeypatch.delenv("CKD_CUDA_ARCH", raising=False)
    monkeypatch.setattr(cuda_mod, "probe_gpu", _Probes(GONE))
    assert CudaBackend().arch() == NvccOptions().arch


@pytest.mark.parametrize(("arch", "cap", "ok"), [
    ("sm_90", (9, 0), True), ("sm_90", (10, 0), True), ("sm_100", (9, 0), False),
    ("sm_90a", (9, 0), True), ("sm_90a", (10, 0), False), ("sm_100f", (10, 3), True),
    ("sm_100f", (12, 0), False), ("bogus", (9, 0), False)])
def test_which_architectures_a_device_runs(arch, cap, ok):
    assert arch_runs_on(arch, cap) is ok


def test_a_configured_architecture_the_device_cannot_run_is_refused(monkeypatch):
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    monkeypatch.setenv("CKD_CUDA_ARCH", "sm_100a")
    monkeypatch.setattr(cuda_mod, "probe_gpu", _Probes(H100))
    why = CudaBackend(options=NvccOptions()).available()
    assert why and "sm_100a" in why and "9.0" in why and "sm_90a" in why, why
    monkeypatch.setenv("CKD_CUDA_ARCH", "sm_90")
    assert CudaBackend(options=NvccOptions()).available() is None


def _fake_device_tree(root: Path) -> Path:
    dev = root / "fakedev"
    (dev / "nvidia-caps").mkdir(parents=True)
    for name in ("nvidia0", "nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools",
                 "nvidia-modeset", "nvidia-caps/nvidia-cap1"):
        (dev / name).write_text("")
    return dev


def _dev_listing(tmp_path: Path, limits: Limits) -> str:
    with workspace(limits) as root:
        work = root / "work"
        work.mkdir()
        out = run_sandboxed(["/bin/sh", "-c", "ls -1 /dev; echo caps:; ls -1 /dev/nvidia-caps"],
                            work, limits=limits)
    assert out.exit_code in (0, 2), out.stderr  # ls exits 2 where nvidia-caps is absent
    return out.stdout


def test_a_gpu_run_gets_its_gpu_and_the_caps_folder_only(tmp_path, monkeypatch):
    """A device tree with `nvidia-caps` as a folder (MIG hosts, DGX): binding it onto a file
    failed every sandbox set-up. Only a run given a GPU sees nodes, and only its GPU's."""
    from validators.sandbox import sandbox_mode

    if sandbox_mode() != "namespaces+uid":
        pytest.skip("the allow-list view needs the namespaces+uid sandbox")
    monkeypatch.setenv("CKD_DEVICE_ROOT", str(_fake_device_tree(tmp_path)))
    limits = Limits(cpu_seconds=10, wall_seconds=30)
    seen = _dev_listing(tmp_path, limits.with_overrides(gpu="1")).split()
    assert {"nvidia1", "nvidiactl", "nvidia-uvm", "nvidia-caps", "nvidia-cap1"} <= set(seen), seen
    assert not {"nvidia0", "nvidia-uvm-tools", "nvidia-modeset"} & set(seen), seen
    seen = _dev_listing(tmp_path, limits).split()
    assert not [n for n in seen if n.startswith("nvidia")], seen  # builds, references: none
    # A UUID does not name its node: every GPU's, and CUDA_VISIBLE_DEVICES picks.
    seen = _dev_listing(tmp_path, limits.with_overrides(gpu="GPU-8f1c")).split()
    assert {"nvidia0", "nvidia1"} <= set(seen), seen


def test_only_cuda_runs_ask_for_a_gpu():
    assert CudaBackend(gpu_check=False, device="2").sandbox_overrides(_exe())["gpu"] == "2"
    assert "gpu" not in CpuBackend().sandbox_overrides(_exe())


LOOPBACK_TALK = r"""
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
/* What compute-sanitizer does with its target: a TCP connection over 127.0.0.1. */
int main(void) {
  int srv = socket(AF_INET, SOCK_STREAM, 0);
  if (srv < 0) { printf("socket: %s\n", strerror(errno)); return 0; }
  struct sockaddr_in a; memset(&a, 0, sizeof a); a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t n = sizeof a;
  if (bind(srv, (struct sockaddr*)&a, sizeof a) || listen(srv, 1) || getsockname(srv, (struct sockaddr*)&a, &n)) {
    printf("listen: %s\n", strerror(errno)); return 0; }
  int c = socket(AF_INET, SOCK_STREAM, 0);
  if (connect(c, (struct sockaddr*)&a, sizeof a)) { printf("connect: %s\n", strerror(errno)); return 0; }
  int s = accept(srv, NULL, NULL); char b = 0;
  if (write(c, "k", 1) == 1 && read(s, &b, 1) == 1) printf("talked:%c\n", b);
  struct sockaddr_in out; memset(&out, 0, sizeof out); out.sin_family = AF_INET;
  out.sin_port = htons(53); inet_pton(AF_INET, "8.8.8.8", &out.sin_addr);
  int o = socket(AF_INET, SOCK_STREAM, 0);
  printf("outside:%s\n", connect(o, (struct sockaddr*)&out, sizeof out) == 0 ? "reached" : strerror(errno));
  return 0;
}
"""


def test_sanitizer_runs_get_a_private_loopback_and_nothing_else(tmp_path_factory):
    """compute-sanitizer talks to its target over 127.0.0.1: a run with `loopback` has a
    network namespace of its own with lo up (and internet sockets, which reach nothing else);
    every other run keeps AF_UNIX only."""
    from validators.sandbox import sandbox_mode

    if sandbox_mode() != "namespaces+uid":
        pytest.skip("the C launcher's namespaces are needed")
    prog = build_c_programs(tmp_path_factory.mktemp("lo"), {"lo": LOOPBACK_TALK})["lo"]
    limits = Limits(cpu_seconds=10, wall_seconds=30)
    for lim, expect in ((limits.with_overrides(loopback=True), "talked:k"),
                        (limits, "socket: Address family not supported")):
        with workspace(lim) as root:
            work = root / "work"
            work.mkdir()
            out = run_sandboxed([str(prog)], work, limits=lim)
        assert expect in out.stdout, out.stdout + out.stderr
        assert "outside:reached" not in out.stdout, out.stdout


SANITIZER_STANDIN = r"""#!/bin/sh
# compute-sanitizer's stand-in: --tool T --error-exitcode N TARGET ARGS. Runs the target and
# prints the summary the real tool prints for what the target says it did.
tool=$2; code=$4; shift 4
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$tool" = racecheck ]; then
  case "$out" in *shared-race*)
    echo "========= Error: Race reported between Write access at hist+0x90 in hist.cu:7"
    echo "=========     and Read access at hist+0x80 in hist.cu:7 [1024 hazards]"
    echo "========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)"; exit "$code";;
  esac
  echo "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"
else
  case "$out" in *oob*)
    echo "========= Invalid __global__ write of size 4 bytes"
    echo "========= ERROR SUMMARY: 1 error"; exit "$code";;
  esac
  echo "========= ERROR SUMMARY: 0 errors"
fi
exit $rc
"""
TARGETS = {"racy": 'int main(void){ puts("shared-race"); return 0; }',
           "oob": 'int main(void){ puts("oob"); return 0; }',
           "clean": 'int main(void){ puts("fine"); return 0; }'}


@pytest.fixture()
def sanitizer(tmp_path_factory, monkeypatch) -> dict[str, Path]:
    from validators.sandbox import sandbox_mode

    if sandbox_mode() != "namespaces+uid":
        pytest.skip("the allow-list view is what hides an unexposed target")
    tools = tmp_path_factory.mktemp("tools")
    tools.chmod(0o755)
    script = tools / "compute-sanitizer"
    script.write_text(SANITIZER_STANDIN)
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    return build_c_programs(tmp_path_factory.mktemp("targets"),
                            {k: "#include <stdio.h>\n" + v for k, v in TARGETS.items()})


def _sanitized(backend: CudaBackend, variant: str, target: Path, *, expose: bool = True):
    exe = Executable(path=target, compile=CompileInfo(ok=True), backend="cuda", variant=variant)
    argv, env = backend.command(exe, [])
    limits = Limits(cpu_seconds=10, wall_seconds=30).with_overrides(
        {k: v for k, v in backend.sandbox_overrides(exe).items() if k != "gpu"})
    with workspace(limits) as root:
        work = root / "work"
        work.mkdir()
        out = run_sandboxed(argv, work, limits=limits, env=env,
                            expose=backend.expose(exe) if expose else [])
    return exe, out


def test_a_sanitizer_run_sees_its_target_and_its_summaries_are_read(sanitizer):
    b = CudaBackend(gpu_check=False)
    _, hidden = _sanitized(b, "memcheck", sanitizer["clean"], expose=False)
    assert "fine" not in hidden.stdout  # the old set-up: the target was not in the view
    exe, out = _sanitized(b, "memcheck", sanitizer["clean"])
    assert "fine" in out.stdout and b.classify(exe, out).status is None, out
    exe, out = _sanitized(b, "memcheck", sanitizer["oob"])
    v = b.classify(exe, out)
    assert v.status == Status.RUNTIME_ERROR and "Invalid __global__ write" in v.reason, v
    exe, out = _sanitized(b, "racecheck", sanitizer["racy"])
    v = b.classify(exe, out)
    assert v.status == Status.FAILED and "racecheck" in v.reason and "hist.cu:7" in v.reason, v
    exe, out = _sanitized(b, "racecheck", sanitizer["clean"])
    assert b.classify(exe, out).status is None


def test_sanitizer_runs_get_time_for_their_slowdown_and_fall_back_to_the_plain_run():
    b = CudaBackend(gpu_check=False)
    assert b.time_scale(_exe("memcheck")) >= 10 and b.time_scale(_exe()) == 1.0
    assert b.fallback_variant("racecheck") == "plain" and b.fallback_variant("plain") is None
    assert b.sandbox_overrides(_exe("memcheck"))["loopback"] is True
    assert "loopback" not in b.sandbox_overrides(_exe())


def test_untrusted_code_is_refused_in_the_rlimits_sandbox_unless_the_operator_accepts_it(
        monkeypatch, tmp_path):
    """A GPU worker as uid 1000 without SYS_ADMIN falls back to `rlimits` (the host's network
    and view): a result there is `error` saying why, until the operator names the mode."""
    import validators.sandbox as sb
    from validators.engine import Engine

    monkeypatch.setattr(sb, "sandbox_mode", lambda: "rlimits")
    monkeypatch.delenv("CKD_SANDBOX_MODE", raising=False)
    monkeypatch.delenv("CKD_ALLOW_WEAK_SANDBOX", raising=False)
    with pytest.raises(sb.SandboxError, match="CKD_ALLOW_WEAK_SANDBOX=1"):
        sb.run_sandboxed(["/bin/true"], tmp_path)
    res = Engine(CpuBackend()).check(TASK, Program(source="int main(){}"))
    assert res.status == Status.ERROR and "rlimits" in res.reason, (res.status, res.reason)
    monkeypatch.setenv("CKD_ALLOW_WEAK_SANDBOX", "1")
    assert sb.run_sandboxed(["/bin/true"], tmp_path).exit_code == 0


def test_operator_named_driver_folders_reach_gpu_runs(tmp_path, monkeypatch):
    """A host whose libcuda.so.1 is found only through LD_LIBRARY_PATH: the operator names the
    folder, GPU runs see it read-only and get the path; the scrubbed environment kept neither."""
    from validators.sandbox import sandbox_mode

    drivers = tmp_path / "driver"
    drivers.mkdir()
    (drivers / "libcuda.so.1").write_text("stand-in")
    tmp_path.chmod(0o755)
    drivers.chmod(0o755)
    (drivers / "libcuda.so.1").chmod(0o644)
    monkeypatch.setenv("CKD_CUDA_DRIVER_DIRS", f"{drivers}:/nonexistent")
    b = CudaBackend(gpu_check=False)
    exe = Executable(path=Path("/bin/sh"), compile=CompileInfo(ok=True), backend="cuda")
    argv, env = b.command(exe, [])
    assert env["LD_LIBRARY_PATH"] == str(drivers) and b.expose(exe) == [drivers]
    if sandbox_mode() != "namespaces+uid":
        return
    limits = Limits(cpu_seconds=10, wall_seconds=30)
    with workspace(limits) as root:
        work = root / "work"
        work.mkdir()
        out = run_sandboxed(["/bin/sh", "-c", 'cat "$LD_LIBRARY_PATH/libcuda.so.1"'], work,
                            limits=limits, env=env, expose=b.expose(exe))
    assert out.stdout.strip() == "stand-in", out


def test_the_gpu_probe_runs_in_the_sandbox_as_programs_do(monkeypatch):
    """A probe run outside the sandbox said "GPU present" while the sandbox kept the driver from
    every program: it runs through `run_sandboxed` with the cuda runs' GPU and limits."""
    if shutil.which("nvcc") is None:
        pytest.skip("nvcc not installed")
    import validators.sandbox as sb

    seen: list[Limits] = []
    real = sb.run_sandboxed

    def spy(argv, workdir, **kw):
        seen.append(kw["limits"])
        return real(argv, workdir, **kw)

    monkeypatch.setattr(sb, "run_sandboxed", spy)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "3")
    monkeypatch.delenv("CKD_ASSUME_NO_GPU", raising=False)
    cuda_mod.probe_gpu.cache_clear()
    try:
        probe = cuda_mod.probe_gpu()
    finally:
        cuda_mod.probe_gpu.cache_clear()
    assert seen and seen[-1].gpu == "3" and seen[-1].memory_bytes is None, seen
    assert probe.error, probe


def test_gpu_check_says_no_gpu_here_and_exits_cleanly():
    if shutil.which("nvcc") is not None and cuda_mod.probe_gpu().ok:
        pytest.skip("a GPU answers here: scripts/gpu_check.sh runs its checks instead")
    import subprocess

    root = Path(__file__).resolve().parents[2]
    out = subprocess.run(["bash", str(root / "scripts" / "gpu_check.sh")], capture_output=True,
                         text=True, timeout=600)
    assert out.returncode == 0 and "no GPU" in out.stdout, (out.stdout, out.stderr)
