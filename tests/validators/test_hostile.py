"""Hostile programs, one class of attack each: containment holds, nothing is left behind, and
every run ends with a clear verdict (the review's classes; see validators/sandbox.py's threat
model). Tiny C programs built with gcc for the sandbox itself; CUDA programs on the cpu backend
for the verdict checks."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from c_programs import build_c_programs

from schemas import InputCase, Program, Reference, Status, Task, TensorSpec
from validators import sandbox
from validators.caps import CapExceeded, Caps, check_args
from validators.safe_fs import copy_untrusted, remove_tree, tree_usage
from validators.sandbox import Limits, run_sandboxed, sandbox_mode, workspace

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
UID_MODE = sandbox_mode() == "namespaces+uid"
needs_uid_mode = pytest.mark.skipif(not UID_MODE, reason="needs the namespaces+uid mode (root)")

FAST = Limits(cpu_seconds=4, wall_seconds=8, memory_bytes=256 << 20, file_size_bytes=64 << 20,
              max_processes=32, output_bytes=64 << 10, disk_bytes=32 << 20, max_files=2000)

C_PROGRAMS = {
    # shapes its directory (deep, wide, unreadable, looping links), then lingers with children
    "shaper": r"""
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <sys/stat.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
          int depth = atoi(argv[1]);
          for (int i = 0; i < depth; i++) { if (mkdir("d", 0700) || chdir("d")) break; }
          symlink("/", "root"); symlink("loop", "loop"); chmod(".", 0);
          if (chdir("/") == 0) {}
          for (int i = 0; i < 4; i++) if (fork() == 0) for (;;) pause();
          printf("shaped\n"); fflush(stdout);
          for (;;) pause(); }""",
    "files": r"""
        #include <stdio.h>
        #include <fcntl.h>
        #include <unistd.h>
        int main(void) {
          int made = 0;
          for (int i = 0; i < 300000; i++) { char p[32]; snprintf(p, sizeof p, "f%d", i);
            int fd = open(p, O_CREAT | O_WRONLY, 0600); if (fd < 0) break; close(fd); made++; }
          printf("made %d\n", made); return 0; }""",
    "fill": r"""
        #include <fcntl.h>
        #include <stdio.h>
        #include <unistd.h>
        int main(void) {  /* 2 GiB in 32 MiB calls, each under the per-file limit: no poll sees it */
          int ok = 0;
          for (int i = 0; i < 64; i++) { char p[16]; snprintf(p, sizeof p, "big%d", i);
            int fd = open(p, O_CREAT | O_WRONLY, 0600);
            if (fd < 0 || posix_fallocate(fd, 0, 32L << 20) != 0) break; ok++; close(fd); }
          printf("allocated %d\n", ok); return 0; }""",
    "probe": r"""
        #define _GNU_SOURCE
        #include <errno.h>
        #include <fcntl.h>
        #include <sched.h>
        #include <stdio.h>
        #include <string.h>
        #include <sys/file.h>
        #include <sys/mount.h>
        #include <sys/ptrace.h>
        #include <sys/socket.h>
        #include <sys/syscall.h>
        #include <sys/un.h>
        #include <unistd.h>
        #include <linux/keyctl.h>
        static void say(const char *what, long r) { printf("%s %s\n", what, r < 0 ? "denied" : "ALLOWED"); }
        int main(int argc, char **argv) {
          say("ptrace", ptrace(PTRACE_TRACEME, 0, 0, 0));
          say("mount", mount("none", "/tmp", "tmpfs", 0, NULL));
          say("unshare", unshare(CLONE_NEWUSER));
          say("keyctl", syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, 0));
          say("bpf", syscall(SYS_bpf, 0, 0, 0));
          say("perf_event_open", syscall(SYS_perf_event_open, 0, 0, -1, -1, 0));
          say("io_uring_setup", syscall(SYS_io_uring_setup, 1, 0));
          say("inet6", socket(AF_INET6, SOCK_STREAM, 0));
          say("netlink", socket(AF_NETLINK, SOCK_RAW, 0));
          int sv[2]; say("socketpair", socketpair(AF_UNIX, SOCK_STREAM, 0, sv));
          int s = socket(AF_UNIX, SOCK_STREAM, 0);
          struct sockaddr_un a = {0}; a.sun_family = AF_UNIX; strncpy(a.sun_path, argv[1], sizeof a.sun_path - 1);
          say("unix-connect", connect(s, (struct sockaddr *)&a, sizeof a));
          say("read-foreign", open(argv[2], O_RDONLY));
          say("read-run", open("/run", O_RDONLY | O_DIRECTORY));
          say("read-etc-passwd", open("/etc/passwd", O_RDONLY));
          return 0; }""",
    # holds an exclusive lock on a shared read-only file, or reports whether it is held
    "locker": r"""
        #include <fcntl.h>
        #include <stdio.h>
        #include <string.h>
        #include <sys/file.h>
        #include <unistd.h>
        int main(int argc, char **argv) {
          int fd = open(argv[1], O_RDONLY);
          if (!strcmp(argv[2], "hold")) { flock(fd, LOCK_EX); printf("holding\n"); fflush(stdout); sleep(4); return 0; }
          printf(flock(fd, LOCK_EX | LOCK_NB) == 0 ? "free\n" : "busy\n");
          return 0; }""",
    "reader": r"""
        #include <stdio.h>
        int main(int argc, char **argv) {
          for (int i = 1; i < argc; i++) { FILE *f = fopen(argv[i], "r"); char buf[64] = {0};
            if (f && fgets(buf, sizeof buf, f)) printf("read:%s\n", buf); else printf("denied\n"); }
          return 0; }""",
    "true": "int main(void) { return 0; }",
}


@pytest.fixture(scope="module")
def bins(tmp_path_factory) -> dict[str, Path]:
    return build_c_programs(tmp_path_factory.mktemp("hostile"), C_PROGRAMS)


def _live_children() -> set[int]:
    path = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children")
    if not path.exists():
        return set()
    alive = set()
    for p in path.read_text().split():
        try:
            if Path(f"/proc/{p}/stat").read_text().split(") ")[-1].split()[0] != "Z":
                alive.add(int(p))
        except OSError:
            continue
    return alive


@pytest.fixture(scope="module", autouse=True)
def nothing_left_behind():
    """After the whole hostile suite: no workspace of this process still mounted, and no child
    process it started still alive (every run's tree died with it). Children that other test
    modules started before (a Ray cluster, a server) are not ours to judge."""
    before = _live_children()
    yield
    mine = f"-{os.getpid()}-"
    mounted = [ln for ln in Path("/proc/self/mountinfo").read_text().splitlines()
               if "ckd-work" in ln and mine in ln]
    assert mounted == []
    # The pooled zygotes outlive any one run by design (whichever module started them first):
    # closed here, what is left is a run's tree that escaped.
    from validators import zygote

    zygote.close_all()
    deadline = time.monotonic() + 10  # a killed child may take a moment to be reaped
    while (_live_children() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {}
    for p in _live_children() - before:
        try:
            cmd = Path(f"/proc/{p}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        # what this suite starts: sandbox launchers and the programs they run, a validator
        if any(m in cmd for m in (b"ckd-launch", b"hostile", b"validators.sandbox", b"/prog")):
            left[p] = cmd[:200]
    assert left == {}, left


def _uid_processes(uid: str) -> list[int]:
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if f"\t{uid}\t" in Path(f"/proc/{pid}/status").read_text().split("Uid:")[1].split("\n")[0]:
                found.append(int(pid))
        except (OSError, IndexError):
            continue
    return found


def _cgroups() -> set[str]:
    found = sandbox._memory_cgroup_base()
    return {p.name for p in found[0].glob("ckd-*")} if found else set()


# --- 1. teardown ----------------------------------------------------------------------------

@needs_uid_mode
def test_teardown_survives_a_shaped_tree_and_kills_everything(bins, tmp_path):
    work = tmp_path / "work"  # no workspace tmpfs: the polling walk meets the shaped tree
    work.mkdir()
    shutil.copy(bins["shaper"], work / "shaper")
    try:
        out = run_sandboxed([str(work / "shaper"), "3000"], work,
                            limits=FAST.with_overrides(wall_seconds=3, max_files=10_000))
    finally:
        gone = remove_tree(work)  # 3000 deep, mode 000, looping links
    assert gone and not work.exists()
    assert out.timed_out and out.stdout.strip() == "shaped", out
    assert _uid_processes(out.extra["uid"]) == []  # the program and its children are gone
    assert f"ckd-{out.extra['uid']}" not in _cgroups()


@needs_uid_mode
def test_teardown_when_the_validator_itself_fails(bins, tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(bins["shaper"], work / "shaper")
    made: list[Path | None] = []
    make = sandbox._make_memory_cgroup
    monkeypatch.setattr(sandbox, "_make_memory_cgroup",
                        lambda uid, limit: made.append(make(uid, limit)) or made[-1])
    uids = []
    real_hand_over = sandbox._hand_over
    monkeypatch.setattr(sandbox, "_hand_over",
                        lambda w, uid, protect=(): uids.append(uid) or real_hand_over(w, uid, protect))

    def broken(self) -> bool:  # the validator's own monitoring raises mid-run
        time.sleep(0.5)
        raise RuntimeError("monitor failed")

    monkeypatch.setattr(sandbox._DiskWatch, "over", broken)
    with pytest.raises(RuntimeError, match="monitor failed"):
        run_sandboxed([str(work / "shaper"), "10"], work, limits=FAST)
    time.sleep(0.2)
    assert _uid_processes(str(uids[0])) == []  # the program and its four children are dead
    assert made and all(cg is None or not cg.exists() for cg in made)  # cgroup released


def test_walks_and_removals_handle_any_tree(tmp_path):
    root = tmp_path / "t"
    root.mkdir()
    try:
        _deep_tree_checks(root)
    finally:
        remove_tree(root)  # pytest's own clean-up recurses and would fail on this tree


def _deep_tree_checks(root: Path) -> None:
    fd = os.open(root, os.O_RDONLY)
    for _ in range(5000):  # deeper than Python's recursion limit, and than PATH_MAX
        os.mkdir("d", dir_fd=fd)
        nfd = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = nfd
    os.close(fd)
    (root / "link").symlink_to("/")
    (root / "d" / "x").write_text("x")
    os.chmod(root / "d", 0)
    usage = tree_usage(root, max_entries=100)
    assert usage.truncated  # bounded, not a full walk
    assert tree_usage(root).entries == 5002  # complete at any depth: 5000 dirs, a link, a file
    assert remove_tree(root) and not root.exists()
    assert Path("/usr").exists()  # the link was removed, not followed


# --- 2. untrusted input does not shape the sandbox -------------------------------------------

@needs_uid_mode
def test_include_like_arguments_do_not_widen_the_view(bins, tmp_path):
    secret_dir = Path("/var/tmp") / f"ckd-secret-{os.getpid()}"
    secret_dir.mkdir(mode=0o755)
    try:
        (secret_dir / "s.txt").write_text("s3cret")
        os.chmod(secret_dir / "s.txt", 0o644)
        work = tmp_path / "work"
        work.mkdir()
        out = run_sandboxed([str(bins["reader"]), f"-I{secret_dir}", str(secret_dir / "s.txt")],
                            work, limits=FAST)
        assert "s3cret" not in out.stdout and out.stdout.split() == ["denied", "denied"]
    finally:
        shutil.rmtree(secret_dir)


@needs_uid_mode
def test_program_flags_cannot_expose_a_folder_to_the_compiler(tmp_path):
    from validators.backends import get_backend
    from validators.engine import run_program

    secret_dir = Path("/var/tmp") / f"ckd-inc-{os.getpid()}"
    secret_dir.mkdir(mode=0o755)
    try:
        (secret_dir / "leak.h").write_text("#define LEAK 1\n")
        os.chmod(secret_dir / "leak.h", 0o644)
        prog = Program(source='#include "leak.h"\nint main() { return LEAK; }\n',
                       extra_flags=[f"-I{secret_dir}"])
        run = run_program(prog, get_backend("cpu"))
        assert run.status == Status.COMPILE_ERROR and "leak.h" in run.reason
    finally:
        shutil.rmtree(secret_dir)


@pytest.mark.skipif(sandbox_mode() == "rlimits", reason="needs the allow-list view")
@pytest.mark.parametrize("node", ["zero", "urandom"])
def test_an_endless_device_file_is_no_header(node):
    # g++ reads an included /dev/zero into memory until a limit stops it (GiBs per build, and
    # builds run side by side): a compiler's /dev holds null only.
    from validators.backends import get_backend
    from validators.engine import run_program

    prog = Program(source=f'#include "/dev/{node}"\nint main() {{ return 0; }}\n')
    run = run_program(prog, get_backend("cpu"))
    assert run.status == Status.COMPILE_ERROR, run.reason
    assert f"/dev/{node}: No such file" in run.reason


# --- 3. an allow-list view, a system-call filter ----------------------------------------------

@needs_uid_mode
def test_allow_list_and_seccomp(bins, tmp_path):
    sock_dir = Path("/var/tmp") / f"ckd-sock-{os.getpid()}"
    sock_dir.mkdir(mode=0o755)
    foreign = sock_dir / "other-project.txt"
    foreign.write_text("theirs")
    os.chmod(foreign, 0o644)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(sock_dir / "s.sock"))
    os.chmod(sock_dir / "s.sock", 0o777)
    srv.listen(1)
    try:
        work = tmp_path / "work"
        work.mkdir()
        out = run_sandboxed([str(bins["probe"]), str(sock_dir / "s.sock"), str(foreign)], work,
                            limits=FAST)
        got = dict(line.split() for line in out.stdout.splitlines())
        assert out.extra["view"] == "allow-list"
        for name in ("ptrace", "mount", "unshare", "keyctl", "bpf", "perf_event_open",
                     "io_uring_setup", "inet6", "netlink", "unix-connect", "read-foreign",
                     "read-run", "read-etc-passwd"):
            assert got[name] == "denied", (name, out.stdout)
        assert got["socketpair"] == "ALLOWED"  # local pairs stay usable
    finally:
        srv.close()
        shutil.rmtree(sock_dir)


@needs_uid_mode
def test_file_locks_are_no_channel_between_runs(bins, tmp_path):
    shared = "/usr/include/stdio.h"  # world-readable, visible to every run
    w1, w2 = tmp_path / "a", tmp_path / "b"
    w1.mkdir()
    w2.mkdir()
    result = {}

    def hold() -> None:
        result["hold"] = run_sandboxed([str(bins["locker"]), shared, "hold"], w1, limits=FAST)

    t = threading.Thread(target=hold)
    t.start()
    time.sleep(1.0)
    probe = run_sandboxed([str(bins["locker"]), shared, "probe"], w2, limits=FAST)
    t.join()
    assert result["hold"].stdout.strip() == "holding"
    assert probe.stdout.strip() == "free"  # the other run's lock is invisible
    fd = os.open(shared, os.O_RDONLY)  # and the host's own locks are unaffected
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    finally:
        os.close(fd)


@needs_uid_mode
def test_reference_code_runs_under_the_same_rules(tmp_path):
    from validators.reference import ReferenceError, ReferenceRunner

    task = Task(
        name="peek", description="y = x",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
        sizes={"N": 8}, cases=[InputCase(name="c", seed=1)],
        reference=Reference(code=(
            "import socket\n"
            "def reference(inputs, sizes):\n"
            "    open('/etc/passwd').read()\n"
            "    return {'y': inputs['x']}\n")),
    )
    runner = ReferenceRunner(root=tmp_path / "refs")
    from validators.cases import materialize

    with pytest.raises(ReferenceError, match="FileNotFoundError|No such file"):
        runner.outputs(task, task.cases[0], materialize(task, task.cases[0]))


# --- 4. root-side helpers never follow links -------------------------------------------------

def test_copying_an_untrusted_folder_skips_links_and_devices(tmp_path):
    src = tmp_path / "bench"
    src.mkdir()
    (src / "input.txt").write_text("14\n")
    (src / "zero").symlink_to("/dev/zero")
    (src / "shadow").symlink_to("/etc/shadow")
    (src / "sub").mkdir()
    (src / "sub" / "up").symlink_to("..")
    os.mkfifo(src / "fifo")
    dest = tmp_path / "run"
    dest.mkdir()
    report = copy_untrusted(src, dest, max_bytes=1 << 20, max_files=100)
    copied = sorted(str(p.relative_to(dest)) for p in dest.rglob("*"))
    assert copied == ["bench", "bench/input.txt", "bench/sub"]
    assert len(report.skipped) == 4 and report.files == 1
    with pytest.raises(OSError, match="limit"):
        copy_untrusted(src, tmp_path / "run2", max_bytes=1, max_files=100)


@needs_uid_mode
def test_outputs_behind_links_are_never_read(tmp_path):
    from validators.compare import read_output

    secret = tmp_path / "root-only"
    secret.mkdir(mode=0o700)
    (secret / "c.bin").write_bytes(np.arange(4, dtype=np.float32).tobytes())
    run = tmp_path / "run"
    run.mkdir()
    (run / "data").symlink_to(secret)
    arr, why = read_output(run, TensorSpec(name="c", dtype="float32", shape=[4]), {})
    assert arr is None and "not a directory" in why


# --- 5. disk and inodes enforced by the kernel ------------------------------------------------

@needs_uid_mode
@pytest.mark.parametrize("name,limit", [("files", "files"), ("fill", "disk")])
def test_disk_and_inodes_are_enforced(bins, name, limit):
    with workspace(FAST) as root:
        work = root / "work"
        work.mkdir()
        out = run_sandboxed([str(bins[name])], work, limits=FAST)
        used = tree_usage(work)
        assert used.entries <= FAST.max_files + 64 and used.bytes <= FAST.disk_bytes + (2 << 20)
        assert out.limit_hit == limit, out
    assert not root.exists()  # and the workspace is gone (unmounted, removed)
    assert str(root) not in Path("/proc/mounts").read_text()


# --- 6. caps before any allocation ------------------------------------------------------------

def _task(n: int | str, sizes: dict) -> Task:
    return Task(name="big", description="x", sizes=sizes,
                inputs=[TensorSpec(name="x", dtype="float32", shape=[n])],
                outputs=[TensorSpec(name="y", dtype="float32", shape=[n])],
                cases=[InputCase(name="c", seed=1)],
                reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x']}\n"))


@pytest.mark.parametrize("sizes,match", [
    ({"N": 10**12}, "over the .*-element limit"),
    ({"N": -5}, "negative"),
    ({"N": 5 * 10**7}, "elements, over the"),
])
def test_task_caps(sizes, match):
    from validators.engine import Engine

    engine = Engine.__new__(Engine)  # no backend at all: the check must stop before using one
    engine.caps = Caps()
    # The schema refuses a negative size; the caps still hold for a task that bypassed it
    # (model_copy does not validate).
    task = _task("N", {"N": 1}).model_copy(update={"sizes": sizes})
    with pytest.raises(CapExceeded, match=match):
        Engine.check(engine, task, Program(source="int main(){}"))


def test_the_schema_refuses_a_negative_size():
    with pytest.raises(ValueError, match="negative"):
        _task("N", {"N": -5})


def test_argument_list_cap_leaks_nothing(bins, tmp_path):
    cg_before = _cgroups() if UID_MODE else set()
    with pytest.raises(CapExceeded, match="over the .*-byte limit"):
        run_sandboxed([str(bins["true"]), "x" * (3 << 20)], tmp_path, limits=FAST)
    with pytest.raises(CapExceeded):
        check_args(["a"] * 10_000, Caps())
    assert (_cgroups() if UID_MODE else set()) == cg_before


def test_huge_program_is_refused_by_size_not_misjudged():
    from validators.backends import get_backend
    from validators.engine import Engine

    kernel = "__global__ void k(float* p) { p[0] = 1; }\nint main() { float* d; cudaMalloc(&d, 4); k<<<1, 1>>>(d); }\n"
    program = Program(source=kernel + "// " + "x" * (50 << 20) + "\n")
    res = Engine(get_backend("cpu")).check(_task(4, {}), program)
    assert res.status == Status.REJECTED and "MiB limit" in res.reason and "no kernel" not in res.reason


# --- 7-9. verdict integrity on the cpu backend -------------------------------------------------

SQUARE_TASK = Task(
    name="square", description="y = x * x",
    inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
    outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
    sizes={"N": 256}, cases=[InputCase(name="a", seed=11), InputCase(name="b", seed=12)],
    reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x'] * inputs['x']}\n"),
)
IO = r"""
#include <cstdio>
#include <cstdlib>
#include <cstring>
#define N 256
static float x[N], y[N];
static void load() { FILE* f = fopen("data/x.bin", "rb"); if (!f || fread(x, 4, N, f) != N) exit(1); fclose(f); }
static void save() { FILE* f = fopen("data/y.bin", "wb"); fwrite(y, 4, N, f); fclose(f); }
__global__ void sq(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i] * a[i]; }
__global__ void copy(const float* a, float* b, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) b[i] = a[i]; }
__global__ void nothing() {}
"""
HONEST = IO + r"""
int main() { load(); float *da, *db; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); sq<<<1, N>>>(da, db, N);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
"""
CHEATS = {
    "host_with_dummy_launch": IO + r"""
