"""What one thorough check of a built-in task costs on a cold build cache, before and after,
side by side, and where the time goes: builds per variant, reference runs, program runs per
variant and purpose (schedules, poison probes, kernel-work runs), and the rest.

    python benchmarks/bench_check_cost.py                  # 8 built-in tasks, about 6 minutes
    python benchmarks/bench_check_cost.py --tasks 59       # every task
    python benchmarks/bench_check_cost.py --only softmax,matmul_tiled --warm

Each check runs on a private, empty build cache and reference cache (`--warm`: after one
untimed check that fills them). `before` and `after` alternate task by task, so the machine's
drift hits both, and their verdicts must agree. `wall` is this process's seconds; `cpu` adds
the CPU seconds of every child (compilers, sandboxes, references): what a busy machine pays,
and the figure to trust when other work shares the cores.

- before: every size define on g++'s command line (GCC then rejects the precompiled header
  whenever a define names an identifier the headers use, such as `N`, and parses them again);
  the ASan build with full debug information (`-g`); one reference process per case, each
  importing NumPy (`CKD_TORCH_ZYGOTE=0`);
- after: the defines follow the precompiled header in a forced include; the ASan build with
  line tables only (`-g1`); the uncached references of a check's cases in one process, forked
  from a zygote that imported NumPy.

A forked run is the zygote's child, not this process's: each timed check ends by stopping its
zygotes and waiting for them, so their CPU (their import included) counts in `cpu`.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import inspect
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


class Split:
    """Wall seconds by label, collected by wrapping the engine's and backend's methods."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = collections.defaultdict(float)
        self.cpu: dict[str, float] = collections.defaultdict(float)
        self.counts: dict[str, int] = collections.defaultdict(int)
        self._depth = 0

    @contextlib.contextmanager
    def timed(self, label: str):
        t, c = time.perf_counter(), _cpu()
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            self.seconds[label] += time.perf_counter() - t
            self.cpu[label] += _cpu() - c
            self.counts[label] += 1


def _purpose() -> str:
    callers = {f.function for f in inspect.stack()[2:12]}
    for name, label in (("_device_inputs_run", "run: kernel-work"),
                        ("_without_kernels", "run: no-launch"),
                        ("_uninitialised_reads", "run: poison probe"),
                        ("kernel_seconds", "run: timing")):
        if name in callers:
            return label
    return "run: case"


