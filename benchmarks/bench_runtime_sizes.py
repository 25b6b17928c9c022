"""A thorough check of each built-in task on cold caches, side by side, task by task, with the
verdicts compared, under two of three ways of building a task's cases (`--sides`):

- `off`: the cases' sizes compiled in (a build per size set and variant);
- `apart`: sizes read at run time (one build serves every case whose sizes have the same names
  and types; see validators/cpu/README.md, "Run-time sizes"), but the case that changes no size
  built on its own, with the program's values (before the run-time build served it too);
- `on`: as the validators build today: the case that changes no size is told the program's own
  values at run time when they are plain literals, and shares the other cases' build.

    python benchmarks/bench_runtime_sizes.py                 # every built-in task, apart vs on
    python benchmarks/bench_runtime_sizes.py --only softmax,adam_update --sides off,on

`cpu` is this process's CPU seconds and its children's (compilers, sandboxes, references): the
figure to trust when other work shares the cores.
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


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated task names")
    ap.add_argument("--sides", default="apart,on", help="two of off, apart, on (before,after)")
    args = ap.parse_args()
    sides = tuple(args.sides.split(","))
    if len(sides) != 2 or not set(sides) <= {"off", "apart", "on"}:
        ap.error(f"--sides takes two of off, apart, on, not {args.sides!r}")

    from sources.builtin.loader import load_tasks
    from validators.backends.cpu import CpuBackend
    from validators.build_cache import BuildCache
    from validators.cpu import toolchain
    from validators.engine import Engine
    from validators.reference import ReferenceRunner

    class Apart(CpuBackend):
        def build_case(self, program, defines, defaults, *, variant="plain"):  # type: ignore[no-untyped-def]
            return self.build(program, defines, variant=variant)

    pairs = load_tasks()
    if args.only:
        keep = set(args.only.split(","))
        pairs = [p for p in pairs if p[0].name in keep]
    for v in ("plain", "asan", "race"):  # once per machine, not per check
        toolchain.runtime_object(v)
        toolchain.pch_header(v)
    stats: dict[str, dict[str, list[float]]] = {s: {"cpu": [], "wall": [], "builds": []} for s in sides}
    differ = 0
    print(f"{'task':22s}" + "".join(f"{s + ': verdict builds cpu s':>30s}" for s in sides))
    for task, program in pairs:
        line, verdicts = [f"{task.name:22s}"], {}
        for side in sides:
            toolchain.RUNTIME_SIZES = side != "off"
            with tempfile.TemporaryDirectory(prefix="ckd-rtsizes-") as d:
                cache = BuildCache(Path(d) / "builds")
                backend = (Apart if side == "apart" else CpuBackend)(cache=cache)
                engine = Engine(backend, cache=cache,
                                references=ReferenceRunner(root=Path(d) / "refs"))
                c0, t0 = _cpu(), time.perf_counter()
                res = engine.check(task, program)
                cpu, wall = _cpu() - c0, time.perf_counter() - t0
                builds = sum(1 for _ in (Path(d) / "builds").rglob("meta.json"))
            verdicts[side] = res.status.value
            for k, v in (("cpu", cpu), ("wall", wall), ("builds", builds)):
                stats[side][k].append(v)
            line.append(f"{res.status.value:>14s} {builds:6d} {cpu:8.1f}")
        if len(set(verdicts.values())) > 1:
            differ += 1
            line.append("  VERDICTS DIFFER")
        print(" ".join(line), flush=True)
    toolchain.RUNTIME_SIZES = True
    n = len(pairs)
    print(f"\n{n} thorough checks, cold caches, cpu backend; verdicts that differ: {differ}")
    before, after = sides
    print(f"{'':22s} {before:>10s} {after:>10s} {after + '/' + before:>10s}")
    for label, key, fn in (("builds, total", "builds", sum), ("cpu s, total", "cpu", sum),
                           ("cpu s, median", "cpu", statistics.median),
                           ("wall s, median", "wall", statistics.median)):
        a, b = fn(stats[before][key]), fn(stats[after][key])
        print(f"{label:22s} {a:10.1f} {b:10.1f} {b / a if a else float('nan'):10.2f}")
    return 1 if differ else 0


if __name__ == "__main__":
    os.environ.setdefault("CKD_ALLOW_WEAK_SANDBOX", "1")
    raise SystemExit(main())
