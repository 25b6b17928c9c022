"""What only a GPU can confirm about the `cuda` backend, in one command (`scripts/gpu_check.sh`).

On a machine where a GPU answers the sandboxed probe, it runs and prints a table:

1. every built-in task's reference program through the engine on `cuda` (thorough): all must
   pass;
2. the sanitizer builds on two planted bugs of built-in programs: an out-of-bounds write (memcheck
   must report it) and an atomic made plain (racecheck, or the outputs, must fail it);
3. the test suite's hostile programs on `cuda` (host-computed answers, which the kernel-work run
   must reject; host access to device memory, which a GPU faults on) and their honest twins,
   which must pass;
4. the validation service's speed term (`/v1/score`, speed=1) on a task's reference program and
   on the same program made slower on purpose (its kernel launched 8 times): the first's
   speed-up must be near 1 and above the second's;
5. a 2-step `cuset train` of the tiny config on the GPU;
6. the KernelBench answers of the cpu backend's tests (tests/validators/kernelbench/answers and
   its `bad/`) on their level-1 problems (`--kb-problems`, default ../shared/data/
   kernelbench_level1) through `validators.kernelbench.verify` on `cuda` (thorough): each
   verdict must be the cpu backend's (`KB_EXPECTED`, the verdicts the cpu tests and
   answers/bad/README.md state; `--kb-run-cpu` checks them on `cpu` too, in the same pool) or,
   where the cpu verdict comes from an emulator-only check (validators/kernelbench/README.md),
   one of the verdicts listed for cuda.

Elsewhere it prints "no GPU" and exits 0. Checks run `--jobs` at a time, one process each, and a
step stops waiting after `--step-seconds` (what did not finish is a row saying so); a failed step
is a row, not a crash, and the exit status is 1 when any row failed. `--out DIR` keeps every
check's whole result in `results.jsonl` (a line as each ends, so a run cut short keeps what it
did) and the table in `table.txt`.
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
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
sys.path.insert(0, str(ROOT / "tests" / "validators"))

Row = tuple[str, str, str]


class Settings:
    backend: str = "cuda"
    jobs: int = os.cpu_count() or 1
    step_seconds: float = 900.0
    out: Path | None = None
    only: set[str] = set()
    kb_problems: Path = ROOT.parent / "shared" / "data" / "kernelbench_level1"
    kb_run_cpu: bool = False
    kb_filter: str = ""


def _record(kind: str, name: str, payload: dict) -> None:
    if Settings.out is not None:
        with (Settings.out / "results.jsonl").open("a") as f:
            f.write(json.dumps({"kind": kind, "name": name, **payload}, default=str) + "\n")


def _probe() -> str:
    from validators.backends.cuda import probe_gpu

    if shutil.which("nvcc") is None:
        return ""
    probe = probe_gpu()
    if not probe.ok:
        print(f"probe: {probe.reason()}")
    return probe.device if probe.ok else ""


# --- checks of one program, in worker processes ------------------------------------------------

_ENGINE = None


def _engine():
    global _ENGINE
    if _ENGINE is None:
        from validators.backends import get_backend
        from validators.engine import Engine

        _ENGINE = Engine(get_backend(Settings.backend))
    return _ENGINE


def _task(kind: str, name: str):
    if kind == "builtin":
        from sources.builtin import load_all

        return {t.name: t for t, _ in load_all().tasks}[name]
    if kind == "kernel_work":
        import test_adversarial_kernel_work as m
    else:
        import test_adversarial_device_memory as m
    return m.SQUARE


def _check_one(job: tuple[str, str, str, bool]) -> dict:
    """(kind, name, program source, thorough) -> the engine's result, as plain data."""
    kind, name, source, thorough = job
    from schemas import Program

    t0 = time.monotonic()
    try:
        res = _engine().check(_task(kind, name.split("/")[0]), Program(source=source),
                              thorough=thorough)
    except Exception as exc:  # a crash of ours is a row naming its cause
        return {"status": "crash", "reason": f"{type(exc).__name__}: {exc}",
                "seconds": round(time.monotonic() - t0, 1)}
    return {"status": res.status.value, "reason": res.reason,
            "seconds": round(time.monotonic() - t0, 1), "kernel_check": res.kernel_check,
            "notes": res.notes, "result": json.loads(res.model_dump_json())}


