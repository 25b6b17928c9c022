"""Torch runs forked from a zygote: the same run as an exec'd interpreter, in the same sandbox.

Every test compares with, or attacks, what `run_sandboxed(..., preimport=TORCH_PREIMPORT)` gives
a `python -I -c` harness; one zygote per test process is started once (torch's import).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from validators import zygote
from validators.sandbox import (
    Limits,
    SandboxError,
    python_executable,
    python_prefixes,
    run_sandboxed,
    sandbox_mode,
)
from validators.sandbox_launcher import launcher_path
from validators.torch_module import COMMON, TORCH_ENV, TORCH_PREIMPORT

pytestmark = pytest.mark.skipif(
    sandbox_mode() != "namespaces+uid" or launcher_path() is None,
    reason="the zygote needs the C launcher's uid mode")

PROBE = r"""
import json, os, random, sys
import torch
fds = sorted(int(f) for f in os.listdir("/proc/self/fd"))
print(json.dumps({
    "uid": os.getuid(), "cwd": os.getcwd(), "argv": sys.argv, "name": __name__,
    "env": dict(os.environ), "fds": fds, "random": random.random(),
    "marker": getattr(torch, "_ckd_marker", None), "path": sys.path,
    "sum": torch.arange(10).sum().item(), "modules_main": sys.modules["__main__"].__name__,
}))
torch._ckd_marker = "left by an earlier run"
"""


@pytest.fixture(scope="module", autouse=True)
def own_zygotes():
    """The file's tests count and kill this process's zygotes: those other files' tests left
    (another environment keys another zygote) are set aside meanwhile, and the file's own are
    stopped after it, so what a test sees does not depend on which files ran before it here."""
    with zygote._REGISTRY_LOCK:
        before = dict(zygote._ZYGOTES)
        zygote._ZYGOTES.clear()
    yield
    zygote.close_all()
    with zygote._REGISTRY_LOCK:
        zygote._ZYGOTES.update(before)


def run(work: Path, code: str, *, preimport: tuple[str, ...] = TORCH_PREIMPORT,
        args: tuple[str, ...] = (), env: dict[str, str] | None = None,
        limits: Limits | None = None, **kw: object):
    return run_sandboxed([python_executable(), "-I", "-c", code, *args], work,
                         env={**TORCH_ENV, **(env or {})}, expose=python_prefixes(),
                         preimport=preimport, limits=limits, **kw)


def probe(work: Path, **kw: object) -> tuple[dict, object]:
    out = run(work, PROBE, args=("a1", "a2"), env={"CKD_PROBE": "x"}, **kw)
    assert out.exit_code == 0, out.stderr[-2000:]
    return json.loads(out.stdout), out


def test_a_forked_run_is_the_exec_d_run(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    forked, out_f = probe(tmp_path / "a")
    fresh, out_e = probe(tmp_path / "b", preimport=())
    assert out_f.extra.get("zygote") == ",".join(TORCH_PREIMPORT)
    assert "zygote" not in out_e.extra
    for got, work in ((forked, tmp_path / "a"), (fresh, tmp_path / "b")):
        assert got["cwd"] == str(work)
        assert got["argv"] == ["-c", "a1", "a2"]
        assert got["name"] == got["modules_main"] == "__main__"
        assert got["env"]["HOME"] == got["env"]["TMPDIR"] == str(work)
        assert got["sum"] == 45
    assert forked["uid"] != fresh["uid"] and forked["uid"] >= 1_000_000
    # The run's environment exactly (nothing of the zygote's own), the same import path.
    assert {k: v for k, v in forked["env"].items() if k not in ("HOME", "TMPDIR")} == \
        {k: v for k, v in fresh["env"].items() if k not in ("HOME", "TMPDIR")}
    assert forked["path"] == fresh["path"]
    # Nothing open but what an exec'd interpreter has: no descriptor into the host's tree
    # (the set-up's exposed paths are opened before pivot_root) or to the zygote.
    assert forked["fds"] == fresh["fds"] == [0, 1, 2, 3]


LOADS_A_MODULE = COMMON + r"""
import json, sys
before = set(sys.modules)
src = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x.sum(1)\n" \
      "def get_inputs():\n    return [torch.randn(4, 5)]\ndef get_init_inputs():\n    return []\n"