int main() { load(); nothing<<<1, 1>>>(); cudaDeviceSynchronize();
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i]; save(); }
""",
    "launch_in_dead_code": IO + r"""
int main() { load(); float* d = nullptr; if (getenv("NEVER_SET_XYZ")) { sq<<<1, N>>>(d, d, N); }
  for (int i = 0; i < N; i++) y[i] = x[i] * x[i]; save(); }
""",
    "kernel_only_copies_host_result": IO + r"""
int main() { load(); static float h[N]; for (int i = 0; i < N; i++) h[i] = x[i] * x[i];
  float *da, *db; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4);
  cudaMemcpy(da, h, N * 4, cudaMemcpyHostToDevice); copy<<<1, N>>>(da, db, N);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
    "copy_then_write_host_result": IO + r"""
int main() { load(); for (int i = 0; i < N; i++) y[i] = x[i] * x[i];
  float *da, *db; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4);
  cudaMemcpy(da, y, N * 4, cudaMemcpyHostToDevice); copy<<<1, N>>>(da, db, N);
  static float back[N]; cudaMemcpy(back, db, N * 4, cudaMemcpyDeviceToHost); save(); }
""",
}


@pytest.fixture(scope="module")
def cpu_engine():
    from validators.backends import get_backend
    from validators.engine import Engine

    backend = get_backend("cpu")
    backend._schedules = ["forward"]
    return Engine(backend)