def _run_jobs(kind: str, jobs: list[tuple], worker=None) -> dict[str, dict]:
    """Every job's result by name (a job's second item); what did not end within the step's
    time is 'timeout'. `worker` (module-level, for the pool) defaults to the engine's check."""
    results: dict[str, dict] = {}
    pool = cf.ProcessPoolExecutor(max_workers=max(1, min(Settings.jobs, len(jobs))))
    futures = {pool.submit(worker or _check_one, job): job[1] for job in jobs}
    try:
        for fut in cf.as_completed(futures, timeout=Settings.step_seconds):
            name = futures[fut]
            try:
                results[name] = fut.result()
            except Exception as exc:  # a worker that died
                results[name] = {"status": "crash", "reason": f"{type(exc).__name__}: {exc}"}
            _record(kind, name, results[name])
    except cf.TimeoutError:
        for name in futures.values():
            if name not in results:
                results[name] = {"status": "timeout",
                                 "reason": f"not done after {Settings.step_seconds:.0f} s"}
    finally:
        pool.shutdown(wait=False, cancel_futures=True)
    return results


def _summary(results: dict[str, dict], ok: dict[str, bool]) -> str:
    bad = [f"{n}: {r['status']} ({str(r.get('reason', ''))[:160]})"
           for n, r in sorted(results.items()) if not ok[n]]
    return "; ".join(bad[:6]) + (f"; and {len(bad) - 6} more" if len(bad) > 6 else "")


def _builtin_checks(rows: list[Row]) -> None:
    from sources.builtin import load_all

    tasks = load_all().tasks
    t0 = time.monotonic()
    results = _run_jobs("builtin", [("builtin", t.name, p.source, True) for t, p in tasks])
    ok = {n: r["status"] == "passed" for n, r in results.items()}
    rows.append((f"built-in tasks, thorough, {Settings.backend}", "ok" if all(ok.values()) else "FAILED",
                 f"{sum(ok.values())}/{len(tasks)} passed in {time.monotonic() - t0:.0f} s"
                 + ("; " + _summary(results, ok) if not all(ok.values()) else "")))


PLANTS = [
    ("memcheck: out-of-bounds write", "vector_add_int", r"if \((\w+) < (\w+)\)",
     r"if (\1 <= \2)", {"runtime_error"}),
    ("racecheck: shared atomic made plain", "histogram", r"atomicAdd\(&(local\[.+?\]), 1u\)",
     r"\1 += 1u", {"failed", "runtime_error"}),
]


def _planted_bugs(rows: list[Row]) -> None:
    from sources.builtin import load_all

    programs = {t.name: p for t, p in load_all().tasks}
    jobs, want = [], {}
    for label, name, pattern, repl, statuses in PLANTS:
        if name not in programs:
            rows.append((label, "skipped", f"no built-in task {name}"))
            continue
        source, n = re.subn(pattern, repl, programs[name].source, count=1)
        if not n:
            rows.append((label, "skipped", f"pattern not found in {name}"))
            continue
        jobs.append(("builtin", f"{name}/{label}", source, True))
        want[f"{name}/{label}"] = (label, statuses)
    for key, res in _run_jobs("planted", jobs).items():
        label, statuses = want[key]
        rows.append((label, "ok" if res["status"] in statuses else "FAILED",
                     f"{res['status']}: {str(res.get('reason', ''))[:160]}"))


