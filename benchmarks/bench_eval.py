"""Samples validated per minute by `cuset eval` on the cpu backend, for the built-in held-out
split, with the right program (the task's main.cu in a ```cuda fence) as every sample: once with
a cold cache (a fresh CKD_CACHE_DIR) and once warm (the same cache, a fresh output folder).

    python benchmarks/bench_eval.py [--n 3] [--limit 12] [--workers 2]

No model is involved: the samples come from an in-process sampler, so the figure is the
validation side of an evaluation (extraction, sandboxed build and runs, comparison).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cuset.eval.benchmarks import EvalTask, load_benchmark  # noqa: E402
from cuset.eval.runner import RunOptions, run_eval  # noqa: E402
from cuset.eval.samplers import Completion  # noqa: E402


class RightPrograms:
    label = "right-programs"

    def sample(self, items: list[tuple[EvalTask, int]]):
        for task, idx in items:
            yield Completion(task.id, idx, f"```cuda\n{task.reference_program}```\n", 0)


def _timed(tasks: list[EvalTask], out: Path, n: int, workers: int) -> tuple[float, dict]:
    t0 = time.perf_counter()
    summary = run_eval(tasks, RightPrograms(), RunOptions(out=out, n=n, ks=(1,), backend="cpu",
                                                          workers=workers, progress=False))
    return time.perf_counter() - t0, summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    tasks = load_benchmark("builtin", limit=args.limit)
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as tmp:
        os.environ["CKD_CACHE_DIR"] = str(Path(tmp) / "cache")
        cold, s1 = _timed(tasks, Path(tmp) / "cold", args.n, args.workers)
        warm, s2 = _timed(tasks, Path(tmp) / "warm", args.n, args.workers)
    samples = s1["n_samples"]
    print(f"{len(tasks)} tasks x n={args.n} = {samples} samples, cpu backend, "
          f"{args.workers} workers, {os.cpu_count()} cores")
    print(f"{'cache':6s} {'seconds':>8s} {'samples/min':>12s} {'Function Pass@1':>16s}")
    for name, secs, s in (("cold", cold, s1), ("warm", warm, s2)):
        print(f"{name:6s} {secs:8.1f} {60 * samples / secs:12.1f} "
              f"{100 * s['function_pass_at_k']['1']:15.1f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
