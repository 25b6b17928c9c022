"""Sandboxed Python runs forked from an interpreter that already imported torch (or NumPy).

A torch run pays `import torch` (about 2 CPU-seconds on a small machine) before it does
anything, and a KernelBench check starts half a dozen of them. A zygote is a Python process,
started by the validator outside any sandbox, that imports the named modules and nothing else,
then forks one child per run. The child enters the sandbox through the C launcher's own set-up,
compiled as a library (`validators.sandbox_launcher.library_path`, `ckd_enter`): namespaces,
the allow-list root, cgroup, rlimits, the uid switch, `no_new_privs` and the system-call filter,
exactly as for an exec'd launcher. Where the launcher would exec the interpreter, the program's
process returns into the already-initialised one, which runs the harness as `python -I -c`
would: a fresh `__main__`, the run's `sys.argv` and environment.

What the zygote never holds: untrusted code or data. It receives only file descriptors; the
run's configuration (launcher arguments, environment, harness) is read by the child after the
fork, from a channel only that child and the validator hold, so nothing of one run is in the
memory the next run is forked from. Every descriptor past the run's standard three and the
launcher's report descriptor is closed before the set-up.

Processes: the validator <-> zygote over a SOCK_SEQPACKET pair (`spawn` + six descriptors per
run). Per run, one stream pair the zygote answers on (`{"pid"}`, `{"exited"}`, then, asked to
reap, `{"exit", ...}` with the wait status and rusage of the launcher process), and one that
carries the configuration to the child alone. The validator kills a run with `killpg(pid)` as
before (the zygote and the child both set the group, so no kill can land before it exists); the
launcher stays a zombie until the validator asks for the reap, so no kill can land on a process
that reused its pid either. When the validator's end closes, the zygote takes no more runs and
exits once those in flight are reaped (a retired zygote) or killed (the validator died: their
channels close too); its children die with it in any case (`PR_SET_PDEATHSIG`, set by the
launcher's set-up).

NumPy references (`validators.reference`) fork from a zygote that imported NumPy alone: the
import is most of a small reference's CPU time.

`CKD_TORCH_ZYGOTE=0` turns this off for both (every run exec's a fresh interpreter).
"""

from __future__ import annotations

import atexit
import json
import os
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass

# Environment variables that may change what an import does (thread pools, allocators, device
# selection, the interpreter itself): a run whose values differ gets a zygote of its own. Every
# other variable (HOME, TMPDIR, the emulator's settings) is the run's, set in the child.
IMPORT_ENV_PREFIXES = ("PATH", "LANG", "LC_", "PYTHON", "TORCH_", "PYTORCH_", "CUDA_",
                       "NVIDIA_", "OMP_", "GOMP_", "KMP_", "MKL_", "OPENBLAS_", "NUMEXPR_", "LD_",
                       "CUBLAS_", "CUDNN_", "NCCL_")
MAX_ZYGOTES = 4
"""Zygotes one process keeps (a torch one about 220 MB, NumPy's about 30); past it the longest
unused one stops. Four: a process that checks both CUDA tasks (NumPy references) and KernelBench
answers (torch runs under up to three environments) keeps all of them."""
START_SECONDS = 120.0
"""How long a zygote may take to import its modules before the run falls back to exec."""
SPAWN_SECONDS = 20.0