def _hostile_programs(rows: list[Row]) -> None:
    """The suite's hostile programs and honest twins (written for the cpu backend's tests)."""
    import test_adversarial_device_memory as dm
    import test_adversarial_kernel_work as kw

    jobs = ([("kernel_work", f"cheat:{n}", s, False) for n, s in kw.CHEATS.items()]
            + [("kernel_work", f"honest:{n}", s, False) for n, s in kw.HONEST.items()]
            + [("device_memory", f"dm-cheat:{n}", s, False) for n, s in dm.CHEATS.items()]
            + [("device_memory", f"dm-honest:{n}", s, False) for n, s in dm.HONEST.items()])
    t0 = time.monotonic()
    results = _run_jobs("hostile", jobs)

    def good(name: str, res: dict) -> bool:
        if name.startswith("cheat:"):
            return res["status"] == "rejected"
        if name.startswith("dm-cheat:"):
            return res["status"] in ("rejected", "runtime_error", "failed")
        return res["status"] == "passed"

    ok = {n: good(n, r) for n, r in results.items()}
    rows.append((f"suite's hostile programs and twins, {Settings.backend}", "ok" if all(ok.values()) else "FAILED",
                 f"{sum(ok.values())}/{len(jobs)} as expected in {time.monotonic() - t0:.0f} s"
                 + ("; " + _summary(results, ok) if not all(ok.values()) else "")))


# --- the service and the trainer --------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _speed_term(rows: list[Row]) -> None:
    from sources.builtin import load_all

    tasks = {t.name: (t, p) for t, p in load_all().tasks}
    name = "vector_add_int" if "vector_add_int" in tasks else next(iter(tasks))
    _, program = tasks[name]
    slow, n = re.subn(r"(\w+)<<<([^>]*)>>>\(([^;]*)\);",
                      r"for (int ckd_rep = 0; ckd_rep < 8; ++ckd_rep) \1<<<\2>>>(\3);",
                      program.source, count=1)
    port = _free_port()
    log = (Settings.out / "serve.log").open("w") if Settings.out else subprocess.DEVNULL
    server = subprocess.Popen([sys.executable, "-m", "validators", "serve", "--backend", Settings.backend,
                               "--port", str(port), "--workers", "1"], cwd=ROOT,
                              stdout=log, stderr=subprocess.STDOUT)
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
        items = json.loads(urllib.request.urlopen(req, timeout=Settings.step_seconds).read())["results"]
        _record("speed", name, {"items": items})
        same, slower = (items[0].get("speedup"), items[1].get("speedup"))
        ok = bool(n and same and slower and same > slower and 0.5 < same < 2.0)
        rows.append(("service speed term (reference vs 8x launches)", "ok" if ok else "FAILED",
                     f"speed-up {same} vs {slower}" + ("" if n else " (no launch to repeat)")))
    except Exception as exc:  # a failed step is a row
        body = exc.read().decode("utf-8", "replace")[:300] if hasattr(exc, "read") else ""
        rows.append(("service speed term", "FAILED", f"{type(exc).__name__}: {exc} {body}"))
    finally:
        server.terminate()
        server.wait(timeout=30)


def _train(rows: list[Row]) -> None:
    sys.path.insert(0, str(ROOT / "tests" / "cuset"))
    from cuset_testdata import corpus_records, write_dataset

    with tempfile.TemporaryDirectory(prefix="ckd-gpu-train-") as out:
        data = write_dataset(corpus_records(), Path(out) / "data")
        proc = subprocess.run([sys.executable, "-m", "cuset", "train", "--config",
                               str(ROOT / "cuset" / "configs" / "tiny.yaml"),
                               f"data.path={data}", f"training.output_dir={out}/run",
                               "training.max_steps=2", "training.report_to=[]"],
                              cwd=ROOT, capture_output=True, text=True,
                              timeout=Settings.step_seconds)
        _record("train", "tiny", {"returncode": proc.returncode, "stdout": proc.stdout[-4000:],
                                  "stderr": proc.stderr[-4000:]})
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or [""]
        rows.append(("cuset train tiny, 2 steps", "ok" if proc.returncode == 0 else "FAILED",
                     tail[0][:160]))


# --- KernelBench answers: cuda against cpu ----------------------------------------------------

