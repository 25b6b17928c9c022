"""Run untrusted code: scraped kernels, LLM answers, references and benchmark scripts.

Threat model
============

The program is hostile and knows this code. It may be a CUDA program, its build (the compiler
reading its source), a NumPy/torch reference or a benchmark's `gen.py`/`compare.py`; all run
here under the same rules. It wants to (a) escape: read, change or talk to anything outside its
run, starve the host, outlive its run; or (b) cheat: pass without computing its outputs on
the device. (b) is the engine's business (`validators.engine`, `validators/cpu/README.md`);
this module guarantees (a). Each line names the mechanism that holds it, in the strongest mode
(`namespaces+uid`: root, `unshare` and the C launcher, `validators.sandbox_launcher`). Static
checks before a run (the allow-list of what an LLM-written reference may import and use,
`builder.llm.reference_rules`; the HeCBench harness reading headers only beneath the
program's folder) refuse early with a readable reason; nothing here relies on them.

One part of (b) is the runtime's, not the sandbox's: on the cpu backend device memory is host
memory, so the cpu runtime keeps device allocations `PROT_NONE` while host code runs (open only
for launches, the runtime's copies and library calls) and a host read or write through a device
pointer faults as on a GPU (`runtime_error`, "host code accessed device memory"). A program
whose source calls `mprotect` or names the runtime's internals is rejected before it runs; one
that reaches `mprotect` by a bare system-call number, or includes Thrust (whose builds leave
device memory open), can still undo it: `validators/cpu/README.md` says what then still catches it.

The program CANNOT:
- see a file the validator did not list. Its root is a fresh tmpfs (pivot_root) holding only
  the allow-list read-only (`SYSTEM_RO`: `/usr` with the toolchain, the loader's cache, CPU
  topology; plus what the caller exposes: the executable's folder, the Python prefix of a
  reference, the shim's build folder, operator-given include folders), its own work folder,
  a private `/tmp` and `/dev/shm` (tmpfs, `tmp_bytes`/`tmp_files`), a `/dev` of null, zero, full,
  random, urandom (a compiler's: null only, `Limits.devices`; and, for a run given a GPU, that
  GPU's nodes only: `Limits.gpu`), and a
  `/proc` of its own PID namespace. `/root`,
  `/home`, `/run` (and its unix sockets), `/etc/passwd`, other projects, the caches of the
  validator and other runs do not exist there. -> mount namespace + allow-list launcher.
- widen that view: it comes only from `Limits`, `expose` and `CKD_SANDBOX_RO` (the operator's),
  never from argv (an `-I/dir` argument is the program's business), a Makefile, a task or an
  LLM answer. -> `_exposures`, `Backend.include_dirs`.
- write outside its work folder, `/tmp` or `/dev/shm`, nor change the read-only inputs it is
  given (root's, 0444, in root-owned sticky folders; it runs as a fresh uid per run with no
  capabilities and `no_new_privs`). -> bind mounts read-only, uid switch, `protect`.
- reach a network: no interface but its own namespace's loopback, and no socket but AF_UNIX
  (seccomp). -> network namespace + seccomp.
- make a system call the filter does not list. The filter is an allow-list
  (`validators.sandbox_launcher.SYSCALLS_ALLOWED`, grouped with the reason for each group,
  measured on honest runs by `benchmarks/measure_syscalls.py`): anything else fails with ENOSYS,
  as on a kernel without it, so a call nobody thought to deny is refused too. Named and refused
  with EPERM: ptrace, process_vm_*, pidfd_getfd, process_madvise, kcmp, mount and the new mount
  API, pivot_root, chroot, unshare/setns and a clone with new namespaces,
  keyctl/add_key/request_key, bpf, perf_event_open, userfaultfd, file handles, kernel modules,
  kexec, reboot, clocks, swap, quotas, syslog; ENOSYS for io_uring (whose operations no filter
  sees) and clone3 (whose flags it cannot read; glibc falls back to clone); the i386 ABI kills
  the run, x32 gets ENOSYS. -> seccomp filter (`Limits.seccomp`).
- observe another run through the kernel's file-event interfaces: inotify, fanotify,
  directory notifications (`fcntl(F_NOTIFY)`) and leases (`F_SETLEASE`, `F_GETLEASE`) are
  refused (EPERM; each would signal a run when another reads or opens a shared read-only
  file), file locks (flock, fcntl's record locks) succeed and do nothing, and fcntl commands
  not listed get EINVAL. What runs sharing a machine can still sense of each other is load:
  CPU time, memory pressure, timing. -> seccomp filter.
- signal, trace or see another run or the validator: PID and IPC namespaces, its own uid.
- use more than its share: CPU seconds (RLIMIT_CPU), address space (RLIMIT_AS, lifted for
  ASan), resident memory of the whole run including tmpfs pages it writes (a memory cgroup),
  processes and threads (RLIMIT_NPROC of its own uid), one file's size (RLIMIT_FSIZE), bytes
  and files in its work folder (the workspace: a tmpfs of `disk_bytes` and `max_files` inodes,
  enforced by the kernel; reported as `limit_hit='disk'|'files'`), stdout+stderr
  (`output_bytes`, read incrementally), wall time (`wall_seconds`).
- outlive its run: the run's whole process tree is killed when the launcher dies (its init
  has PDEATHSIG, and the launcher itself dies with the validator), on the wall clock, on a
  limit, and on ANY exception in the validator's own code (`run_sandboxed`'s teardown); the
  memory cgroup is removed and the workspace unmounted and removed whatever it holds
  (`safe_fs.remove_tree`: any depth, count, permission or link).
- make the validator follow a link or read without bound: everything the validator reads
  from, copies out of, walks or removes in a folder a program shaped goes through
  `validators.safe_fs` (no link followed at any path component, regular files only, byte and
  entry bounds, iterative walks).
- make the validator allocate without bound: task sizes, program size and argument lists are
  capped before anything is allocated (`validators.caps`).

The program CAN (and why it is harmless):
- read the allow-listed system files (`/usr`, the loader cache): public, read-only, the same
  for every run;
- learn the CPU count and model, the kernel version (`uname`), the time, and how long it runs:
  nothing in them tells one check from another (see `validators/cpu/README.md` for what a
  CUDA program on the cpu backend can observe);
- use its CPU time, memory and disk up to the limits, and fail or hang: each is a verdict.

Weaker modes, chosen by probing (`sandbox_mode()`) and named in `RunOutcome.extra['sandbox']`:
- `namespaces+uid` with the shell set-up (no gcc, or `CKD_SANDBOX_LAUNCHER=sh`): the same
  namespaces and uid switch, but the host's `/` read-only with `/tmp`, `/home`, `/root`, the
  caches covered (a deny-list), no seccomp filter, no memory cgroup.
- `userns` (not root): namespaces inside a user namespace; no uid switch, so inputs cannot be
  protected and no RLIMIT_NPROC; deny-list view.
- `rlimits` (neither works): rlimits, a process group and a scrubbed environment only; no
  network isolation. Untrusted code is refused in it (`SandboxError`, an `error` result) unless
  the operator names it (`CKD_SANDBOX_MODE=rlimits` or `CKD_ALLOW_WEAK_SANDBOX=1`: see
  `weak_sandbox_refusal`). Say so wherever results are reported.
Outside `namespaces+uid` the workspace is a plain folder: disk and files are polled every
DISK_POLL_SECONDS with a bounded walk (a fast writer can overshoot between polls).

Torch runs and NumPy references (`preimport`): with the C launcher, a `python -I -c` harness
that imports torch (or NumPy) is forked from a zygote that imported it once (`validators.zygote`;
`CKD_TORCH_ZYGOTE=0` turns it off) instead of exec'd: the import is most of such a run's cost. The child enters the same
set-up (the launcher's code as a library): everything above holds for it. What differs, and
why it is harmless: the run starts from a copy of an interpreter that did nothing but import
(no other run's code or data ever entered it: a run's configuration is read by the child
after the fork; no descriptor but the standard three survives the set-up); its address layout
and hash seed are the zygote's, the same for every run it forks, and `random` is reseeded per
run; its CPU limit and `cpu_seconds` no longer include the import; pages it shares with the
zygote are charged to the validator's memory cgroup, not the run's, until it writes them.

`RunOutcome.extra` reports `sandbox` (mode), `launcher` (c|sh), `view` (allow-list|deny-list|
host), `uid`, `cgroup`, `cpu_seconds`, `max_rss_kb` (the program's own peak, reported by the
launcher's init), and `zygote` (the modules it had imported) for a forked run.

Whose failure: `SandboxError` (our set-up failed: an `error`, no verdict) is raised only when the
set-up exited 125 with its `ckd-sandbox-setup-failed:` line *and* never wrote `exec` on the
report pipe, which it does as its last step before the program starts (C launcher, zygote child
and shell path alike). The program can print that line and exit 125 too; it cannot take our
`exec` back, so once it ran, every status is its own (the red-team audit's p5).
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import functools
import os
import re
import secrets
import selectors
import shlex
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .backends.base import RunOutcome

MIB = 1 << 20
GIB = 1 << 30

SAFE_PATH = "/usr/local/bin:/usr/bin:/bin"
HIDDEN_DIRS = ("/tmp", "/var/tmp", "/dev/shm", "/root", "/home")
SETUP_FAILED = "ckd-sandbox-setup-failed"
SETUP_EXIT = 125
"""The set-up's failure: this status and a `SETUP_FAILED` line, believed only without the
report pipe's `exec` line (`_read_report`)."""
SIGNAL_STATUS_BASE = 128
"""`sh` reports a child killed by signal n as exit status 128 + n."""


