"""What only a GPU can confirm about the `cuda` backend, in one command (`scripts/gpu_check.sh`).

On a machine where a GPU answers the sandboxed probe, it runs and prints a table:

1. every built-in task's reference program through `validators check --backend cuda` (thorough):
   all must pass;
2. the sanitizer builds on two planted bugs of built-in programs: an out-of-bounds write (memcheck
   must report it) and an atomic made plain (racecheck, or the schedules, must fail it);
3. the validation service's speed term (`/v1/score`, speed=1) on a task's reference program and
   on the same program made slower on purpose (its kernel launched 8 times): the first's
   speed-up must be near 1 and above the second's;
4. a 2-step `cuset train` of the tiny config on the GPU.

Elsewhere it prints "no GPU" and exits 0. Each step has a time limit; a failed step is a row, not
a crash, and the exit status is 1 when any row failed.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def _probe() -> str:
    from validators.backends.cuda import probe_gpu

    if shutil.which("nvcc") is None:
        return ""
    probe = probe_gpu()
    return probe.device if probe.ok else ""


def _builtin_checks(rows: list[tuple[str, str, str]]) -> None:
    from sources.builtin import load_all
    from validators.backends import get_backend
    from validators.engine import Engine

    engine = Engine(get_backend("cuda"))
    bad = []
    tasks = load_all().tasks
    t0 = time.monotonic()
    for task, program in tasks:
        res = engine.check(task, program, thorough=True)
        if res.status.value != "passed":
            bad.append(f"{task.name}: {res.status.value} ({res.reason[:120]})")
    rows.append(("built-in tasks, thorough, cuda", "ok" if not bad else "FAILED",
                 f"{len(tasks) - len(bad)}/{len(tasks)} passed in {time.monotonic() - t0:.0f} s"
                 + ("; " + "; ".join(bad[:5]) if bad else "")))


def _planted_bugs(rows: list[tuple[str, str, str]]) -> None:
    from schemas import Program
    from sources.builtin import load_all
    from validators.backends import get_backend
    from validators.engine import Engine

    tasks = {t.name: (t, p) for t, p in load_all().tasks}
    engine = Engine(get_backend("cuda"))
    plants = [
        ("memcheck: out-of-bounds write", "vector_add_int", r"if \((\w+) < (\w+)\)",
         r"if (\1 <= \2)", {"runtime_error"}),
        ("racecheck: shared atomic made plain", "histogram", r"atomicAdd\(&(local\[.+?\]), 1u\)",
         r"\1 += 1u", {"failed", "runtime_error"}),
    ]
    for label, name, pattern, repl, want in plants:
        if name not in tasks:
            rows.append((label, "skipped", f"no built-in task {name}"))
            continue
        task, program = tasks[name]
        source, n = re.subn(pattern, repl, program.source, count=1)
        if not n:
            rows.append((label, "skipped", f"pattern not found in {name}"))
            continue
        res = engine.check(task, Program(source=source, filename=program.filename), thorough=True)
        ok = res.status.value in want
        rows.append((label, "ok" if ok else "FAILED", f"{res.status.value}: {res.reason[:160]}"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _speed_term(rows: list[tuple[str, str, str]]) -> None:
    from sources.builtin import load_all

    tasks = {t.name: (t, p) for t, p in load_all().tasks}
    name = "vector_add_int" if "vector_add_int" in tasks else next(iter(tasks))
    _, program = tasks[name]
    slow, n = re.subn(r"(\w+)<<<([^>]*)>>>\(([^;]*)\);",
                      r"for (int ckd_rep = 0; ckd_rep < 8; ++ckd_rep) \1<<<\2>>>(\3);",
                      program.source, count=1)
    port = _free_port()
    server = subprocess.Popen([sys.executable, "-m", "validators", "serve", "--backend", "cuda",
                               "--port", str(port), "--workers", "1"], cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except OSError:
                time.sleep(1)
        body = {"task_id": name, "speed": 1.0,
                "completions": [f"```cuda\n{program.source}\n```", f"```cuda\n{slow}\n```"]}
        req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/score",
                                     data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        items = json.loads(urllib.request.urlopen(req, timeout=1200).read())["results"]
        same, slower = (items[0].get("speedup"), items[1].get("speedup"))
        ok = bool(n and same and slower and same > slower and 0.5 < same < 2.0)
        rows.append(("service speed term (reference vs 8x launches)", "ok" if ok else "FAILED",
                     f"speed-up {same} vs {slower}" + ("" if n else " (no launch to repeat)")))
    except Exception as exc:  # a failed step is a row
        rows.append(("service speed term", "FAILED", f"{type(exc).__name__}: {exc}"))
    finally:
        server.terminate()
        server.wait(timeout=30)


def _train(rows: list[tuple[str, str, str]]) -> None:
    with tempfile.TemporaryDirectory(prefix="ckd-gpu-train-") as out:
        proc = subprocess.run([sys.executable, "-m", "cuset", "train", "--config",
                               str(ROOT / "cuset" / "configs" / "tiny.yaml"), "--output-dir", out,
                               "training.max_steps=2"], cwd=ROOT, capture_output=True, text=True,
                              timeout=1200)
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        rows.append(("cuset train tiny, 2 steps", "ok" if proc.returncode == 0 else "FAILED",
                     tail[0][:160]))


def main() -> int:
    device = _probe()
    if not device:
        print("no GPU: nothing to check here (the sandboxed probe found none)")
        return 0
    print(f"GPU: {device}")
    rows: list[tuple[str, str, str]] = []
    for step in (_builtin_checks, _planted_bugs, _speed_term, _train):
        try:
            step(rows)
        except Exception as exc:  # a failed step is a row
            rows.append((step.__name__.strip("_"), "FAILED", f"{type(exc).__name__}: {exc}"))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'check':<{width}}  result  detail")
    for name, result, detail in rows:
        print(f"{name:<{width}}  {result:<6}  {detail}")
    return 0 if all(r[1] in ("ok", "skipped") for r in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