KB_ANSWERS = ROOT / "tests" / "validators" / "kernelbench" / "answers"
CPU_ONLY = "cpu-only check"
KB_EXPECTED: dict[str, tuple[str, set[str], str]] = {
    # bad answer's defence -> (the cpu backend's verdict, the verdicts accepted on cuda, why
    # they may differ). The good answers (answers/*.py) are `passed` on both.
    "race": ("failed", {"failed", "passed"},
             f"{CPU_ONLY}: thread schedules (a real GPU's race may not show)"),
    "uninit_shared": ("failed", {"failed", "passed"},
                      f"{CPU_ONLY}: shared memory poison (a GPU's shared memory is not poisoned)"),
    "uninit_output": ("failed", {"failed"}, "poison in the caching allocator"),
    # On cuda, torch_result (the data followed, no emulator needed) stands in for the launch
    # counting a real GPU lacks; never run on one yet, so a pass there is allowed and reported.
    "torch_fallback": ("rejected", {"rejected", "passed"},
                       f"{CPU_ONLY}: launch counting (cuda: torch_result)"),
    "try_except": ("rejected", {"rejected", "passed"},
                   f"{CPU_ONLY}: launch counting (cuda: torch_result)"),
    "torch_result": ("rejected", {"rejected"}, ""),
    "kernels_not_used": ("rejected", {"passed"}, f"{CPU_ONLY}: the no-launch run"),
    "inherits_model": ("rejected", {"rejected"}, ""),
    "input_mutation": ("rejected", {"rejected"}, ""),
    "cached_results": ("failed", {"failed"}, ""),
    "lazy_output": ("rejected", {"rejected"}, ""),
    "nan_output": ("failed", {"failed"}, ""),
    "triton": ("needs_gpu", {"passed"}, "Triton runs on a GPU"),
}


def _kb_one(job: tuple[str, str, str, str, str]) -> dict:
    """(backend, name, problem source, answer source, stem) -> the verdict, as plain data."""
    backend, _, problem, answer, stem = job
    from validators.kernelbench import verify

    t0 = time.monotonic()
    try:
        r = verify(problem, answer, backend=backend, task_name=stem)
    except Exception as exc:  # a crash of ours is a row naming its cause
        return {"status": "crash", "reason": f"{type(exc).__name__}: {exc}",
                "seconds": round(time.monotonic() - t0, 1)}
    return {"status": r.status.value, "rule": r.rule, "reason": r.reason,
            "seconds": round(time.monotonic() - t0, 1), "notes": r.notes,
            "kernel_check": r.kernel_check}


def kb_pairs(problems: Path, answers: Path = KB_ANSWERS) -> list[tuple[str, Path, Path, str]]:
    """(name, problem file, answer file, defence or '' for a correct answer) for every answer
    whose problem is in `problems`."""
    found = {p.stem: p for p in problems.rglob("*.py")} if problems.is_dir() else {}
    pairs = []
    for a in sorted(answers.glob("*.py")):
        if a.stem in found:
            pairs.append((a.stem, found[a.stem], a, ""))
    for a in sorted((answers / "bad").glob("*.py")):
        defence, _, stem = a.stem.partition("__")
        if stem in found:
            pairs.append((f"bad/{a.stem}", found[stem], a, defence))
    return pairs


def kb_expected(defence: str) -> tuple[str, set[str], str]:
    return KB_EXPECTED.get(defence, ("passed", {"passed"}, "")) if defence else \
        ("passed", {"passed"}, "")