ns, cls = load_module(src, "Model", 7)
model = cls(*ns["get_init_inputs"]()).eval()
model(*ns["get_inputs"]())
print(json.dumps(sorted(set(sys.modules) - before)))
"""


def test_what_every_harness_loads_is_in_the_zygote_already(tmp_path: Path) -> None:
    """The modules a harness's `load_module` and a forward pull in lazily (torch's
    `use_deterministic_algorithms` imports torch._inductor and torch._dynamo, 1.5-2 CPU-s) are
    the zygote's imports, not every forked run's."""
    out = run(tmp_path, LOADS_A_MODULE)
    assert out.exit_code == 0 and out.extra.get("zygote"), out.stderr[-2000:]
    imported = json.loads(out.stdout.strip().splitlines()[-1])
    assert [m for m in imported if m.startswith("torch")] == [], imported


def test_runs_share_nothing_through_the_zygote(tmp_path: Path) -> None:
    seen = []
    for i in range(3):
        (tmp_path / str(i)).mkdir()
        got, out = probe(tmp_path / str(i))
        assert out.extra.get("zygote")
        seen.append(got)
    assert [s["marker"] for s in seen] == [None, None, None]  # an earlier run's change is gone
    assert len({s["random"] for s in seen}) == 3  # reseeded per run, as a fresh process is
    assert len({s["uid"] for s in seen}) == 3


def test_the_sandbox_holds_in_a_forked_run(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("host file")
    work = tmp_path / "w"
    work.mkdir()
    code = f"SECRET = {str(secret)!r}\n" + r"""
import os, socket, sys
try:
    print("READ", open(SECRET).read())
except OSError as exc:
    print("no read:", type(exc).__name__)
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).connect(("127.0.0.1", 9))
    print("CONNECTED")
except OSError as exc:
    print("no network:", type(exc).__name__)
try:
    os.setuid(0)
    print("ROOT")
except OSError as exc:
    print("no root:", type(exc).__name__)