ZYGOTE_SOURCE = r'''
import ctypes, fcntl, json, os, select, signal, socket, struct, sys
main = socket.socket(fileno=int(sys.argv[1]))
lib = ctypes.CDLL(sys.argv[2])
lib.ckd_enter.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
lib.ckd_enter.restype = ctypes.c_int
libc = ctypes.CDLL(None)
libc.exit.argtypes = [ctypes.c_int]
for _name in filter(None, sys.argv[3].split(",")):
    __import__(_name)
del _name
_threads = len(os.listdir("/proc/self/task"))
if _threads != 1:
    # A fork copies only the calling thread: locks and pools of the others would be left
    # half-held in every child. Such an environment is exec'd instead.
    sys.exit("the imports left %d threads running: a zygote must be single-threaded" % _threads)

def _recv_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the validator closed the run's channel")
        data += chunk
    return data

def _exit_code(exc):
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1

def _leave(module, code):
    # The interpreter's exit, less its teardown of every module (about 0.5 CPU-s of a torch
    # process): non-daemon threads joined, atexit handlers, the harness's globals dropped
    # (files it left open are flushed and closed), the standard streams flushed, then the C
    # library's exit(): C-level exit handlers (the CUDA shim writes its logs there) and static
    # destructors run as at any exit.
    import atexit, threading
    try:
        threading._shutdown()
    except BaseException:
        pass
    try:
        atexit._run_exitfuncs()
    except BaseException:
        pass
    module.__dict__.clear()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass
    libc.exit(code & 0xFF)

def _child(fds):
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        os.setpgid(0, 0)
        # fds: the zygote's status channel (closed here), the run's configuration channel (only
        # this child reads it), stdin, stdout, stderr, the launcher's report descriptor.
        high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 200) for fd in fds[1:]]  # clear of 0-3
        chan = socket.socket(fileno=high[0])
        (n,) = struct.unpack("<Q", _recv_exactly(chan, 8))
        cfg = json.loads(_recv_exactly(chan, n))
        for k, fd in enumerate(high[1:]):
            os.dup2(fd, k, inheritable=True)
        os.closerange(4, 1 << 16)
        argv = [a.encode() for a in cfg["launcher"]]
        arr = (ctypes.c_char_p * (len(argv) + 1))(*argv, None)
        if lib.ckd_enter(len(argv), arr) != 0:
            os._exit(125)
    except BaseException as exc:
        try:
            os.write(2, ("ckd-sandbox-setup-failed: zygote child: %r\n" % (exc,)).encode())
        finally:
            os._exit(125)
    # The run's process: inside the sandbox, as its uid, under the filter.
    import builtins, traceback, types
    children.clear()
    os.environ.clear()
    os.environ.update(cfg["env"])
    if "tempfile" in sys.modules:
        sys.modules["tempfile"].tempdir = None  # TMPDIR is the run's
    import random
    random.seed()
    if "numpy.random" in sys.modules:
        sys.modules["numpy.random"].seed()
    sys.argv = ["-c", *cfg["args"]]
    module = types.ModuleType("__main__")
    module.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = module
    code = 0
    try:
        exec(compile(cfg["script"], "<string>", "exec"), module.__dict__)
    except SystemExit as exc:
        code = _exit_code(exc)
    except BaseException:
        traceback.print_exc()
        code = 1
    _leave(module, code)

def _send(chan, msg):
    try:
        chan.sendall(json.dumps(msg).encode() + b"\n")
    except OSError:
        pass

def _reap(pid):
    # Only when the validator asks (or left): until then the run's launcher stays a zombie,
    # holding its pid and process group, so a kill the validator sends can never reach a
    # process that reused them.
    chan = children.pop(pid)
    exited.discard(pid)
    try:
        os.killpg(pid, signal.SIGKILL)  # a no-op on a zombie; a run the validator left
    except OSError:
        pass
    _, status, ru = os.wait4(pid, 0)
    _send(chan, {"exit": status, "utime": ru.ru_utime, "stime": ru.ru_stime,
                 "maxrss": ru.ru_maxrss})
    chan.close()

wake_r, wake_w = os.pipe()
os.set_blocking(wake_r, False)
os.set_blocking(wake_w, False)
signal.set_wakeup_fd(wake_w)
signal.signal(signal.SIGCHLD, lambda *a: None)
children, exited = {}, set()
main.send(b"ready")
accepting = True
while accepting or children:
    # The validator's end closed: it retired this zygote (runs in flight finish) or died
    # (their channels close too, and each is killed and reaped).
    ready, _, _ = select.select([main] * accepting + [wake_r, *children.values()], [], [])
    try:
        while os.read(wake_r, 512):
            pass
    except BlockingIOError:
        pass
    for pid in [p for p in children if p not in exited]:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            exited.add(pid)
            _send(children[pid], {"exited": True})
    for pid, chan in list(children.items()):
        if chan in ready:
            try:
                asked = chan.recv(64)
            except OSError:
                asked = b""
            if not asked or b"reap" in asked:
                _reap(pid)
    if accepting and main in ready:
        try:
            msg, fds, _, _ = socket.recv_fds(main, 64, 8)
        except OSError:
            msg, fds = b"", []
        if not msg:
            accepting = False
            continue
        if msg != b"spawn" or len(fds) != 6:
            for fd in fds:
                os.close(fd)
            continue
        pid = os.fork()
        if pid == 0:
            _child(fds)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass  # it already did, or already died
        for fd in fds[1:]:
            os.close(fd)  # the configuration is the child's alone to read
        chan = socket.socket(fileno=fds[0])
        children[pid] = chan
        _send(chan, {"pid": pid})
'''


