"""What the kernel-work run on every case costs a thorough check, side by side with the run on
the fresh case alone (how checks were made before), on cold build and reference caches.

    python benchmarks/bench_kernel_work_cases.py            # 8 built-in tasks, about 4 minutes
    python benchmarks/bench_kernel_work_cases.py --tasks 59

`before` and `after` alternate task by task with the same fresh seed, so both check the same
cases and the machine's drift hits both; `cpu` is this process's CPU seconds plus every child's
(compilers, sandboxes, references).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.bench_check_cost import _cpu  # noqa: E402  (this process's CPU and its children's)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tasks", type=int, default=8)
    ap.add_argument("--seed", type=int, default=12345, help="the fresh seed of every check")
    args = ap.parse_args()

    from sources.builtin.loader import load_tasks
    from validators import zygote
    from validators.backends.cpu import CpuBackend
    from validators.build_cache import BuildCache
    from validators.cpu import toolchain
    from validators.engine import Engine
    from validators.reference import ReferenceRunner

    class FreshCaseOnly(Engine):
        """The kernel-work run on the fresh case alone."""

        def _check_case(self, task, program, case, *a, kernel_check=False, **kw):
            return super()._check_case(task, program, case, *a, **kw,
                                       kernel_check=kernel_check and case.name.endswith("+fresh"))

    pairs = load_tasks()
    pairs = pairs[:: max(1, len(pairs) // args.tasks)][: args.tasks]
    for v in ("plain", "asan", "race"):  # built once per machine, not per check
        toolchain.runtime_object(v)
        toolchain.pch_header(v)
    cpus: dict[str, list[float]] = {"before": [], "after": []}
    print(f"{'task':22s} {'before CPU-s':>13s} {'after CPU-s':>12s}  verdicts")
    for task, program in pairs:
        row, verdicts = [], []
        for side, cls in (("before", FreshCaseOnly), ("after", Engine)):
            with tempfile.TemporaryDirectory(prefix="ckd-kw-") as d:
                cache = BuildCache(Path(d) / "builds")
                engine = cls(CpuBackend(cache=cache), cache=cache,
                             references=ReferenceRunner(root=Path(d) / "refs"))
                c0 = _cpu()
                res = engine.check(task, program, fresh_seed=args.seed)
                zygote.close_all()  # a forked run's CPU is its zygote's: counted when it ends
                cpu = _cpu() - c0
            cpus[side].append(cpu)
            row.append(cpu)
            verdicts.append(res.status.value)
        print(f"{task.name:22s} {row[0]:13.2f} {row[1]:12.2f}  {' / '.join(verdicts)}", flush=True)
    b, a = statistics.median(cpus["before"]), statistics.median(cpus["after"])
    print(f"\nmedian CPU-s per thorough check: before {b:.2f}, after {a:.2f} ({a / b:.2f})")
    tb, ta = sum(cpus["before"]), sum(cpus["after"])
    print(f"total: before {tb:.1f}, after {ta:.1f} ({ta / tb:.2f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
