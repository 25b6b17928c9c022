"""A KernelBench module turned into a task (`builder.modules.module_task`) with a sandboxed
process per describe call (`describe_many`, the old way) and with one process for the whole size
plan (`DescribeSession`, the default), side by side, module by module, with the tasks compared.

    python benchmarks/bench_describe_session.py --kernelbench-dir DIR
    python benchmarks/bench_describe_session.py --kernelbench-dir DIR --only 19_ReLU.py,2_Standard_matrix_multiplication_.py

`cpu` is the sandboxed processes' CPU seconds (this process's children): the figure to trust
when other work shares the cores.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

DEFAULT = ("19_ReLU.py", "2_Standard_matrix_multiplication_.py", "47_Sum_reduction_over_a_dimension.py",
           "50_conv_standard_2D__square_input__square_kernel.py", "67_conv_standard_1D.py",
           "93_masked_cumsum.py")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kernelbench-dir", required=True, type=Path, help="KernelBench level-1 files")
    ap.add_argument("--only", default=",".join(DEFAULT), help="comma-separated file names")
    args = ap.parse_args()

    from builder.modules import ModuleTaskError, module_task
    from validators.torch_module import describe_many

    def measure(code: str, old: bool) -> tuple[float, float, int, str]:
        calls = [0]

        def apart(*a: object, **k: object) -> object:
            calls[0] += 1
            return describe_many(*a, **k)  # type: ignore[arg-type]

        c0, t0 = _children_cpu(), time.perf_counter()
        try:
            task = module_task("bench", code, **({"describe": apart} if old else {}))
            text = task.model_dump_json()
        except ModuleTaskError as exc:
            text = f"error {exc.reason}: {exc.detail}"
        return _children_cpu() - c0, time.perf_counter() - t0, calls[0] if old else 1, text

    rows = []
    print(f"{'module':50s} {'procs':>9s} {'cpu old':>8s} {'cpu new':>8s} {'ratio':>6s} {'wall old':>9s} "
          f"{'wall new':>9s} same")
    for name in [n for n in args.only.split(",") if n]:
        code = (args.kernelbench_dir / name).read_text()
        cpu_old, wall_old, procs, text_old = measure(code, old=True)
        cpu_new, wall_new, _, text_new = measure(code, old=False)
        same = text_old == text_new
        rows.append((cpu_old, cpu_new, wall_old, wall_new, procs, same))
        print(f"{name[:50]:50s} {procs:>4d} -> 1 {cpu_old:8.1f} {cpu_new:8.1f} {cpu_new / cpu_old:6.2f} "
              f"{wall_old:9.1f} {wall_new:9.1f} {'yes' if same else 'NO'}")
    if rows:
        cpu_old = sum(r[0] for r in rows)
        cpu_new = sum(r[1] for r in rows)
        print(f"\n{len(rows)} modules: processes {sum(r[4] for r in rows)} -> {len(rows)}, "
              f"CPU s {cpu_old:.1f} -> {cpu_new:.1f} (ratio {cpu_new / cpu_old:.2f}), median per "
              f"module {statistics.median(r[0] for r in rows):.1f} -> "
              f"{statistics.median(r[1] for r in rows):.1f}; tasks that differ: "
              f"{sum(not r[5] for r in rows)}")
    return 0 if all(r[5] for r in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