class ZygoteError(Exception):
    """The zygote could not start or take a run (the caller exec's the run instead)."""


class ZygoteLost(Exception):
    """The zygote died while a run it forked was in flight (our machinery, not the run's)."""


@dataclass
class Rusage:
    ru_utime: float
    ru_stime: float
    ru_maxrss: int


class ZygoteRun:
    """A run forked by a zygote, shaped as the parts of `subprocess.Popen` the sandbox uses."""

    def __init__(self, pid: int, chan: socket.socket, stdout_fd: int, stderr_fd: int,
                 buf: bytes) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self.stdout = os.fdopen(stdout_fd, "rb", buffering=0)
        self.stderr = os.fdopen(stderr_fd, "rb", buffering=0)
        self._chan, self._buf, self._exited = chan, buf, False
        chan.setblocking(False)

    def wait4(self) -> tuple[int, int, object]:
        """(pid, wait status, rusage) once the run's launcher exited, else (0, 0, None); raises
        ZygoteLost when the zygote went away first. The zygote reaps the launcher only when
        asked here, after it said the launcher exited: until this returns, the pid and process
        group stay the run's, so `killpg` reaches nothing else."""
        try:
            if not self._exited:
                if not self._read_line(block=False):
                    return 0, 0, None
                self._exited = True
                self._chan.setblocking(True)
                self._chan.settimeout(SPAWN_SECONDS)
                self._chan.sendall(b"reap\n")
            line = self._read_line(block=True)
        except OSError as exc:
            raise ZygoteLost(f"the zygote's channel failed: {exc}") from exc
        msg = json.loads(line)
        self._chan.close()
        return self.pid, int(msg["exit"]), Rusage(float(msg["utime"]), float(msg["stime"]),
                                                  int(msg["maxrss"]))

    def _read_line(self, *, block: bool) -> bytes:
        while b"\n" not in self._buf:
            try:
                chunk = self._chan.recv(4096)
            except BlockingIOError:
                if block:
                    raise
                return b""
            if not chunk:
                raise ZygoteLost("the zygote died while the run was in flight")
            self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line