class SandboxError(RuntimeError):
    """The sandbox itself could not be set up (not the program's fault); the message says why."""


class HarnessError(SandboxError):
    """Our harness around untrusted Python (a reference, a benchmark's gen.py or compare.py)
    failed before it reached that code: the interpreter could not start in the sandbox, NumPy
    did not import, the harness itself crashed. The validator's failure, never the code's."""


class CompilerCrash(SandboxError):
    """The host compiler itself crashed (an internal compiler error) on a program, at every
    optimisation level tried: our toolchain's failure, so no verdict on the program."""


HARNESS_READY = "CKD-HARNESS-READY"
"""Written to stderr by our harnesses just before they hand over to untrusted code: a failed
run whose stderr lacks it never reached that code (`harness_reached`)."""
READY_LINE = f"import sys as _s; _s.stderr.write({HARNESS_READY!r} + '\\n'); _s.stderr.flush()"
"""The Python statement that writes the marker (put it last before the untrusted code runs)."""


def harness_reached(stderr: str) -> bool:
    """Whether a harness got as far as running the untrusted code (see `HARNESS_READY`)."""
    return any(line.strip() == HARNESS_READY for line in stderr.splitlines())


def harness_failure(what: str, stderr: str, exit_code: int | None) -> HarnessError:
    """The error for a harness run that failed before reaching the code it runs."""
    lines = [ln.strip() for ln in stderr.strip().splitlines() if ln.strip()]
    why = lines[-1][:300] if lines else f"exit code {exit_code}"
    return HarnessError(f"{what} harness could not start: {why}")


@dataclass(frozen=True)
class Limits:
    """Resource limits of one sandboxed run. `None` means unlimited."""

    cpu_seconds: float | None = 20.0
    wall_seconds: float = 30.0
    memory_bytes: int | None = 4 * GIB
    """Address space (RLIMIT_AS). Lift it (None) for AddressSanitizer builds."""
    file_size_bytes: int | None = 256 * MIB
    max_processes: int | None = 64
    """Processes plus threads of the sandbox uid (RLIMIT_NPROC; `namespaces+uid` mode only)."""
    output_bytes: int = 1 * MIB
    """stdout plus stderr captured; past this the run is killed (`limit_hit='output'`)."""
    rss_bytes: int | None = 8 * GIB
    """Resident memory of the whole run, through a memory cgroup (`namespaces+uid` mode with the
    C launcher, where a cgroup is writable; `extra['cgroup']` says). Unlike the address-space
    limit it also holds for ASan builds, which must lift that one."""
    disk_bytes: int | None = 1 * GIB
    """Total size of the work directory, polled while the run goes (`limit_hit='disk'`):
    RLIMIT_FSIZE bounds one file, this bounds many."""
    max_files: int | None = 100_000
    """Files and directories in the work directory. Enforced by the workspace's tmpfs
    (`nr_inodes`) where one is mounted, else counted while the run goes (`limit_hit='files'`)."""
    tmp_bytes: int = 64 * MIB
    """Size of the run's private `/tmp` and of its `/dev/shm` (each a tmpfs; allow-list view)."""
    tmp_files: int = 4096
    network: bool = False
    seccomp: bool = True
    """The system-call filter (C launcher): an allow-list (`sandbox_launcher.SYSCALLS_ALLOWED`;
    no ptrace, mount, keyctl, bpf, namespace changes, io_uring, inotify, F_NOTIFY or leases,
    file locks made no-ops, sockets but AF_UNIX)."""
    allowlist: bool = True
    """The run's root holds only the allow-list (C launcher); False: the host's `/` read-only
    with some directories covered (the shell set-up's view)."""
    loopback: bool = False
    """A private network namespace whose loopback is up, and internet sockets allowed in it
    (nothing else is reachable): for tools that talk to their target over 127.0.0.1, such as
    compute-sanitizer. Off for everything else."""
    devices: tuple[str, ...] = ("null", "zero", "full", "random", "urandom")
    """The plain device nodes of the run's `/dev` (allow-list view; a subset of `DEVICES`).
    Builds get `null` only: a source that includes `/dev/zero` or `/dev/urandom` would feed the
    compiler an endless file (GiBs of memory before any limit stops it)."""
    gpu: str | None = None
    """The GPU a run may use (`CUDA_VISIBLE_DEVICES`' value: indices, or a UUID/MIG name): only
    runs given one see the driver's nodes, and only that GPU's (`/dev/nvidiaN`, `nvidiactl`,
    `nvidia-uvm`, the `nvidia-caps` folder MIG needs); builds, references and scripts see none."""

    def with_overrides(self, overrides: dict[str, object] | None = None, **kw: object) -> Limits:
        """A copy with some fields replaced (e.g. `Backend.sandbox_overrides`)."""
        fields = {f.name for f in dataclasses.fields(self)}
        merged = {**(overrides or {}), **kw}
        unknown = set(merged) - fields
        if unknown:
            raise ValueError(f"unknown sandbox limits: {sorted(unknown)}")
        return dataclasses.replace(self, **merged)  # type: ignore[arg-type]