def test_honest_program_passes_with_a_fresh_case(cpu_engine):
    res = cpu_engine.check(SQUARE_TASK, Program(source=HONEST), thorough=False)
    assert res.status == Status.PASSED, res.reason
    fresh = [c for c in res.cases if c.fresh]
    assert len(fresh) == 1 and fresh[0].seed == res.fresh_seed
    assert res.fresh_seed not in (11, 12)
    assert res.kernel_check.startswith("outputs depend on the kernels")
    again = cpu_engine.check(SQUARE_TASK, Program(source=HONEST), thorough=False,
                             fresh_seed=res.fresh_seed)
    assert again.fresh_seed == res.fresh_seed and again.status == Status.PASSED


@pytest.mark.parametrize("name", sorted(CHEATS))
def test_outputs_without_the_kernels_are_rejected(cpu_engine, name):
    res = cpu_engine.check(SQUARE_TASK, Program(source=CHEATS[name]), thorough=False)
    assert res.status == Status.REJECTED, res.reason
    assert "outputs do not depend on the kernels" in res.reason


def test_answers_computed_for_the_published_seeds_fail(cpu_engine):
    from validators.cases import materialize

    tables = []
    for case in SQUARE_TASK.cases:  # what a cheat can compute ahead: the published seeds' answers
        x = materialize(SQUARE_TASK, case)["x"]
        words = (x * x).astype(np.float32).view(np.uint32)
        tables.append("{" + ",".join(f"0x{w:08x}u" for w in words) + "}")
    src = IO + (
        "static const unsigned T[2][N] = {" + ",".join(tables) + "};\n"
        "int main() { load(); int k = 0; float first = x[0] * x[0];\n"
        "  float *da, *db; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4);\n"
        "  for (int t = 0; t < 2; t++) { float v; memcpy(&v, &T[t][0], 4); if (v == first) k = t; }\n"
        "  cudaMemcpy(da, T[k], N * 4, cudaMemcpyHostToDevice); copy<<<1, N>>>(da, db, N);\n"
        "  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); save(); }\n")
    res = cpu_engine.check(SQUARE_TASK, Program(source=src), thorough=False)
    fresh = next(c for c in res.cases if c.fresh)
    published = [c for c in res.cases if not c.fresh]
    assert fresh.status == Status.FAILED, fresh.reason
    # The table is right for those, and the kernel-work run every case gets sees where it
    # came from: the host.
    assert all(c.status == Status.REJECTED and "outputs do not depend on the kernels" in c.reason
               for c in published), [(c.status, c.reason) for c in published]
    assert res.status in (Status.FAILED, Status.REJECTED)


