"""Torch runs exec'd vs forked from a zygote: KernelBench verdicts side by side.

Each mode verifies the same answers in a fresh process (so the zygote's own start, one torch
import, is counted), with one shared, already warm build cache (the extension builds are the
same either way and would only blur the difference), and prints per answer the verdict and the
seconds, then the totals with the CPU-seconds of every process the check started:

    python benchmarks/bench_torch_zygote.py --problems PATH/kernelbench_level1 \\
        --answers tests/validators/kernelbench/answers [--limit N] [--fast]

Verdicts must be identical in both modes; the script exits 1 when one differs.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import json, resource, sys, time
from pathlib import Path
from validators.kernelbench import verify
pairs, fast = json.loads(sys.argv[1]), sys.argv[2] == "1"
rows = []
for stem, problem, answer in pairs:
    t0 = time.perf_counter()
    r = verify(Path(problem).read_text(), Path(answer).read_text(), fast=fast, task_name=stem,
               fresh_seed=12345)
    rows.append({"problem": stem, "status": r.status.value, "rule": r.rule,
                 "seconds": time.perf_counter() - t0})
print(json.dumps(rows))
"""


def run_mode(pairs: list[list[str]], fast: bool, zygote: bool, cache: str) -> dict:
    env = {**os.environ, "CKD_CACHE_DIR": cache, "CKD_TORCH_ZYGOTE": "1" if zygote else "0",
           "PYTHONPATH": str(ROOT)}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps(pairs), "1" if fast else "0"],
                         env=env, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        raise SystemExit(f"the {'zygote' if zygote else 'exec'} run failed:\n{out.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"rows": json.loads(out.stdout.strip().splitlines()[-1]), "wall": wall, "cpu": cpu}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", required=True, type=Path, help="folder of KernelBench problems")
    ap.add_argument("--answers", required=True, type=Path, help="folder of answers (same stems)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--fast", action="store_true", help="the fast check (one variant)")
    args = ap.parse_args()
    pairs = [[a.stem, str(args.problems / a.name), str(a)]
             for a in sorted(args.answers.glob("*.py")) if (args.problems / a.name).exists()]
    if args.limit:
        pairs = pairs[:args.limit]
    if not pairs:
        raise SystemExit(f"no answer in {args.answers} has a problem in {args.problems}")
    with tempfile.TemporaryDirectory(prefix="ckd-bench-zygote-") as cache:
        print(f"warming the build cache with {len(pairs)} answers ...", flush=True)
        run_mode(pairs, args.fast, True, cache)
        results = {}
        for zygote in (False, True):
            label = "zygote" if zygote else "exec"
            results[label] = run_mode(pairs, args.fast, zygote, cache)
            print(f"{label}: {results[label]['wall']:.1f}s wall, "
                  f"{results[label]['cpu']:.1f} CPU-s", flush=True)
    print(f"\n{'problem':44s} {'exec':>16s} {'s':>6s} {'zygote':>16s} {'s':>6s}")
    differ = 0
    for a, b in zip(results["exec"]["rows"], results["zygote"]["rows"], strict=True):
        same = (a["status"], a["rule"]) == (b["status"], b["rule"])
        differ += not same
        print(f"{a['problem'][:44]:44s} {a['status']:>16s} {a['seconds']:6.1f} "
              f"{b['status']:>16s} {b['seconds']:6.1f}{'' if same else '  DIFFERS'}")
    e, z = results["exec"], results["zygote"]
    print(f"\n{len(pairs)} answers ({'fast' if args.fast else 'thorough'} check, warm build "
          f"cache): wall {e['wall']:.1f}s -> {z['wall']:.1f}s ({z['wall'] / e['wall']:.2f}), "
          f"CPU {e['cpu']:.1f}s -> {z['cpu']:.1f}s ({z['cpu'] / e['cpu']:.2f}); "
          f"{differ} verdicts differ")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