"""
    out = run(work, code)
    assert out.extra.get("zygote") and out.exit_code == 0, out.stderr
    assert "READ" not in out.stdout and "no read" in out.stdout
    assert "CONNECTED" not in out.stdout and "no network" in out.stdout
    assert "ROOT" not in out.stdout and "no root" in out.stdout


def test_limits_and_exits_are_reported_as_for_an_exec_d_run(tmp_path: Path) -> None:
    def go(name: str, code: str, limits: Limits | None = None):
        (tmp_path / name).mkdir()
        out = run(tmp_path / name, code, limits=limits)
        assert out.extra.get("zygote"), out.extra
        return out

    spin = go("spin", "while True: pass", Limits(cpu_seconds=1, wall_seconds=20))
    assert spin.limit_hit == "cpu"
    t0 = time.monotonic()
    sleep = go("sleep", "import time\ntime.sleep(600)", Limits(wall_seconds=2))
    assert sleep.timed_out and time.monotonic() - t0 < 30
    raised = go("raise", "raise ValueError('broken harness')")
    assert raised.exit_code == 1 and "ValueError: broken harness" in raised.stderr
    message = go("exit", "import sys\nsys.exit('a message')")
    assert message.exit_code == 1 and "a message" in message.stderr
    code = go("code", "import sys\nprint('out')\nsys.exit(7)")
    assert code.exit_code == 7 and code.stdout == "out\n"
    # The run's CPU, from the zygote's wait4: the spin's, not the zygote's nor nothing. Not "at
    # least the limit": the kernel signals at 1 s of scheduler time, and the rusage it reports
    # is the sampled user/system split, which came to 0.954 s on a loaded two-core VM.
    assert 0.5 <= float(spin.extra["cpu_seconds"]) < 5


def test_standard_input_reaches_the_forked_run(tmp_path: Path) -> None:
    r, w = os.pipe()
    os.write(w, b"hello through stdin\n")
    os.close(w)
    try:
        out = run(tmp_path, "import sys\nprint(sys.stdin.readline().strip().upper())", stdin=r)
    finally:
        os.close(r)
    assert out.extra.get("zygote") and out.stdout == "HELLO THROUGH STDIN\n"


def test_a_zygote_dying_under_a_run_is_our_error(tmp_path: Path) -> None:
    (tmp_path / "first").mkdir()
    probe(tmp_path / "first")
    z = list(zygote._ZYGOTES.values())[-1]  # the most recently used: the probe's
    assert z.modules == TORCH_PREIMPORT and z.alive()

    def kill_soon() -> None:
        # Once the zygote has forked the run (a fixed delay could kill it before the run was
        # handed over on a loaded machine, and the run would then go to a fresh zygote).
        children = Path(f"/proc/{z.proc.pid}/task/{z.proc.pid}/children")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if children.read_text().split():
                    break
            except OSError:
                break
            time.sleep(0.05)
        time.sleep(0.3)
        with contextlib.suppress(ProcessLookupError):
            os.kill(z.proc.pid, signal.SIGKILL)

    threading.Thread(target=kill_soon, daemon=True).start()
    with pytest.raises(SandboxError, match="zygote"):
        run(tmp_path, "import time\ntime.sleep(60)", limits=Limits(wall_seconds=30))
    (tmp_path / "next").mkdir()
    got, out = probe(tmp_path / "next")  # a new zygote takes the next run
    assert out.extra.get("zygote") and got["sum"] == 45


def test_switched_off_every_run_is_exec_d(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKD_TORCH_ZYGOTE", "0")
    got, out = probe(tmp_path)
    assert "zygote" not in out.extra and got["sum"] == 45


def _torch_zygotes() -> list[zygote.Zygote]:
    return [z for z in zygote._ZYGOTES.values() if z.modules == TORCH_PREIMPORT and z.alive()]


def test_runs_whose_own_settings_differ_share_one_zygote(tmp_path: Path) -> None:
    """Only what an import may read keys a zygote: the emulator's per-run settings (a log path
    in the run's folder, a schedule) are the child's, or every run would start a zygote."""
    seen = []
    for i, schedule in enumerate(("forward", "reverse")):
        work = tmp_path / str(i)
        work.mkdir()
        out = run(work, "import os\nprint(os.environ['CUDASHIM_SCHEDULE'], os.environ['CUDASHIM_LOG'])",
                  env={"CUDASHIM_SCHEDULE": schedule, "CUDASHIM_LOG": str(work / "log")})
        assert out.extra.get("zygote") and out.stdout.split() == [schedule, str(work / "log")]
        seen.append({z.proc.pid for z in _torch_zygotes()})
    assert len(seen[0]) == 1 and seen[0] == seen[1]
    (tmp_path / "omp").mkdir()
    out = run(tmp_path / "omp", "print('ok')", env={"OMP_NUM_THREADS": "2"})
    assert out.extra.get("zygote") and len(_torch_zygotes()) == 2  # read at import: its own


def test_a_retired_zygote_finishes_its_runs(tmp_path: Path) -> None:
    (tmp_path / "warm").mkdir()
    probe(tmp_path / "warm")
    first = _torch_zygotes()
    result = {}

    def slow() -> None:
        (tmp_path / "slow").mkdir()
        result["out"] = run(tmp_path / "slow", "import time\ntime.sleep(3)\nprint('done')")

    t = threading.Thread(target=slow)
    t.start()
    time.sleep(1.0)
    for z in first:
        zygote._ZYGOTES.pop(next(k for k, v in zygote._ZYGOTES.items() if v is z))
        z.retire()
    t.join(60)
    assert result["out"].exit_code == 0 and result["out"].stdout == "done\n"
    for z in first:
        z.proc.wait(timeout=20)  # gone once its last run was reaped
    (tmp_path / "after").mkdir()
    got, out = probe(tmp_path / "after")
    assert out.extra.get("zygote") and {z.proc.pid for z in _torch_zygotes()}.isdisjoint(
        {z.proc.pid for z in first})


def test_a_zygote_that_takes_no_run_leaves_it_to_an_exec_d_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: zygote.Zygote, *a: object, **k: object) -> None:
        raise zygote.ZygoteError("the zygote took no run: test")

    monkeypatch.setattr(zygote.Zygote, "spawn", refuse)
    got, out = probe(tmp_path)
    assert "zygote" not in out.extra and got["sum"] == 45
    # The launcher's init reported the program's peak on the pipe's own descriptor, not fd 3.
    assert 0 < int(out.extra["max_rss_kb"]) < 4 << 20