ENV_SPY = IO + r"""
int main() { load();
  const char* s = getenv("CUDASHIM_SCHEDULE"); char path[64]; snprintf(path, sizeof path, "/proc/%s/environ", "self");
  FILE* e = fopen(path, "rb");
  static char buf[1 << 16]; size_t n = e ? fread(buf, 1, sizeof buf, e) : 0;
  int seen = s != nullptr; for (size_t i = 0; i + 8 < n; i++) if (!memcmp(buf + i, "CUDASHIM", 8)) seen = 1;
  float *da, *db; cudaMalloc(&da, N * 4); cudaMalloc(&db, N * 4);
  cudaMemcpy(da, x, N * 4, cudaMemcpyHostToDevice); sq<<<1, N>>>(da, db, N);
  cudaMemcpy(y, db, N * 4, cudaMemcpyDeviceToHost); if (seen) y[0] += 1000; save(); }
"""


def test_schedule_and_checks_are_not_readable_by_the_program(cpu_engine):
    res = cpu_engine.check(SQUARE_TASK, Program(source=ENV_SPY), thorough=False)
    assert res.status == Status.PASSED, res.reason  # it saw nothing to misbehave on


@needs_uid_mode
def test_never_read_input_is_caught_even_when_the_log_is_deleted():
    task = SQUARE_TASK.model_copy(update={
        "inputs": [*SQUARE_TASK.inputs, TensorSpec(name="unused", dtype="float32", shape=["N"])]})
    src = HONEST.replace("save(); }", 'save(); remove(".ckd-access.log"); }')
    from validators.backends import get_backend
    from validators.engine import Engine

    backend = get_backend("cpu")
    backend._schedules = ["forward"]
    res = Engine(backend).check(task, Program(source=src), thorough=False)
    assert res.status == Status.REJECTED and "never read input unused" in res.reason