def python_prefixes() -> list[Path]:
    """Directories a Python process (e.g. a NumPy reference) needs readable in the sandbox,
    resolved: the sandbox binds real paths only, so a virtual environment reached through a
    link (`.venv -> /elsewhere/venv`) is exposed where it really lives."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, sysconfig.get_paths()["purelib"],
             sysconfig.get_paths()["platlib"], str(Path(sys.executable).resolve().parent.parent)}
    return sorted({Path(p).resolve() for p in paths if p and Path(p).exists()})


def python_executable() -> str:
    """This interpreter as the sandbox can start it: its folder resolved (a linked `.venv`
    does not exist in the sandbox's view), its own name kept, because a venv's `bin/python` is
    itself a link and Python finds its `pyvenv.cfg` (so its site-packages) next to the name it
    was started by, not next to the link's target."""
    exe = Path(sys.executable)
    return str(exe.parent.resolve() / exe.name)


def scrubbed_env(extra: dict[str, str] | None = None, home: str = "/nonexistent") -> dict[str, str]:
    env = {"PATH": SAFE_PATH, "HOME": home, "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8",
           "TMPDIR": home}
    env.update(extra or {})
    return env


# --- mode detection -------------------------------------------------------------------------

def _ns_prefix(mode: str) -> list[str]:
    base = ["unshare", "--net", "--mount", "--pid", "--fork", "--kill-child", "--mount-proc",
            "--ipc", "--uts"]
    if mode == "userns":
        base[1:1] = ["--user", "--map-root-user"]
    return base


@functools.cache
def sandbox_mode() -> str:
    """The strongest mode that works on this machine: `namespaces+uid`, `userns` or `rlimits`.

    `CKD_SANDBOX_MODE` forces a weaker mode (for tests and for hosts where probing misleads).
    """
    forced = os.environ.get("CKD_SANDBOX_MODE")
    candidates = ["namespaces+uid", "userns"]
    if forced:
        if forced not in (*candidates, "rlimits"):
            raise ValueError(f"CKD_SANDBOX_MODE={forced!r} is not a sandbox mode")
        candidates = candidates[candidates.index(forced):] if forced != "rlimits" else []
    if shutil.which("unshare") is None or shutil.which("prlimit") is None:
        return "rlimits"
    for mode in candidates:
        if mode == "namespaces+uid" and (os.geteuid() != 0 or shutil.which("setpriv") is None):
            continue
        with tempfile.TemporaryDirectory(prefix="ckd-probe-") as d:
            try:
                out = run_sandboxed(["/bin/sh", "-c", "echo ok > probe && cat probe"], Path(d),
                                    limits=Limits(wall_seconds=10), _mode=mode)
            except OSError:
                continue
            if out.exit_code == 0 and out.stdout.strip() == "ok":
                return mode
    return "rlimits"


def weak_sandbox_refusal() -> str:
    """Why untrusted code may not run in `rlimits` mode here ('' when the operator said it may).

    `rlimits` cuts neither the network nor the view of the host: a program could reach a Ray
    head's unauthenticated job API (which holds the LLM key) or a shared cache. It is accepted
    only when the operator names it: `CKD_SANDBOX_MODE=rlimits` or `CKD_ALLOW_WEAK_SANDBOX=1`
    (trusted programs, or a container whose egress and mounts are cut from outside)."""
    if os.environ.get("CKD_SANDBOX_MODE") == "rlimits" or os.environ.get("CKD_ALLOW_WEAK_SANDBOX") == "1":
        return ""
    return ("the only sandbox available here is `rlimits` (no namespaces: the program would share "
            "the host's network and view); refusing to run untrusted code in it. Run as root with "
            "CAP_SYS_ADMIN (or where unprivileged user namespaces work) for the full sandbox, or set "
            "CKD_ALLOW_WEAK_SANDBOX=1 to accept rlimits knowingly")


# --- the launcher ---------------------------------------------------------------------------

def _effective_hides(hide: list[str], expose: list[Path], workdir: Path) -> list[str]:
    """An exposed path at or above a hidden directory wins: covering it would hide it."""
    return [h for h in hide if not any(h == str(p) or h.startswith(str(p).rstrip("/") + "/")
                                       for p in [*expose, workdir])]


def _launcher_cmd(launcher: Path, workdir: Path, uid: int, limits: Limits, expose: list[Path],
                  hide: list[str], preload: str | None, argv: list[str],
                  cgroup: Path | None = None, report_fd: int | None = None,
                  cwd: str | None = None) -> list[str]:
    cmd = [str(launcher), "--work", str(workdir), "--uid", str(uid),
           "--net", "1" if limits.network else "0", "--seccomp", "1" if limits.seccomp else "0",
           "--loopback", "1" if limits.loopback else "0",
           "--allowlist", "1" if limits.allowlist else "0"]
    if report_fd is not None:
        cmd += ["--report-fd", str(report_fd)]
    if cwd is not None:
        cmd += ["--cwd", cwd]
    if cgroup is not None:
        cmd += ["--cgroup-procs", str(cgroup / "cgroup.procs")]
    if limits.cpu_seconds is not None:
        cmd += ["--cpu", str(max(1, int(limits.cpu_seconds + 0.999)))]
    if limits.memory_bytes is not None:
        cmd += ["--as", str(int(limits.memory_bytes))]
    if limits.file_size_bytes is not None:
        cmd += ["--fsize", str(int(limits.file_size_bytes))]
    if limits.max_processes is not None:
        cmd += ["--nproc", str(int(limits.max_processes))]
    if preload is not None:
        cmd += ["--preload", str(preload)]
    if limits.allowlist:
        cmd += ["--tmp-opts", f"size={limits.tmp_bytes},nr_inodes={limits.tmp_files},mode=1777"]
        for p in _allowlist(expose):
            cmd += ["--ro", p]
        for link in _system_view()[1]:
            cmd += ["--symlink", link]
        for src, name in _devices(limits.gpu, limits.devices):
            cmd += ["--dev", f"{src}={name}"]
    else:
        for h in _effective_hides(hide, expose, workdir):
            cmd += ["--hide", h]
        for e in expose:
            cmd += ["--ro", str(e)]
    return [*cmd, "--", *argv]


def _use_launcher() -> Path | None:
    if os.environ.get("CKD_SANDBOX_LAUNCHER") == "sh":
        return None
    from .sandbox_launcher import launcher_path

    return launcher_path()


def _setup_script(workdir: Path, mode: str, uid: int, expose: list[Path], hide: list[str],
                  preload: str | None = None, report_fd: int | None = None,
                  start: Path | None = None) -> str:
    """sh run as (namespace) root before the program: mounts, then drop to the sandbox uid.

    `report_fd` (10 or above, clear of the descriptors the script opens) receives `exec` as the
    set-up's last step, as from the C launcher: a status after it is the program's.

    The work directory and the exposed paths are opened before the directories above them
    are covered, then bound back at their own paths (the work directory writable, the rest
    read-only), so absolute paths to them keep working while their siblings are hidden.
    """
    q = shlex.quote
    w = q(str(workdir))
    if len(expose) > 6:
        raise SandboxError(f"at most 6 exposed paths (sh has fds 3-9); got {len(expose)}: "
                           + ", ".join(map(str, expose)))
    hide = _effective_hides(hide, expose, workdir)
    lines = [f'fail() {{ echo "{SETUP_FAILED}: $1" >&2; exit {SETUP_EXIT}; }}']

    def step(cmd: str) -> None:
        lines.append(f"{cmd} || fail {q(cmd)}")

    step(f"mount --bind {w} {w}")
    step(f"cd {w}")
    # `command`: a failed redirection of the special builtin `exec` would end sh at once (exit
    # 2, taken for the program's status) before `|| fail` reports the set-up's failure.
    step("command exec 3< .")
    targets = []
    for i, p in enumerate(expose):
        step(f"command exec {4 + i}< {q(str(p))}")
        targets.append((4 + i, p))
    targets.append((3, workdir))  # last: an exposed parent must not cover it
    lines.append("mount -o remount,bind,ro / 2>/dev/null || true")

    def holds_target(h: str) -> bool:
        return any(str(p).startswith(h.rstrip("/") + "/") for _, p in targets)

    # Each mount is a process (a few ms): covers that hold nothing are mounted read-only at
    # once; the others stay writable until the mount points inside them are made.
    for h in hide:
        opts = "size=64k,mode=755" + ("" if holds_target(h) else ",ro")
        step(f"mount -t tmpfs -o {opts} ckd-hidden {q(h)}")
    lines.append("mkdir -p " + " ".join(q(str(p)) for _, p in targets) + " 2>/dev/null || true")
    for fd, p in targets:
        ro = "" if fd == 3 else "-o ro "
        step(f"mount --no-canonicalize --bind {ro}/proc/self/fd/{fd} {q(str(p))}")
    lines.append(" ".join(f"exec {fd}<&-;" for fd, _ in targets))
    for h in hide:
        if holds_target(h):
            step(f"mount -o remount,ro {q(h)}")
    step(f"cd {q(str(start)) if start is not None else w}")
    if report_fd is not None:
        # dash names only descriptors 0-9 in a redirection; /proc (the namespace's own) reaches
        # any. The program inherits this write end (sh cannot close it): it can only add lines
        # after ours, never take our `exec` back, so it cannot pass for a set-up failure.
        step(f"echo exec >/proc/self/fd/{int(report_fd)}")
    # The preload is set by `env` after the uid switch, for the program only: setpriv and the
    # set-up commands above would otherwise load it too.
    run = f"/usr/bin/env LD_PRELOAD={q(str(preload))} " if preload is not None else ""
    if mode == "namespaces+uid":
        # The work directory was handed to the uid before launch (no chown process here).
        lines.append(
            f"setpriv --reuid={uid} --regid={uid} --clear-groups --no-new-privs"
            f" --inh-caps=-all --bounding-set=-all -- {run}\"$@\""
        )
    else:
        lines.append(f'setpriv --no-new-privs -- {run}"$@"')
    lines.append("exit $?")
    return "\n".join(lines)


def _start_folder(workdir: Path, cwd: str) -> Path:
    """`workdir/cwd`, the folder a run starts in: a folder under `workdir`, reached without
    `..` or a link (the program's own copy of a folder must not lead it elsewhere)."""
    rel = Path(cwd)
    if rel.is_absolute() or ".." in rel.parts:
        raise ValueError(f"the run's start folder {cwd!r} must be relative to its run "
                         "directory, without '..'")
    start = workdir / rel
    if start.resolve() != Path(os.path.normpath(start)) or not start.is_dir():
        raise ValueError(f"the run's start folder {cwd!r} is not a folder of its run directory")
    return start


def _prlimit_args(limits: Limits, mode: str) -> list[str]:
    args = ["prlimit", "--core=0"]
    if limits.cpu_seconds is not None:
        soft = max(1, int(limits.cpu_seconds + 0.999))
        args.append(f"--cpu={soft}:{soft + 1}")
    if limits.memory_bytes is not None:
        args.append(f"--as={int(limits.memory_bytes)}")
    if limits.file_size_bytes is not None:
        args.append(f"--fsize={int(limits.file_size_bytes)}")
    if limits.max_processes is not None and mode == "namespaces+uid":
        args.append(f"--nproc={int(limits.max_processes)}")
    return [*args, "--"]


def _hidden_dirs(workdir: Path) -> list[str]:
    from .build_cache import cache_root

    cands = [*HIDDEN_DIRS, os.environ.get("HOME", ""), str(cache_root())]
    out: list[str] = []
    for c in cands:
        if not c or not os.path.isdir(c) or os.path.islink(c):
            continue
        real = os.path.realpath(c)
        if real == "/" or real in out:
            continue
        out.append(real)
    # A directory under another covered one is covered already (and no longer visible).
    return [d for d in sorted(out, key=len)
            if not any(d.startswith(o.rstrip("/") + "/") for o in out if o != d)]


def _exposures(argv: list[str], workdir: Path, expose: list[Path]) -> list[Path]:
    """The read-only paths of a run beyond the system allow-list: what the caller names, and the
    directory of an absolute `argv[0]`. Nothing in the arguments widens the view: an argument
    that looks like `-I/dir` is the program's business, not the sandbox's."""
    paths = [Path(p).resolve() for p in expose]
    exe = Path(argv[0])
    if exe.is_absolute() and exe.exists():
        real = exe.resolve()
        if workdir.resolve() not in real.parents:
            paths.append(real.parent)
    # Nested exposures: binding the outer one is enough.
    paths = sorted(set(paths), key=lambda p: len(p.parts))
    kept: list[Path] = []
    for p in paths:
        if not any(k == p or k in p.parents for k in kept):
            kept.append(p)
    return kept


# --- the allow-list --------------------------------------------------------------------------

SYSTEM_RO = ("/usr", "/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
             "/etc/alternatives", "/etc/localtime", "/sys/devices/system/cpu")
"""What every run sees read-only: the toolchain and runtime (`/usr`, with the CUDA toolkit under
`/usr/local`), the dynamic loader's configuration, and the CPU topology libraries size their
thread pools from. `CKD_SANDBOX_RO` (colon-separated) adds paths: the operator's setting, never
a program's."""
TOP_LEVEL = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
DEVICES = ("null", "zero", "full", "random", "urandom")
BUILD_DEVICES = ("null",)
"""A compiler's `/dev`: an `#include` of any other node would be an endless file."""
BUILD_MEMORY_BYTES = 6 * GIB
"""A compiler's address space: g++ on `<torch/extension.h>` peaks at 1.5 GB resident; an include
of an endless file (`/proc/self/pagemap` reads as 256 GiB of zeros) stops here."""


@functools.cache
def _system_view() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(read-only paths, `PATH=TARGET` symlinks) of the system part of the allow-list."""
    ro: list[str] = []
    links: list[str] = []
    extra = [p for p in os.environ.get("CKD_SANDBOX_RO", "").split(":") if p]
    for p in [*SYSTEM_RO, *extra]:
        if os.path.exists(p):
            ro.append(os.path.realpath(p))
    for name in TOP_LEVEL:  # usr-merged systems link these into /usr
        p = "/" + name
        if os.path.islink(p):
            links.append(f"{p}={os.readlink(p)}")
        elif os.path.isdir(p):
            ro.append(p)
    return tuple(dict.fromkeys(ro)), tuple(links)


GPU_SHARED_NODES = ("nvidiactl", "nvidia-uvm", "nvidia-caps")
"""Driver nodes every GPU run needs besides its GPU's own (`nvidia-caps` is a folder, for MIG).
Left out on purpose: `nvidia-uvm-tools` (profiling every process's faults), `nvidia-modeset`
(display), other GPUs' `nvidiaN`."""


def device_root() -> str:
    """Where device nodes come from: `/dev`, or `$CKD_DEVICE_ROOT` (a fake tree, for tests)."""
    return os.environ.get("CKD_DEVICE_ROOT", "/dev").rstrip("/") or "/"


def _devices(gpu: str | None = None, names: tuple[str, ...] = DEVICES) -> list[tuple[str, str]]:
    """(source path, name under the run's /dev) of the nodes a run gets."""
    root = device_root()
    found = [(f"/dev/{d}", d) for d in names if d in DEVICES and os.path.exists("/dev/" + d)]
    if gpu is None:
        return found
    try:
        present = set(os.listdir(root))
    except OSError:
        return found
    wanted = [n for n in GPU_SHARED_NODES if n in present]
    ids = [g.strip() for g in gpu.split(",") if g.strip()]
    if ids and all(g.isdigit() for g in ids):
        wanted += [f"nvidia{g}" for g in ids if f"nvidia{g}" in present]
    else:
        # A UUID or MIG name does not say which /dev/nvidiaN holds it: every GPU node, and
        # CUDA_VISIBLE_DEVICES picks (the result says so in its sandbox details).
        wanted += sorted(n for n in present if re.fullmatch(r"nvidia\d+", n))
    return found + [(f"{root}/{n}", n) for n in wanted]


def _mounts_below(parents: list[str], mountinfo: str | None = None) -> list[str]:
    """Mount points strictly below `parents` in this mount namespace, our own run folders
    (tmpfs `ckd-*`) left out.

    A bind mount does not carry the mounts under its source (the launcher binds each path alone,
    so it can make it read-only): a folder mounted of its own below an allowed path would be an
    empty directory in the run. GPU hosts mount the driver's libraries that way
    (`/usr/local/nvidia`, with `libcuda.so.1`), and every CUDA program then fails with
    cudaErrorInsufficientDriver."""
    if mountinfo is None:
        try:
            mountinfo = Path("/proc/self/mountinfo").read_text()
        except OSError:
            return []
    found: list[str] = []
    for line in mountinfo.splitlines():
        fields = line.split()
        if len(fields) < 5 or " - " not in line:
            continue
        fs = line.split(" - ", 1)[1].split()
        if len(fs) >= 2 and fs[1].startswith("ckd-"):
            continue
        point = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        if any(point.startswith(p.rstrip("/") + "/") for p in parents) and os.path.exists(point):
            found.append(point)
    return found


def _allowlist(exposures: list[Path], mountinfo: str | None = None) -> list[str]:
    ro, _ = _system_view()
    paths = [*ro, *map(str, exposures)]
    # Nested paths: the outer bind holds the inner one, unless the inner one is a mount of its
    # own (bound after its parent: sorted by length).
    paths = sorted(dict.fromkeys(paths), key=len)
    kept: list[str] = []
    for p in paths:
        if not any(p == k or p.startswith(k.rstrip("/") + "/") for k in kept):
            kept.append(p)
    below = [m for m in _mounts_below(kept, mountinfo) if m not in kept]
    return sorted([*kept, *below], key=len)


def run_sandboxed(
    argv: list[str],
    workdir: Path,
    *,
    limits: Limits | None = None,
    env: dict[str, str] | None = None,
    expose: list[Path] | tuple[Path, ...] = (),
    preload: Path | list[Path] | tuple[Path, ...] | None = None,
    protect: list[str] | tuple[str, ...] = (),
    stdin: int | None = None,
    cancel: threading.Event | None = None,
    preimport: tuple[str, ...] = (),
    cwd: str | None = None,
    _mode: str | None = None,
) -> RunOutcome:
    """Run `argv` with cwd `workdir` under the sandbox; never raises for what the program does
    (raises SandboxError when the sandbox itself cannot be set up, CapExceeded for an argument
    list too long to pass).

    `env` is added to a scrubbed environment. `expose` lists paths outside `workdir` the
    program needs to read (bound read-only, beside the system allow-list); the directory of an
    absolute `argv[0]` is exposed automatically. `preload` is an LD_PRELOAD library (or several, in
    order) set for the program only. `protect` names files under `workdir` (relative) the program must read but
    never change: with a uid switch they stay root's, mode 0444, in root-owned sticky
    directories, with their access time set to 0, so `inputs_read` can tell afterwards which
    were read. `RunOutcome.extra['sandbox']` names the mode used.

    `stdin` is a descriptor to give the program as its standard input (default: /dev/null), for
    a harness that serves requests; `cancel`, set from another thread, ends the run as one out of
    time (the caller's own deadline for a request that never finishes).

    `cwd`: a folder under `workdir` (relative, no `..`; it must exist) the program starts in
    instead of `workdir` itself, which stays the run's writable folder and `HOME` (a program
    run as `cd app && ./a.out` that opens `../data/...`).

    `preimport` names modules a `[python, "-I", "-c", code, ...]` run imports first (torch):
    with the C launcher such a run is forked from a zygote that imported them already
    (`validators.zygote`; `extra['zygote']` says so), in the same sandbox set-up.

    Whatever happens here, the run's process tree is killed and its cgroup removed before this
    returns or raises.
    """
    from .caps import Caps, check_args

    check_args(argv, Caps.from_env())
    limits = limits or Limits()
    preloads = [preload] if isinstance(preload, (str, Path)) else list(preload or ())
    # One LD_PRELOAD value: the engine's access-log shim and a backend's interposed runtime.
    preload_value = ":".join(str(p) for p in preloads) or None
    mode = _mode or sandbox_mode()
    if mode == "rlimits" and _mode is None:
        refused = weak_sandbox_refusal()
        if refused:
            raise SandboxError(refused)
    workdir = Path(workdir).resolve()
    start = workdir if cwd is None else _start_folder(workdir, cwd)
    full_env = scrubbed_env(env, home=str(workdir))
    uid = 0
    cgroup: Path | None = None
    report: tuple[int, int] | None = None
    proc: Any = None  # subprocess.Popen, or a zygote's run shaped like one
    zygote = None
    try:
        if mode == "rlimits":
            cmd = [*_prlimit_args(limits, mode), *argv] if shutil.which("prlimit") else list(argv)
            if preload_value is not None:
                full_env["LD_PRELOAD"] = preload_value
        else:
            uid = 1_000_000 + secrets.randbelow(1_000_000_000)
            extra = [*expose, *dict.fromkeys(Path(p).parent for p in preloads)]
            exposures = _exposures(argv, workdir, extra)
            launcher = _use_launcher() if mode == "namespaces+uid" else None
            if launcher is not None:
                cgroup = _make_memory_cgroup(uid, limits.rss_bytes)
                report = os.pipe()
                zygote = _zygote(preimport, argv, preload_value, full_env)
                # A zygote's child finds the report descriptor at 3 (`Zygote.spawn`).
                cmd = _launcher_cmd(launcher, workdir, uid, limits, exposures,
                                    _hidden_dirs(workdir), preload_value, argv, cgroup,
                                    report_fd=3 if zygote is not None else report[1], cwd=cwd)
            else:
                report = _high_pipe()
                script = _setup_script(workdir, mode, uid, exposures, _hidden_dirs(workdir),
                                       preload_value, report_fd=report[1], start=start)
                ns = _ns_prefix(mode)
                if limits.network:
                    ns.remove("--net")
                cmd = [*_prlimit_args(limits, mode), *ns, "--", "/bin/sh", "-c", script,
                       "ckd-sandbox", *argv]
            if mode == "namespaces+uid":
                _hand_over(workdir, uid, protect)
        started = time.monotonic()
        if zygote is not None:
            from .zygote import ZygoteError

            try:
                proc = zygote.spawn(cmd, full_env, argv[3], argv[4:], stdin, report[1])
            except ZygoteError:
                # Nothing of the run started: it is exec'd as without a zygote, reporting on
                # the pipe's own descriptor.
                zygote = None
                cmd[cmd.index("--report-fd") + 1] = str(report[1])  # type: ignore[index]
                started = time.monotonic()
        try:
            if proc is None:
                proc = subprocess.Popen(
                    cmd, cwd=start if mode == "rlimits" else workdir, env=full_env,
                    stdin=subprocess.DEVNULL if stdin is None else stdin, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, start_new_session=True, close_fds=True,
                    pass_fds=(report[1],) if report else (),
                )
        except OSError as exc:
            raise SandboxError(f"cannot start the sandbox ({mode}): {exc}") from exc
        finally:
            if report:
                os.close(report[1])
        disk = _DiskWatch(workdir, limits.disk_bytes, limits.max_files)
        out, err, timed_out, hit = _pump(proc, limits, started, disk, cancel)
        status, rusage, late, late_hit = _reap(proc, started + limits.wall_seconds, disk, cancel)
        if mode == "rlimits":
            _kill_group(proc)  # leftovers in the group (no PID namespace reaps them here)
    except BaseException:
        # The validator's own failure (or an interrupt): the run must not outlive it.
        if proc is not None:
            _kill_group(proc)
            _reap_quietly(proc)
        if cgroup is not None:
            _remove_memory_cgroup(cgroup)
        if report:
            os.close(report[0])
        raise
    timed_out = (timed_out or late) and hit is None
    hit = hit or late_hit
    proc.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.monotonic() - started
    execd, max_rss_kb = _read_report(report[0]) if report else (False, None)
    if not cmd[0].endswith("ckd-launch"):
        max_rss_kb = None  # the shell path's report holds no figure we wrote (only `exec`)
    if max_rss_kb is None and cgroup is not None:
        max_rss_kb = _cgroup_peak_kb(cgroup)
    if max_rss_kb is None:
        # Without the launcher's report this includes our own peak RSS at the fork (exec
        # keeps the pre-exec high-water mark): an upper bound, not the program's figure.
        max_rss_kb = rusage.ru_maxrss
    oom = _remove_memory_cgroup(cgroup) if cgroup is not None else False
    # The set-up's failure is believed only if the set-up never said it handed over: after that,
    # exit 125 and the marker line are the program's to print (a wrong answer would escape its
    # verdict as "our" error). The report pipe is written by the set-up alone.
    if mode != "rlimits" and not execd and proc.returncode == SETUP_EXIT and SETUP_FAILED in err.decode(
            "utf-8", "replace"):
        line = next(ln for ln in err.decode("utf-8", "replace").splitlines() if SETUP_FAILED in ln)
        raise SandboxError(f"sandbox set-up failed ({mode}): {line.split(': ', 1)[-1]}")
    exit_code, sig = _decode_status(proc.returncode, mode)
    if mode == "namespaces+uid":
        _reclaim(workdir)
    stderr = err.decode("utf-8", "replace")
    outcome = RunOutcome(
        exit_code=None if (timed_out or hit) else exit_code,
        stdout=out.decode("utf-8", "replace"),
        stderr=stderr,
        seconds=seconds,
        timed_out=timed_out,
        signal=sig,
        extra={"sandbox": mode, "launcher": "c" if cmd[0].endswith("ckd-launch") else "sh",
               "cpu_seconds": f"{rusage.ru_utime + rusage.ru_stime:.3f}",
               "max_rss_kb": str(max_rss_kb)},
    )
    if uid:
        outcome.extra["uid"] = str(uid)
    if zygote is not None:
        outcome.extra["zygote"] = ",".join(preimport)
    outcome.extra["cgroup"] = "memory" if cgroup is not None else "none"
    outcome.extra["view"] = ("allow-list" if cmd[0].endswith("ckd-launch") and limits.allowlist
                             else "deny-list" if mode != "rlimits" else "host")
    outcome.limit_hit = (hit or ("memory" if oom else None)
                         or _workspace_full(workdir, limits.disk_bytes)
                         or _limit_hit(outcome, limits))
    return outcome


def _workspace_full(workdir: Path, disk_bytes: int | None) -> str | None:
    """'disk' or 'files' when the run filled its workspace tmpfs (the kernel refused further
    writes with ENOSPC; the program may have gone on and exited cleanly)."""
    if not _in_workspace(workdir):
        return None
    try:
        st = os.statvfs(workdir)
    except OSError:
        return None
    if st.f_ffree == 0:
        return "files"
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    if st.f_bavail * st.f_frsize < 64 * 1024 or (disk_bytes is not None and used >= disk_bytes):
        return "disk"
    return None


def _wait4(proc: Any) -> tuple[int, int, Any]:
    """(pid, status, rusage) of a finished launcher, (0, 0, None) while it runs: ours, or the
    zygote's that forked it (which reaped it and sent both)."""
    if hasattr(proc, "wait4"):
        from .zygote import ZygoteLost

        try:
            return proc.wait4()
        except ZygoteLost as exc:
            raise SandboxError(f"the run's zygote failed: {exc}") from exc
    return os.wait4(proc.pid, os.WNOHANG)


def _zygote(preimport: tuple[str, ...], argv: list[str], preload: str | None,
            env: dict[str, str]) -> Any:
    """The zygote to fork this run from, or None (exec'd as always)."""
    if not preimport or preload is not None or argv[1:3] != ["-I", "-c"] or len(argv) < 4:
        return None
    from . import zygote

    if not zygote.enabled() or argv[0] != python_executable():
        return None
    return zygote.zygote_for(argv[0], tuple(preimport), env)


def _reap_quietly(proc: Any) -> None:
    """Wait for a killed launcher so no zombie (and no cgroup member) is left."""
    for _ in range(500):
        try:
            pid, _, _ = _wait4(proc)
        except (ChildProcessError, SandboxError):
            return
        if pid:
            proc.returncode = -signal.SIGKILL
            return
        time.sleep(0.01)


def inputs_read(workdir: Path, protect: list[str] | tuple[str, ...]) -> dict[str, bool] | None:
    """Which protected files the run read, from their access times (see `run_sandboxed`'s
    `protect`). None when this mode cannot tell (no uid switch: the program owns its files)."""
    from .safe_fs import stat_beneath

    if sandbox_mode() != "namespaces+uid" or not _in_workspace(Path(workdir)):
        return None  # no uid switch, or a file system whose atime policy is not ours
    out: dict[str, bool] = {}
    for rel in protect:
        st = stat_beneath(Path(workdir), rel)
        out[rel] = st is not None and st.st_atime_ns != 0
    return out


# --- the run's workspace ---------------------------------------------------------------------

_MOUNTED: set[str] = set()
MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2


@functools.cache
def _libc():  # type: ignore[no-untyped-def]
    import ctypes
    import ctypes.util

    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def _mount_tmpfs(path: Path, size: int, inodes: int) -> bool:
    if os.geteuid() != 0 or os.environ.get("CKD_SANDBOX_TMPFS") == "0":
        return False
    opts = f"size={size},nr_inodes={inodes},mode=0755".encode()
    ok = _libc().mount(b"ckd-work", str(path).encode(), b"tmpfs", MS_NOSUID | MS_NODEV, opts) == 0
    if ok:
        _MOUNTED.add(str(path))
    return ok


def _unmount(path: Path) -> None:
    if str(path) in _MOUNTED:
        _libc().umount2(str(path).encode(), MNT_DETACH)
        _MOUNTED.discard(str(path))


@contextlib.contextmanager
def workspace(limits: Limits | None = None, *, reserve_bytes: int = 0,
              prefix: str = "ckd-run-") -> Iterator[Path]:
    """A fresh run root, removed afterwards whatever it holds. As root it is a tmpfs of
    `limits.disk_bytes + reserve_bytes` bytes and `limits.max_files` inodes: the kernel, not a
    poll, bounds what a program writes there, and removal is an unmount."""
    limits = limits or Limits()
    _sweep_stale_workspaces()
    # The pid in the name lets a later process clear what a killed one left mounted.
    root = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-")).resolve()
    size = (limits.disk_bytes or 64 * GIB) + reserve_bytes + MIB
    try:
        _mount_tmpfs(root, size, (limits.max_files or 1_000_000) + 64)
        yield root
    finally:
        _unmount(root)
        from .safe_fs import remove_tree

        remove_tree(root)


@functools.cache
def _sweep_stale_workspaces() -> int:
    """Unmount and remove workspaces of validator processes that died without cleaning up
    (SIGKILL, OOM): once per process. Returns how many were cleared."""
    import re

    from .safe_fs import remove_tree

    if os.geteuid() != 0:
        return 0
    cleared = 0
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return 0
    for line in lines:
        fields = line.split()
        if len(fields) < 10 or " - tmpfs ckd-work " not in line:
            continue
        mount_point = fields[4].replace("\\040", " ")
        m = re.search(r"/ckd-[a-z]+-(\d+)-[^/]*$", mount_point)
        if m is None or Path(f"/proc/{m.group(1)}").exists():
            continue
        if _libc().umount2(mount_point.encode(), MNT_DETACH) == 0:
            remove_tree(Path(mount_point))
            cleared += 1
    return cleared


def _in_workspace(path: Path) -> bool:
    return any(str(path) == m or str(path).startswith(m + "/") for m in _MOUNTED)


# --- memory cgroup ---------------------------------------------------------------------------

@functools.cache
def _memory_cgroup_base() -> tuple[Path, str] | None:
    """(our memory cgroup directory, 'v1' | 'v2') when we may create children in it."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base = Path("/sys/fs/cgroup/memory") / path.lstrip("/")
            if (base / "memory.limit_in_bytes").exists():
                return _probe_cgroup(base, "v1")
    for line in lines:
        if line.startswith("0::"):
            base = Path("/sys/fs/cgroup") / line[3:].lstrip("/")
            if (base / "cgroup.controllers").exists() and "memory" in (
                    base / "cgroup.subtree_control").read_text():
                return _probe_cgroup(base, "v2")
    return None


def _probe_cgroup(base: Path, version: str) -> tuple[Path, str] | None:
    probe = base / f"ckd-probe-{os.getpid()}"
    try:
        probe.mkdir()
        _write_limit(probe, version, 1 << 30)
        probe.rmdir()
        return base, version
    except OSError:
        try:
            probe.rmdir()
        except OSError:
            pass
        return None


def _write_limit(cg: Path, version: str, limit: int) -> None:
    if version == "v1":
        (cg / "memory.limit_in_bytes").write_text(str(limit))
        swap = cg / "memory.memsw.limit_in_bytes"
        if swap.exists():
            swap.write_text(str(limit))  # memory plus swap: no escape into swap
    else:
        (cg / "memory.max").write_text(str(limit))
        if (cg / "memory.swap.max").exists():
            (cg / "memory.swap.max").write_text("0")


def _make_memory_cgroup(uid: int, limit: int | None) -> Path | None:
    found = _memory_cgroup_base() if limit is not None else None
    if found is None:
        return None
    base, version = found
    cg = base / f"ckd-{uid}"
    try:
        cg.mkdir()
        _write_limit(cg, version, int(limit))  # type: ignore[arg-type]
    except OSError:
        _remove_memory_cgroup(cg)
        return None
    return cg


def _high_pipe() -> tuple[int, int]:
    """A pipe whose write end is 10 or above (the shell set-up opens 3-9 for its mounts)."""
    r, w = os.pipe()
    high = fcntl.fcntl(w, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(w)
    return r, high


def _read_report(fd: int) -> tuple[bool, int | None]:
    """(whether the set-up handed over to the program, the program's peak RSS as the launcher's
    init reported it or None), from the report pipe; closes `fd`. The set-up writes `exec` just
    before the program starts, init `maxrss_kb N` after it ended; nothing of the program's
    reaches the pipe before them (the shell path's program holds the write end, but can only
    append after our `exec`)."""
    data = b""
    try:
        os.set_blocking(fd, False)
        while len(data) < 4096:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except OSError:
        pass
    finally:
        os.close(fd)
    lines = data.decode("ascii", "replace").splitlines()
    execd = bool(lines) and lines[0] == "exec"
    rss = None
    for line in lines[1:2]:
        key, _, value = line.partition(" ")
        if key == "maxrss_kb" and value.strip().isdigit():
            rss = int(value)
    return execd, rss


def _cgroup_peak_kb(cg: Path) -> int | None:
    """Peak memory charged to the run's cgroup (v1 max_usage, v2 memory.peak where it exists)."""
    for name in ("memory.max_usage_in_bytes", "memory.peak"):
        try:
            return int((cg / name).read_text().split()[0]) >> 10
        except (OSError, ValueError, IndexError):
            continue
    return None


def _remove_memory_cgroup(cg: Path) -> bool:
    """Remove the run's cgroup; True when the kernel's OOM killer acted inside it."""
    oom = False
    for name in ("memory.oom_control", "memory.events"):
        try:
            for line in (cg / name).read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill" and value.strip() not in ("", "0"):
                    oom = True
        except OSError:
            pass
    for _ in range(200):  # the namespace's last processes may still be exiting
        try:
            cg.rmdir()
            break
        except FileNotFoundError:
            break
        except OSError:
            time.sleep(0.01)
    return oom


DISK_POLL_SECONDS = 0.25


class _DiskWatch:
    """Polls the work directory's size and entry count at most every DISK_POLL_SECONDS, unless
    a workspace tmpfs enforces both already. The walk is iterative and bounded: a tree of any
    shape costs at most `max_files` entries per poll and never raises."""

    def __init__(self, workdir: Path, limit: int | None, max_files: int | None = None) -> None:
        self.workdir, self.limit, self.max_files, self.next = workdir, limit, max_files, 0.0
        if _in_workspace(workdir):
            self.limit = self.max_files = None
        self.hit: str | None = None

    def over(self) -> bool:
        if (self.limit is None and self.max_files is None) or time.monotonic() < self.next:
            return False
        from .safe_fs import tree_usage

        self.next = time.monotonic() + DISK_POLL_SECONDS
        usage = tree_usage(self.workdir, max_entries=self.max_files or 1_000_000)
        if self.max_files is not None and usage.truncated:
            self.hit = "files"
            return True
        if self.limit is not None and usage.bytes > self.limit:
            self.hit = "disk"
            return True
        return False


def _pump(proc: subprocess.Popen, limits: Limits, started: float, disk: _DiskWatch,
          cancel: threading.Event | None = None) -> tuple[bytes, bytes, bool, str | None]:
    """Read stdout/stderr as they come; kill the group on timeout, too much output or disk."""
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()  # type: ignore[union-attr]
    bufs = {out_fd: bytearray(), err_fd: bytearray()}
    sel = selectors.DefaultSelector()
    for fd in bufs:
        os.set_blocking(fd, False)
        sel.register(fd, selectors.EVENT_READ)
    total = 0
    timed_out = over = False
    hit: str | None = None
    deadline = started + limits.wall_seconds
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0 or (cancel is not None and cancel.is_set()):
                timed_out = True
                break
            if disk.over():
                hit = disk.hit
                break
            for key, _ in sel.select(timeout=min(remaining, DISK_POLL_SECONDS)):
                try:
                    chunk = os.read(key.fd, 65536)
                except BlockingIOError:
                    continue
                if not chunk:
                    sel.unregister(key.fd)
                    continue
                room = limits.output_bytes - total
                if room > 0:
                    bufs[key.fd] += chunk[:room]
                total += len(chunk)
                if total > limits.output_bytes:
                    over = True
                    hit = "output"
                    break
            if over:
                break
        if timed_out or hit:
            _kill_group(proc)
    finally:
        sel.close()
        proc.stdout.close()  # type: ignore[union-attr]
        proc.stderr.close()  # type: ignore[union-attr]
    return bytes(bufs[out_fd]), bytes(bufs[err_fd]), timed_out, hit


def _reap(proc: subprocess.Popen, deadline: float, disk: _DiskWatch,
          cancel: threading.Event | None = None) -> tuple[int, object, bool, str | None]:
    """Wait for the launcher (not through Popen, to get its rusage); kill it at the deadline
    or when the work directory grows too big."""
    late = False
    hit: str | None = None
    while True:
        pid, status, rusage = _wait4(proc)
        if pid:
            return status, rusage, late, hit
        if (time.monotonic() >= deadline or (cancel is not None and cancel.is_set())) and not late:
            late = True
            _kill_group(proc)
        elif hit is None and disk.over():
            hit = disk.hit
            _kill_group(proc)
        time.sleep(0.005)


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _decode_status(code: int | None, mode: str) -> tuple[int | None, int | None]:
    if code is None:
        return None, None
    if code < 0:
        return code, -code
    if mode != "rlimits" and code > SIGNAL_STATUS_BASE and code - SIGNAL_STATUS_BASE < 65:
        return code, code - SIGNAL_STATUS_BASE
    return code, None


_MEMORY_MARKERS = ("std::bad_alloc", "MemoryError", "Cannot allocate memory", "out of memory",
                   "cudaErrorMemoryAllocation")
_PROCESS_MARKERS = ("Resource temporarily unavailable", "fork: retry", "can't fork",
                    "Cannot fork")


def _limit_hit(o: RunOutcome, limits: Limits) -> str | None:
    if o.timed_out:
        return None
    if o.signal == signal.SIGXCPU or (
        o.signal == signal.SIGKILL and limits.cpu_seconds is not None
        and float(o.extra.get("cpu_seconds", 0)) >= limits.cpu_seconds
    ):
        return "cpu"
    if o.signal == signal.SIGXFSZ:
        return "file_size"
    if o.exit_code not in (0, None) or o.signal:
        if limits.memory_bytes is not None and any(m in o.stderr for m in _MEMORY_MARKERS):
            return "memory"
        if any(m in o.stderr for m in _PROCESS_MARKERS):
            return "processes"
    return None


def _hand_over(workdir: Path, uid: int, protect: list[str] | tuple[str, ...] = ()) -> None:
    """Give the work directory to the sandbox uid (it writes its outputs there), 0700; the
    `protect`ed files stay root's, read-only, with access time 0, in root-owned sticky
    directories the program can add to but not rename or remove from."""
    from .safe_fs import walk_entries

    keep = {os.path.normpath(os.path.join(workdir, p)) for p in protect}
    sticky = {os.path.dirname(p) for p in keep}
    for path, st in walk_entries(workdir):
        if path in keep:
            os.lchown(path, 0, 0)
            os.chmod(path, 0o444)
            os.utime(path, ns=(0, st.st_mtime_ns), follow_symlinks=False)
        elif path in sticky:
            os.chmod(path, 0o1777)
        else:
            os.lchown(path, uid, uid)
    if keep:
        os.chmod(workdir, 0o1777)  # root's: `data/` cannot be renamed away
    else:
        os.chown(workdir, uid, uid)
        os.chmod(workdir, 0o700)


RECLAIM_ENTRIES = 10_000


def _reclaim(workdir: Path) -> None:
    """Give the work directory's files back to us after a run under another uid (bounded: past
    RECLAIM_ENTRIES the rest stays the sandbox uid's; root reads and removes them anyway)."""
    from .safe_fs import walk_entries

    uid, gid = os.getuid(), os.getgid()
    for n, (path, _) in enumerate(walk_entries(workdir)):
        if n >= RECLAIM_ENTRIES:
            break
        try:
            os.lchown(path, uid, gid)
        except OSError:
            pass
    try:
        os.chown(workdir, uid, gid)
        os.chmod(workdir, 0o755)
    except OSError:
        pass