class Zygote:
    """One zygote process: started once, forking a run per `spawn`."""

    def __init__(self, python: str, modules: tuple[str, ...], env: dict[str, str]) -> None:
        from .sandbox_launcher import library_path

        lib = library_path()
        if lib is None:
            raise ZygoteError("the launcher library could not be built (gcc)")
        self.modules, self.owner = modules, os.getpid()
        self._lock = threading.Lock()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self._errors = tempfile.TemporaryFile()
        started = time.monotonic()
        try:
            self.proc = subprocess.Popen(
                [python, "-I", "-c", ZYGOTE_SOURCE, str(theirs.fileno()), str(lib),
                 ",".join(modules)],
                env=env, cwd="/", stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                stderr=self._errors, pass_fds=(theirs.fileno(),), start_new_session=True)
        except OSError as exc:
            ours.close()
            raise ZygoteError(f"cannot start the zygote: {exc}") from exc
        finally:
            theirs.close()
        self.sock = ours
        ours.settimeout(START_SECONDS)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready":
            self.close()
            self._errors.seek(0)
            tail = self._errors.read()[-600:].decode("utf-8", "replace").strip()
            raise ZygoteError(f"the zygote did not start ({tail or 'no output'})")
        ours.settimeout(None)
        self.start_seconds = time.monotonic() - started

    def alive(self) -> bool:
        return self.proc.poll() is None and os.getpid() == self.owner

    def spawn(self, launcher: list[str], env: dict[str, str], script: str, args: list[str],
              stdin: int | None, report_w: int | None) -> ZygoteRun:
        """Fork a run: `launcher` is the launcher's command line (its program part is not
        exec'd; `--report-fd 3` where `report_w` is given: the child's fd 3 is `report_w`),
        `script` the `-c` code, run in a fresh `__main__` with `sys.argv == ['-c', *args]`."""
        cfg = json.dumps({"launcher": launcher, "env": env, "script": script,
                          "args": args}).encode()
        # Two channels: the zygote answers on one; the configuration goes to the child alone
        # on the other (the zygote closes its copy at the fork and never reads it).
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        cfg_ours, cfg_theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        null = os.open(os.devnull, os.O_RDWR)
        given = [theirs.fileno(), cfg_theirs.fileno(), null if stdin is None else stdin, out_w,
                 err_w, null if report_w is None else report_w]
        try:
            with self._lock:
                socket.send_fds(self.sock, [b"spawn"], given)
            cfg_theirs.close()
            cfg_ours.settimeout(SPAWN_SECONDS)
            cfg_ours.sendall(struct.pack("<Q", len(cfg)) + cfg)
            ours.settimeout(SPAWN_SECONDS)
            buf = b""
            while b"\n" not in buf:
                chunk = ours.recv(4096)
                if not chunk:
                    break
                buf += chunk
        except OSError as exc:
            buf = b""
            why = str(exc)
        else:
            why = "it forked no run"
        finally:
            for fd in (out_w, err_w, null):
                os.close(fd)
            theirs.close()
            cfg_theirs.close()
            cfg_ours.close()
        if b"\n" not in buf:
            for fd in (out_r, err_r):
                os.close(fd)
            ours.close()
            raise ZygoteError(f"the zygote took no run: {why}")
        line, _, rest = buf.partition(b"\n")
        return ZygoteRun(int(json.loads(line)["pid"]), ours, out_r, err_r, rest)

    def retire(self) -> None:
        """Take no more runs; the zygote exits once those in flight are reaped."""
        try:
            self.sock.close()
        except OSError:
            pass
        threading.Thread(target=self.proc.wait, name="ckd-zygote-retired", daemon=True).start()

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._errors.close()


_ZYGOTES: dict[tuple, Zygote] = {}
_REGISTRY_LOCK = threading.Lock()
_FAILED: dict[tuple, str] = {}


def enabled() -> bool:
    return os.environ.get("CKD_TORCH_ZYGOTE", "1") != "0"


def import_env(env: dict[str, str]) -> dict[str, str]:
    """The part of a run's environment its zygote must have had when importing."""
    return {k: v for k, v in env.items() if k.startswith(IMPORT_ENV_PREFIXES)}


def zygote_for(python: str, modules: tuple[str, ...], env: dict[str, str]) -> Zygote | None:
    """This process's zygote for `modules` under the import-relevant part of `env` (started on
    first use; None when one cannot start here, remembered so a broken set-up costs one try)."""
    base = import_env(env)
    key = (python, modules, tuple(sorted(base.items())))
    with _REGISTRY_LOCK:
        z = _ZYGOTES.pop(key, None)
        if z is not None and z.alive():
            _ZYGOTES[key] = z  # most recently used last
            return z
        if z is not None and z.owner == os.getpid():
            z.close()
        if _FAILED.get(key):
            return None
        while len(_ZYGOTES) >= MAX_ZYGOTES:
            old = _ZYGOTES.pop(next(iter(_ZYGOTES)))
            if old.owner == os.getpid():
                old.retire()
        try:
            z = Zygote(python, modules, {**base, "HOME": "/nonexistent"})
        except ZygoteError as exc:
            _FAILED[key] = str(exc)
            return None
        if not _ZYGOTES:
            # A normal exit waits for its zygotes (each ends at once when its end closes), so
            # none outlives the process and their CPU counts in the parent's accounting.
            atexit.register(close_all)
        _ZYGOTES[key] = z
        return z


def close_all() -> None:
    """Stop this process's zygotes and wait for them (registered to run at exit)."""
    with _REGISTRY_LOCK:
        for z in _ZYGOTES.values():
            if z.owner == os.getpid():
                z.close()
        _ZYGOTES.clear()
        _FAILED.clear()
