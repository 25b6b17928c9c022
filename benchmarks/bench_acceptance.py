"""The cpu backend's acceptance corpus, whole: every mutant of the built-in programs (each
kind's first nine tasks: 86) checked with the engine's full checks, and with `--correct` every
built-in program itself, printed as one table with the count as expected.

    python benchmarks/bench_acceptance.py --cold        # 86 mutants, about 4 minutes on 2 cores
    python benchmarks/bench_acceptance.py --correct     # and the 59 built-in programs
    python benchmarks/bench_acceptance.py --per-kind 3  # the test suite's share

The mutation rules, what each must be rejected for and the hand-checked equivalents live in
tests/validators/test_cpu_corpus.py; its `test_acceptance_table` runs three of each kind, spread
over the tasks. A mutant is checked case by case and stops at the first case that rejects it.
"""

from __future__ import annotations

import argparse
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "validators"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--per-kind", type=int, default=None,
                    help="mutants of each kind, spread over its tasks (default: the whole corpus)")
    ap.add_argument("--correct", action="store_true", help="check every built-in program too")
    ap.add_argument("--workers", type=int, default=2, help="checks at a time (default 2)")
    ap.add_argument("--cold", action="store_true",
                    help="a fresh, empty build and reference cache (else the user's: warm, runs only)")
    args = ap.parse_args(argv)
    if args.cold:
        import os
        import tempfile

        os.environ["CKD_CACHE_DIR"] = tempfile.mkdtemp(prefix="ckd-acceptance-")

    from test_cpu_corpus import (
        MUTANTS_PER_KIND,
        Row,
        builtin_tasks,
        check_mutant,
        mutants,
        print_table,
        spread,
    )

    from schemas import Status
    from validators.backends.cpu import CpuBackend
    from validators.engine import Engine

    engine = Engine(CpuBackend())
    tasks = builtin_tasks()
    found = mutants(tasks, limit_per_kind=MUTANTS_PER_KIND)
    if args.per_kind is not None:
        found = spread(found, args.per_kind)

    def mutant(task, program, rule) -> Row:
        status, reason = check_mutant(engine, task, program)
        return Row(task.name, rule.kind, rule.expect, status, reason)

    def correct(task, program) -> Row:
        res = engine.check(task, program, thorough=True)
        return Row(task.name, "none", "pass", res.status.value, res.reason)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(mutant, t, p, r) for t, p, r in found]
        if args.correct:
            futures += [pool.submit(correct, t, p) for t, p in tasks]
        rows = []
        for i, f in enumerate(futures, 1):
            rows.append(f.result())
            print(f"\r{i}/{len(futures)} checked", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    print_table(rows)
    wall = time.perf_counter() - started
    kinds = sorted({r.kind for r in rows})
    print(f"\n{'kind':24s} {'checked':>8s} {'as expected':>12s}")
    for kind in kinds:
        mine = [r for r in rows if r.kind == kind]
        print(f"{kind:24s} {len(mine):8d} {sum(r.ok for r in mine):12d}")
    errors = sum(r.status == Status.ERROR.value for r in rows)
    print(f"\n{sum(r.ok for r in rows)}/{len(rows)} as expected, {errors} errors of ours, "
          f"{wall:.0f} s wall with {args.workers} checks at a time")
    return 0 if all(r.ok for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