@needs_uid_mode
def test_inputs_cannot_be_touched_or_renamed(bins):
    with workspace(FAST) as root:
        work = root / "work"
        (work / "data").mkdir(parents=True)
        (work / "data" / "x.bin").write_bytes(b"abcd")
        script = ("chmod 666 data/x.bin; touch -d 2000-01-01 data/x.bin; mv data/x.bin data/z; "
                  "mv data d2; rm -f data/x.bin; echo done")
        out = run_sandboxed(["/bin/sh", "-c", script], work, limits=FAST, protect=["data/x.bin"])
        assert "done" in out.stdout
        assert sandbox.inputs_read(work, ["data/x.bin"]) == {"data/x.bin": False}  # not forged
        assert (work / "data" / "x.bin").read_bytes() == b"abcd"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


@needs_uid_mode
def test_workspaces_of_a_killed_validator_are_cleared():
    code = ("import os, time\nfrom validators.sandbox import workspace\n"
            "with workspace() as r:\n    print(r, flush=True)\n    time.sleep(60)\n")
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                             cwd=Path(__file__).resolve().parents[2])
    root = Path(child.stdout.readline().strip())
    assert root.is_mount()
    child.kill()  # no finally runs: the tmpfs stays mounted
    child.wait()
    assert root.is_mount()
    assert sandbox._sweep_stale_workspaces.__wrapped__() >= 1
    assert not root.exists() and str(root) not in Path("/proc/mounts").read_text()
