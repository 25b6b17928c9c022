"""Verdicts per minute of the KernelBench verifier on the cpu backend, cold and warm build cache.

For each answer in a folder (`<problem stem>.py`, e.g. tests/validators/kernelbench/answers),
checks it against the problem of the same stem in `--problems` twice: first with an empty build
cache (`CKD_CACHE_DIR` a fresh folder: every extension compiled; the shim's runtime library and
precompiled header, built once per shim version, stay where they are unless `--cold-shim`), then
warm (the same cache). Prints each verdict and its time split (sizing, reference, answer
processes, extension builds) and the totals:

    python benchmarks/kernelbench_verify.py --problems PATH/kernelbench_level1 \\
        --answers tests/validators/kernelbench/answers [--fast] [--limit N] [--json OUT] \\
        [--backend cuda]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def run_all(pairs: list[tuple[str, Path, Path]], fast: bool, backend: str = "cpu") -> list[dict]:
    from validators.kernelbench import verify

    rows = []
    for stem, problem, answer in pairs:
        times: dict[str, float] = {}
        t0 = time.perf_counter()
        r = verify(problem.read_text(), answer.read_text(), backend=backend, fast=fast,
                   timings=times, task_name=stem)
        wall = time.perf_counter() - t0
        rows.append({"problem": stem, "status": r.status.value, "rule": r.rule,
                     "reason": r.reason[:160], "wall": wall, **times})
        print(f"  {stem:50s} {r.status.value:14s} {wall:7.1f}s  "
              + "  ".join(f"{k} {v:.1f}s" for k, v in times.items()), flush=True)
    return rows


def summary(label: str, rows: list[dict]) -> dict:
    wall = sum(r["wall"] for r in rows)
    parts = {k: sum(r.get(k, 0.0) for r in rows) for k in ("sizing", "reference", "answer", "build")}
    out = {"label": label, "verdicts": len(rows), "seconds": wall,
           "verdicts_per_minute": 60 * len(rows) / wall if wall else 0.0,
           "share": {k: v / wall if wall else 0.0 for k, v in parts.items()},
           "statuses": {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}}}
    share = ", ".join(f"{k} {100 * v:.0f}%" for k, v in out["share"].items())
    print(f"{label}: {len(rows)} verdicts in {wall:.0f}s = {out['verdicts_per_minute']:.2f}/min; "
          f"time in {share}; {out['statuses']}", flush=True)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", required=True, help="folder of KernelBench problem files")
    ap.add_argument("--answers", required=True, help="folder of answers named after problems")
    ap.add_argument("--fast", action="store_true", help="one checking variant per answer")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--cold-shim", action="store_true",
                    help="also rebuild the shim's runtime and precompiled header in the cold pass")
    ap.add_argument("--json", help="write the rows and summaries here")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"),
                    help="cuda: torch's own builder in each answer process (it has no cross-"
                         "process cache, so cold and warm differ only by the reference's)")
    args = ap.parse_args()
    os.environ.setdefault("CKD_ALLOW_WEAK_SANDBOX", "1")
    pairs = []
    for answer in sorted(Path(args.answers).glob("*.py")):
        problem = Path(args.problems) / answer.name
        if problem.is_file():
            pairs.append((answer.stem, problem, answer))
    if args.limit:
        pairs = pairs[: args.limit]
    if not pairs:
        print(f"no answer in {args.answers} matches a problem in {args.problems}", file=sys.stderr)
        return 2
    from validators.build_cache import cache_root

    with tempfile.TemporaryDirectory(prefix="ckd-kb-bench-") as cache:
        if not args.cold_shim:
            # The shim lives under the cache root unless CKD_SHIM_DIR says otherwise: keep it.
            os.environ.setdefault("CKD_SHIM_DIR", str(cache_root() / "cpu-shim"))
        os.environ["CKD_CACHE_DIR"] = cache
        print(f"cold build cache ({cache}), {len(pairs)} answers, "
              f"{'fast' if args.fast else 'thorough'}:", flush=True)
        cold = run_all(pairs, args.fast, args.backend)
        print("warm build cache:", flush=True)
        warm = run_all(pairs, args.fast, args.backend)
    report = {"cold": summary("cold", cold), "warm": summary("warm", warm),
              "rows": {"cold": cold, "warm": warm}}
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