def _kernelbench(rows: list[Row]) -> None:
    pairs = [p for p in kb_pairs(Settings.kb_problems) if Settings.kb_filter in p[0]]
    if not pairs:
        rows.append(("KernelBench answers", "skipped",
                     f"no problem of the answers in {Settings.kb_problems}"))
        return
    backends = [Settings.backend] + (["cpu"] if Settings.kb_run_cpu and Settings.backend != "cpu"
                                     else [])
    jobs = [(b, f"{b}:{name}", problem.read_text(), answer.read_text(), problem.stem)
            for name, problem, answer, _ in pairs for b in backends]
    t0 = time.monotonic()
    results = _run_jobs("kernelbench", jobs, worker=_kb_one)
    bad, differ = [], []
    for name, _, _, defence in pairs:
        cpu_want, gpu_want, why = kb_expected(defence)
        got = results.get(f"{Settings.backend}:{name}", {"status": "missing"})
        want = gpu_want if Settings.backend == "cuda" else {cpu_want}
        if got["status"] not in want:
            bad.append(f"{name}: {got['status']} (want {'/'.join(sorted(want))}): "
                       f"{str(got.get('reason', ''))[:160]}")
        cpu = results.get(f"cpu:{name}")
        if cpu is not None and Settings.backend != "cpu" and cpu["status"] != cpu_want:
            bad.append(f"{name}: cpu {cpu['status']} (want {cpu_want}): "
                       f"{str(cpu.get('reason', ''))[:160]}")
        if Settings.backend != "cpu" and got["status"] != cpu_want:
            differ.append(f"{name} {cpu_want}->{got['status']} ({why or 'unexplained'})")
    rows.append((f"KernelBench answers, {' and '.join(backends)}", "FAILED" if bad else "ok",
                 f"{len(pairs) - len(bad)}/{len(pairs)} as expected in "
                 f"{time.monotonic() - t0:.0f} s" + ("; " + "; ".join(bad[:8]) if bad else "")
                 + ("; differs from cpu: " + "; ".join(differ) if differ else "")))


# Quick, telling steps first: a run cut short still says the most it can.
STEPS = {"hostile": _hostile_programs, "planted": _planted_bugs, "builtin": _builtin_checks,
         "kernelbench": _kernelbench, "speed": _speed_term, "train": _train}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="checks run at once, one process each (default: the CPU count)")
    ap.add_argument("--step-seconds", type=float, default=900.0,
                    help="how long a step waits for its checks (default 900)")
    ap.add_argument("--only", default="", help=f"comma-separated steps of {', '.join(STEPS)}")
    ap.add_argument("--out", type=Path, help="folder for results.jsonl and table.txt")
    ap.add_argument("--backend", default="cuda", choices=("cuda", "cpu"),
                    help="cpu: a dry run of the script's own machinery where no GPU is")
    ap.add_argument("--kb-problems", type=Path, default=Settings.kb_problems,
                    help="folder of KernelBench level-1 problems (the kernelbench step)")
    ap.add_argument("--kb-run-cpu", action="store_true",
                    help="kernelbench step: also check every answer on cpu (slow: emulated)")
    ap.add_argument("--kb-filter", default="", help="kernelbench step: answers whose name "
                    "contains this text only")
    args = ap.parse_args(argv)
    Settings.kb_problems, Settings.kb_run_cpu = args.kb_problems, args.kb_run_cpu
    Settings.kb_filter = args.kb_filter
    Settings.backend = args.backend
    Settings.jobs, Settings.step_seconds, Settings.out = args.jobs, args.step_seconds, args.out
    only = {s for s in args.only.split(",") if s}
    if only - STEPS.keys():
        ap.error(f"--only: unknown step(s) {', '.join(sorted(only - STEPS.keys()))}; "
                 f"known: {', '.join(STEPS)}")
    if Settings.out is not None:
        Settings.out.mkdir(parents=True, exist_ok=True)
    device = _probe() if Settings.backend == "cuda" else "none (dry run on cpu)"
    if not device:
        print("no GPU: nothing to check here (the sandboxed probe found none)")
        return 0
    print(f"GPU: {device}")
    rows: list[Row] = []
    for key, step in STEPS.items():
        if only and key not in only:
            continue
        t0 = time.monotonic()
        try:
            step(rows)
        except Exception as exc:  # a failed step is a row
            rows.append((key, "FAILED", f"{type(exc).__name__}: {exc}"))
        print(f"[{key}] {time.monotonic() - t0:.0f} s: {rows[-1][1] if rows else ''}", flush=True)
    width = max(len(r[0]) for r in rows)
    table = [f"{'check':<{width}}  result  detail"]
    table += [f"{name:<{width}}  {result:<6}  {detail}" for name, result, detail in rows]
    print("\n" + "\n".join(table))
    if Settings.out is not None:
        (Settings.out / "table.txt").write_text("\n".join(table) + "\n")
    return 0 if all(r[1] in ("ok", "skipped") for r in rows) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
