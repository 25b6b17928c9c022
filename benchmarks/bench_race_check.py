"""What the race build costs a thorough check of the CPU backend.

    python benchmarks/bench_race_check.py [--tasks 8] [--rounds 2]

Thorough checks of built-in tasks with their reference programs, each program built from an
empty build cache (as in a dataset build, where every program is new; the shim itself is warm),
with the race build (`asan`, `plain`, `race`: the race build runs `reverse` in the plain
build's stead) and without it (`asan`, `plain`), interleaved round by round in one run. Prints
the seconds per check of each side, the ratio, and the time of one race run against one plain
run of the same program (the instrumentation's slowdown on the tasks' own cases).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from schemas import Status  # noqa: E402
from sources.builtin import load_all  # noqa: E402
from validators.backends.cpu import CpuBackend  # noqa: E402
from validators.build_cache import BuildCache  # noqa: E402
from validators.cases import materialize  # noqa: E402
from validators.engine import Engine  # noqa: E402


def check_seconds(tasks, race: bool) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(CpuBackend(cache=BuildCache(Path(tmp)), race=race))
        t0 = time.perf_counter()
        passed = sum(engine.check(t, p, thorough=True).status == Status.PASSED for t, p in tasks)
        return (time.perf_counter() - t0) / len(tasks), passed


def run_seconds(tasks, variant: str) -> float:
    """Median seconds of one run of the first case, warm build, `reverse` schedule."""
    engine = Engine(CpuBackend())
    times = []
    for task, prog in tasks:
        one = task.model_copy(update={"cases": task.cases[:1]})
        case = one.cases[0]
        exe = engine.backend.build(prog, one.defines_for(case), variant=variant)
        inputs = materialize(one, case)
        t0 = time.perf_counter()
        engine._run_once(one, exe, case, inputs, one.case_sizes(case), variant, "reverse")
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    opts = ap.parse_args()
    tasks = load_all().tasks[: opts.tasks]
    # warm the shim (runtime objects and precompiled headers of every variant)
    check_seconds(tasks[:1], race=True)
    sides: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(opts.rounds):
        for race in (False, True):
            secs, passed = check_seconds(tasks, race)
            if passed != len(tasks):
                print(f"warning: {len(tasks) - passed} of {len(tasks)} reference programs did not pass")
            sides[race].append(secs)
    without, with_race = (statistics.median(sides[r]) for r in (False, True))
    print(f"{len(tasks)} built-in tasks ({', '.join(t.name for t, _ in tasks)}), "
          f"thorough checks, fresh build cache, {opts.rounds} rounds, 2 cores")
    print(f"{'':34s} {'s/check':>8s} {'checks/min':>11s}")
    print(f"{'without the race build':34s} {without:8.2f} {60 / without:11.1f}")
    print(f"{'with the race build':34s} {with_race:8.2f} {60 / with_race:11.1f}")
    print(f"ratio: {with_race / without:.2f}x the time per check")
    plain, race = run_seconds(tasks, "plain"), run_seconds(tasks, "race")
    print(f"one run of a case (median, warm build, sandboxed): plain {plain * 1000:.0f} ms, "
          f"race {race * 1000:.0f} ms ({race / plain:.2f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