def instrument(engine, split: Split) -> None:
    backend = engine.backend
    build = backend.build

    def timed_build(program, defines, *, variant="plain"):
        with split.timed(f"build: {variant}"):
            return build(program, defines, variant=variant)

    backend.build = timed_build  # type: ignore[method-assign]
    run_once = engine._run_once

    def timed_run(task, exe, case, inputs, sizes, variant, schedule, **kw):
        label = _purpose()
        if label == "run: case":
            label = f"run: case {variant}/{schedule}"
        with split.timed(label):
            return run_once(task, exe, case, inputs, sizes, variant, schedule, **kw)

    engine._run_once = timed_run  # type: ignore[method-assign]
    refs = engine.references
    for name, label in (("outputs", "reference"), ("case_data", "reference"),
                        ("prefetch", "reference: batch")):
        orig = getattr(refs, name)

        def wrapped(*a, _orig=orig, _label=label, **kw):
            with split.timed(_label):
                return _orig(*a, **kw)

        setattr(refs, name, wrapped)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--only", default="", help="comma-separated task names")
    ap.add_argument("--warm", action="store_true", help="time a second check (warm caches)")
    args = ap.parse_args()

    from sources.builtin.loader import load_tasks
    from validators.backends.cpu import CpuBackend
    from validators.build_cache import BuildCache
    from validators.engine import Engine
    from validators.reference import ReferenceRunner

    pairs = load_tasks()
    if args.only:
        keep = set(args.only.split(","))
        pairs = [p for p in pairs if p[0].name in keep]
    # Spread over the alphabet rather than its first letters.
    pairs = pairs[:: max(1, len(pairs) // args.tasks)][: args.tasks]
    # The runtime object and precompiled header are built once per machine: not per check.
    from validators import zygote
    from validators.cpu import toolchain
    for v in ("plain", "asan", "race"):
        toolchain.runtime_object(v)
        toolchain.pch_header(v)

    before_shim = tempfile.mkdtemp(prefix="ckd-cost-shim-")
    after_flags = list(toolchain._FLAGS["asan"])
    before_flags = ["-g" if f == "-g1" else f for f in after_flags]

    @contextlib.contextmanager
    def side_settings(after: bool):
        """The toolchain as it was (before) or is (after); each side's runtime objects and
        precompiled headers live apart, built before any check is timed."""
        toolchain.DEFINES_AFTER_PCH = after
        toolchain._FLAGS["asan"] = after_flags if after else before_flags
        old = os.environ.get("CKD_SHIM_DIR")
        old_zygote = os.environ.get("CKD_TORCH_ZYGOTE")
        os.environ["CKD_TORCH_ZYGOTE"] = "1" if after else "0"
        if not after:
            os.environ["CKD_SHIM_DIR"] = before_shim
        toolchain.pch_macros.cache_clear()
        try:
            yield
        finally:
            toolchain.DEFINES_AFTER_PCH = True
            toolchain._FLAGS["asan"] = after_flags
            if old is None:
                os.environ.pop("CKD_SHIM_DIR", None)
            else:
                os.environ["CKD_SHIM_DIR"] = old
            if old_zygote is None:
                os.environ.pop("CKD_TORCH_ZYGOTE", None)
            else:
                os.environ["CKD_TORCH_ZYGOTE"] = old_zygote
            toolchain.pch_macros.cache_clear()

    with side_settings(False):
        for v in ("plain", "asan", "race"):
            toolchain.runtime_object(v)
            toolchain.pch_header(v)
    sides = {"before": False, "after": True}
    totals = {side: Split() for side in sides}
    walls: dict[str, list[float]] = {side: [] for side in sides}
    cpus: dict[str, list[float]] = {side: [] for side in sides}
    for task, program in pairs:
        line = [f"{task.name:22s}"]
        verdicts = {}
        for side, after in sides.items():
            with side_settings(after), tempfile.TemporaryDirectory(prefix="ckd-cost-") as d:
                cache = BuildCache(Path(d) / "builds")
                engine = Engine(CpuBackend(cache=cache), cache=cache,
                                references=ReferenceRunner(root=Path(d) / "refs"))
                if not after:
                    engine.references.prefetch = lambda *a, **k: 0  # one process per case
                if args.warm:
                    engine.check(task, program)
                    zygote.close_all()  # its CPU stays out of the timed check's
                split = Split()
                instrument(engine, split)
                c0, t0 = _cpu(), time.perf_counter()
                res = engine.check(task, program)
                zygote.close_all()
                wall, cpu = time.perf_counter() - t0, _cpu() - c0
            verdicts[side] = res.status.value
            walls[side].append(wall)
            cpus[side].append(cpu)
            for k, v in split.seconds.items():
                totals[side].seconds[k] += v
                totals[side].cpu[k] += split.cpu[k]
                totals[side].counts[k] += split.counts[k]
            line.append(f"{side} {res.status.value:7s} wall {wall:5.1f} s cpu {cpu:5.1f} s")
        same = "" if verdicts["before"] == verdicts["after"] else "  VERDICTS DIFFER"
        print("  ".join(line) + same, flush=True)

    n = len(pairs)
    print(f"\n{n} thorough checks, {'warm' if args.warm else 'cold'} caches, cpu backend")
    print(f"{'':18s} {'before':>9s} {'after':>9s} {'after/before':>13s}")
    for label, data in (("median wall s", walls), ("median cpu s", cpus)):
        b, a = statistics.median(data["before"]), statistics.median(data["after"])
        print(f"{label:18s} {b:9.2f} {a:9.2f} {a / b:13.2f}")
    for side in sides:
        total_wall, total_cpu = sum(walls[side]), sum(cpus[side])
        print(f"\nwhere the time goes ({side}):")
        print(f"{'part':32s} {'calls':>6s} {'wall s':>8s} {'share':>6s} {'cpu s':>8s} {'share':>6s}")
        acc_wall = acc_cpu = 0.0
        for k, v in sorted(totals[side].seconds.items(), key=lambda kv: -kv[1]):
            c = totals[side].cpu[k]
            acc_wall, acc_cpu = acc_wall + v, acc_cpu + c
            print(f"{k:32s} {totals[side].counts[k]:6d} {v:8.1f} {100 * v / total_wall:5.1f}% "
                  f"{c:8.1f} {100 * c / total_cpu:5.1f}%")
        rest_w, rest_c = total_wall - acc_wall, total_cpu - acc_cpu
        print(f"{'other (analysis, inputs, judge)':32s} {'':6s} {rest_w:8.1f} "
              f"{100 * rest_w / total_wall:5.1f}% {rest_c:8.1f} {100 * rest_c / total_cpu:5.1f}%")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("CKD_ALLOW_WEAK_SANDBOX", "1")
    raise SystemExit(main())
