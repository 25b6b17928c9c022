"""Run the real service (`python -m validators serve`) in a subprocess on a free loopback port,
and the built-in programs the service tests send it."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[3]
TOKEN_ENV = "CKD_SERVICE_TEST_TOKEN"
TASK = "clamp"
"""A small built-in task: five cases of at most 64 Ki floats, built in well under a second."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    proc: subprocess.Popen
    url: str
    log: Path
    token: str | None

    def stop(self, sig: int = signal.SIGTERM, wait: float = 60.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(wait)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait(10)

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def start_server(tmp: Path, *args: str, token: str | None = None,
                 ready_seconds: float = 120.0, prefix: str = "",
                 ignored_signals: tuple[int, ...] = ()) -> Server:
    """Start the server with `args` (after `serve`) and wait until /healthz answers; the API is
    at `prefix` below the root (Ray Serve's `--route-prefix`). `ignored_signals` start out
    ignored in the server, as SIGINT is in a background job of a non-interactive shell."""
    port = free_port()
    env = dict(os.environ)
    cmd = [sys.executable, "-m", "validators", "serve", "--host", "127.0.0.1",
           "--port", str(port), *args]
    if token is not None:
        env[TOKEN_ENV] = token
        cmd += ["--token-env", TOKEN_ENV]
    log = tmp / f"server-{port}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                preexec_fn=_ignoring(ignored_signals) if ignored_signals else None)
    server = Server(proc, f"http://127.0.0.1:{port}{prefix}", log, token)
    deadline = time.monotonic() + ready_seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited ({proc.returncode}):\n{server.log_text()}")
        try:
            if httpx.get(server.url + "/healthz", timeout=2).status_code == 200:
                return server
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    server.stop(signal.SIGKILL)
    raise RuntimeError(f"the server did not become ready:\n{server.log_text()}")


def _ignoring(signals: tuple[int, ...]):
    def ignore() -> None:
        for sig in signals:
            signal.signal(sig, signal.SIG_IGN)
    return ignore


def reference_program(task: str = TASK) -> str:
    return (ROOT / "sources" / "builtin" / "tasks" / task / "main.cu").read_text()


def wrong_program() -> str:
    """clamp with the wrong upper bound: builds and runs, and its outputs differ."""
    return reference_program().replace("#define CLAMP_HI 2.0f", "#define CLAMP_HI 2.5f")


def _before_save(extra: str) -> str:
    src = "#include <unistd.h>\n" + reference_program()
    return src.replace('    save_array("data/y.bin", y);', f'    {extra}\n    save_array("data/y.bin", y);')


def endless_program(marker: str = "ckd-endless") -> str:
    """Launches its kernel, then never ends (and never writes its output); its binary holds
    `marker`, which `processes_running` finds."""
    return _before_save(f'std::fprintf(stderr, "%s\\n", "{marker}"); for (;;) usleep(100000);')


def _regular_file_holds(arg: bytes, needle: bytes) -> bool:
    """Whether `arg` names a regular file that holds `needle`. Anything else another process
    names (`/dev/fd/3`, a fifo, a device) is not read: opened here it would be this process's
    own descriptor or block forever (under pytest-xdist, fd 3 is the worker's pipe)."""
    try:
        path = Path(arg.decode())
        if not stat.S_ISREG(path.stat().st_mode):
            return False
        with open(path, "rb", opener=lambda p, f: os.open(p, f | os.O_NONBLOCK)) as fh:
            return needle in fh.read()
    except (OSError, UnicodeDecodeError):
        return False


def processes_running(marker: str) -> list[int]:
    """Live (not zombie) processes whose executable or command line names a file holding
    `marker`: the program and its sandbox launcher."""
    needle, found, seen = marker.encode(), [], {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            state = (entry / "stat").read_bytes()
            args = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if state[state.rindex(b")") + 2:].split()[0] == b"Z":
            continue
        for arg in args:
            if not arg.startswith(b"/"):
                continue
            if arg not in seen:
                seen[arg] = _regular_file_holds(arg, needle)
            if seen[arg]:
                found.append(int(entry.name))
                break
    return found


def slow_program(seconds: float = 0.3) -> str:
    """Correct, but sleeps `seconds` in every case (5 cases): keeps a worker busy."""
    return _before_save(f"usleep({int(seconds * 1e6)});")
