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
"""

from __future__ import annotations

import argparse
import os
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


def checks(n_tasks: int, rounds: int) -> tuple[float, float, int, list[str]]:
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
        before.check(t.task, Program(source=t.reference_program))
    spent = {"before": 0.0, "after": 0.0}
    for _ in range(rounds):
        for label, engine in (("before", before), ("after", after)):
            if label == "before":
                os.environ["CKD_SANDBOX_TMPFS"] = "0"
            t0 = time.perf_counter()
            for t in tasks:
                engine.check(t.task, Program(source=t.reference_program))
            spent[label] += time.perf_counter() - t0
            os.environ.pop("CKD_SANDBOX_TMPFS", None)
    n = len(tasks) * rounds
    return 60 * n / spent["before"], 60 * n / spent["after"], n, verdicts


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
    vb, va, n, verdicts = checks(args.tasks, args.rounds)
    for v in verdicts:
        print("  " + v)
    print(f"thorough checks ({n} per side, warm caches): before {vb:.1f}/min, after {va:.1f}/min, "
          f"slowdown {100 * (vb / va - 1):+.1f}% (target <= 20%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
