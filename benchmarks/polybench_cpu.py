"""Run PolyBench-ACC's CUDA programs on the cpu backend and print a table.

    git clone https://github.com/cavazos-lab/PolyBench-ACC
    python benchmarks/polybench_cpu.py PolyBench-ACC [--dataset MINI_DATASET] [--thorough]

Each program under `CUDA/` is one `.cu` file that includes `utilities/polybench.h`; it is built
as its Makefile builds it (`nvcc -I utilities FILE`, with `-D<dataset>`) through
`python -m validators run --dir CUDA --nvcc ...`, in the sandbox, and run once (`--thorough`:
every build variant and schedule, the race build included). The program is its own oracle: it
recomputes the result on the host and prints `Non-Matching CPU-GPU Outputs Beyond Error
Threshold of X Percent: N`; PASS means N is 0 in every run, FAIL that some run printed N > 0 or
the validator failed the run (a race, an out-of-bounds access), and `ran` that the program
printed no comparison (doitgen, gemver).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_MISMATCH = re.compile(r"Non-Matching CPU-GPU Outputs Beyond Error Threshold of [\d.]+ Percent: (\d+)")


def run_one(cuda: Path, source: Path, dataset: str, thorough: bool, timeout: int) -> dict:
    rel = source.relative_to(cuda).as_posix()
    cmd = [sys.executable, "-m", "validators", "run", "--backend", "cpu", "--dir", str(cuda),
           "--nvcc", f"nvcc -O3 -D{dataset} -Iutilities {rel}", "--timeout", str(timeout),
           "--json"]
    if thorough:
        cmd.append("--thorough")
    t = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT)
    row = {"program": source.stem, "seconds": time.monotonic() - t}
    try:
        res = json.loads(proc.stdout)
    except ValueError:
        return row | {"verdict": "harness_error", "reason": (proc.stderr or proc.stdout)[-300:]}
    mismatches = [int(n) for n in _MISMATCH.findall(res.get("stdout") or "")]
    status = res.get("status", "?")
    if status != "passed":
        verdict = "FAIL" if status in ("failed", "runtime_error") else status
        return row | {"verdict": verdict, "reason": (res.get("reason") or "")[:200]}
    if not mismatches:
        return row | {"verdict": "ran", "reason": "prints no comparison"}
    bad = max(mismatches)
    return row | {"verdict": "PASS" if bad == 0 else "FAIL",
                  "reason": f"non-matching outputs: {bad}"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("root", type=Path, help="a PolyBench-ACC checkout")
    ap.add_argument("--dataset", default="MINI_DATASET",
                    help="MINI_DATASET, SMALL_DATASET, STANDARD_DATASET (the programs' default), ...")
    ap.add_argument("--thorough", action="store_true", help="every variant and schedule")
    ap.add_argument("--timeout", type=int, default=120, help="seconds per run")
    ap.add_argument("--only", nargs="*", default=None, help="program names (file stems)")
    args = ap.parse_args(argv)
    cuda = args.root / "CUDA"
    if not (cuda / "utilities" / "polybench.h").is_file():
        ap.error(f"{args.root}: no CUDA/utilities/polybench.h (not a PolyBench-ACC checkout)")
    sources = sorted(p for p in cuda.rglob("*.cu") if "utilities" not in p.parts)
    if args.only:
        sources = [p for p in sources if p.stem in args.only]
    rows = []
    for i, src in enumerate(sources, 1):
        row = run_one(cuda, src, args.dataset, args.thorough, args.timeout)
        rows.append(row)
        print(f"[{i}/{len(sources)}] {row['program']:<16} {row['verdict']:<10} "
              f"{row['seconds']:6.1f}s  {row['reason']}", flush=True)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    total = sum(r["seconds"] for r in rows)
    print(f"\n{len(rows)} programs ({args.dataset}{', thorough' if args.thorough else ''}) in "
          f"{total:.0f}s: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
