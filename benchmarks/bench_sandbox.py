"""Sandbox hardening, before and after, measured side by side in one run.

    python benchmarks/bench_sandbox.py              # about 3 minutes on 2 cores
    python benchmarks/bench_sandbox.py --tasks 4 --rounds 1

- Start-up: median wall time of `run_sandboxed(["/bin/true"])`.
  before = the host's `/` read-only with some folders covered (deny-list), no seccomp filter,
  a plain temporary folder; after = the allow-list root, the seccomp filter, a size- and
  inode-limited tmpfs workspace (mounted and removed per run).
- Thorough checks of built-in held-out tasks with their reference programs on the cpu backend,
  warm build and reference caches: before = the deny-list sandbox without a tmpfs workspace,
  no fresh-seed case, no kernel-dependence run; after = everything on. The two are interleaved
  round by round so the machine's drift hits both.
- The kernel-dependence run of those checks: before = every kernel launch a no-op, after = the
  device sees a second draw of the inputs (and, where that cannot tell, the no-launch run too).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from validators.sandbox import Limits, run_sandboxed, sandbox_mode, workspace  # noqa: E402


def startup(n: int) -> tuple[float, float]:
    before, after = [], []
    old = Limits(allowlist=False, seccomp=False, wall_seconds=10)
    new = Limits(wall_seconds=10)
    for _ in range(n):
        with tempfile.TemporaryDirectory(prefix="ckd-bench-") as d:
            t = time.perf_counter()
            run_sandboxed(["/bin/true"], Path(d), limits=old)
            before.append(time.perf_counter() - t)
        t = time.perf_counter()
        with workspace(new) as root:
            (root / "work").mkdir()
            run_sandboxed(["/bin/true"], root / "work", limits=new)
        after.append(time.perf_counter() - t)
    return statistics.median(before), statistics.median(after)


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def checks(n_tasks: int, rounds: int) -> dict[str, object]:
    """Per side: checks per minute (median over rounds of wall time) and CPU seconds per check
    (ours and our children's: the machine's other load does not inflate it)."""
    from cuset.eval.benchmarks import load_benchmark
    from schemas import Program
    from validators.backends import get_backend
    from validators.engine import DEFAULT_LIMITS, Engine

    tasks = [t for t in load_benchmark("builtin") if t.reference_program][:n_tasks]
    backend = get_backend("cpu")
    after = Engine(backend)
    before = Engine(backend, limits=DEFAULT_LIMITS.with_overrides(allowlist=False, seccomp=False),
                    kernel_check=False, fresh_case=False)
    verdicts = []
    for t in tasks:  # warm: builds, references of the published cases
        res = after.check(t.task, Program(source=t.reference_program))
        verdicts.append(f"{t.id}: {res.status.value} ({res.kernel_check})")
        os.environ["CKD_SANDBOX_TMPFS"] = "0"
        old = before.check(t.task, Program(source=t.reference_program))
        os.environ.pop("CKD_SANDBOX_TMPFS", None)
        assert old.status == res.status, (t.id, old.reason, res.reason)
    wall: dict[str, list[float]] = {"before": [], "after": []}
    cpu = {"before": 0.0, "after": 0.0}
    for _ in range(rounds):
        for label, engine in (("before", before), ("after", after)):
            if label == "before":
                os.environ["CKD_SANDBOX_TMPFS"] = "0"
            t0, c0 = time.perf_counter(), _cpu()
            for t in tasks:
                engine.check(t.task, Program(source=t.reference_program))
            wall[label].append(time.perf_counter() - t0)
            cpu[label] += _cpu() - c0
            os.environ.pop("CKD_SANDBOX_TMPFS", None)
    n = len(tasks)
    return {
        "n": n * rounds, "verdicts": verdicts,
        "per_min": {k: 60 * n / statistics.median(v) for k, v in wall.items()},
        "cpu_per_check": {k: v / (n * rounds) for k, v in cpu.items()},
    }


def kernel_work(n_tasks: int, rounds: int) -> dict[str, object]:
    """The kernel-dependence run of a thorough check, before (every launch a no-op) and after
    (the device sees a second draw of the inputs, `validators.kernel_work`): CPU seconds per
    check, warm build and reference caches (the second draw's reference is computed once per
    fresh seed, as the fresh case's is), interleaved round by round."""
    from cuset.eval.benchmarks import load_benchmark
    from schemas import Program
    from validators.backends import get_backend
    from validators.engine import Engine

    tasks = [t for t in load_benchmark("builtin") if t.reference_program][:n_tasks]
    backend = get_backend("cpu")
    engines = {"no-launch": Engine(backend, kernel_work=False), "device-input": Engine(backend)}
    decided: dict[str, str] = {}
    for t in tasks:  # warm, and the verdicts must agree
        res = {k: e.check(t.task, Program(source=t.reference_program)) for k, e in engines.items()}
        assert res["no-launch"].status == res["device-input"].status, (t.id, res)
        decided[t.id] = res["device-input"].kernel_check
    cpu = dict.fromkeys(engines, 0.0)
    for _ in range(rounds):
        for label, engine in engines.items():
            c0 = _cpu()
            for t in tasks:
                engine.check(t.task, Program(source=t.reference_program))
            cpu[label] += _cpu() - c0
    n = len(tasks) * rounds
    return {"n": n, "decided": decided, "cpu_per_check": {k: v / n for k, v in cpu.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--startups", type=int, default=40)
    ap.add_argument("--tasks", type=int, default=6)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    print(f"sandbox mode: {sandbox_mode()}, {os.cpu_count()} cores")
    b, a = startup(args.startups)
    print(f"start-up (median of {args.startups}): before {b * 1000:.1f} ms, after {a * 1000:.1f} ms, "
          f"ratio after/before {a / b:.2f}")
    r = checks(args.tasks, args.rounds)
    for v in r["verdicts"]:
        print("  " + v)
    pm, cpu = r["per_min"], r["cpu_per_check"]
    print(f"thorough checks ({r['n']} per side, warm caches, median of {args.rounds} rounds):")
    print(f"  wall: before {pm['before']:.1f}/min, after {pm['after']:.1f}/min, "
          f"slowdown {100 * (pm['before'] / pm['after'] - 1):+.1f}%")
    print(f"  CPU per check: before {cpu['before'] * 1000:.0f} ms, after {cpu['after'] * 1000:.0f} ms, "
          f"slowdown {100 * (cpu['after'] / cpu['before'] - 1):+.1f}% (target <= 20%)")
    k = kernel_work(args.tasks, args.rounds)
    by_device = sum(1 for v in k["decided"].values() if "by the no-launch run" not in v)
    print(f"kernel-dependence run ({k['n']} thorough checks per side, warm caches): "
          f"{by_device}/{len(k['decided'])} tasks decided by the device-input run")
    for tid, v in k["decided"].items():
        print(f"  {tid}: {v}")
    c = k["cpu_per_check"]
    print(f"  CPU per check: no-launch run {c['no-launch'] * 1000:.0f} ms, device-input run "
          f"{c['device-input'] * 1000:.0f} ms, ratio {c['device-input'] / c['no-launch']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
