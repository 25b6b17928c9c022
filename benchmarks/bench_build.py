"""End-to-end build time of the default dataset.

Runs `python -m builder run` as a user would (a fresh process each time, Ray started by it):

  1. cold, 2 workers   (empty stage cache and empty validator build cache)
  2. fully cached, 2 workers (the same command again)
  3. cold, 1 worker    (for the 1 -> 2 worker scaling)

and prints wall time, time per phase and per stage, and records validated per minute.

    python benchmarks/bench_build.py [--limit N] [--backend cpu] [--skip-one-worker]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_build(out: Path, ckd_cache: Path, workers: int, extra: list[str]) -> dict:
    env = dict(os.environ, CKD_CACHE_DIR=str(ckd_cache))
    cmd = [
        sys.executable,
        "-m",
        "builder",
        "run",
        "--out",
        str(out),
        "--workers",
        str(workers),
        "--no-progress",
        *extra,
    ]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"build failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr[-3000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    timings = json.loads((out / "timings.json").read_text())
    stages = {s["name"]: s for s in manifest["stages"]}
    validated = stages["validate"]["records_in"]
    computed = validated - stages["validate"]["cached"]
    chain = timings["phases"].get("chain", 0.0)
    return {
        "wall": wall,
        "build_wall": timings["wall_seconds"],
        "phases": timings["phases"],
        "stages": {k: (v["seconds"], v["cached"], v["records_in"]) for k, v in stages.items()},
        "validated": validated,
        "computed": computed,
        "per_minute": (computed / chain * 60.0) if chain > 0 and computed else 0.0,
        "kept": manifest["splits"],
        "shards": [(sh["path"], sh["sha256"]) for sh in manifest["shards"]],
    }


def show(label: str, r: dict) -> None:
    print(
        f"\n== {label}: {r['wall']:.1f} s end to end (build {r['build_wall']:.1f} s), kept {r['kept']}"
    )
    print("   phases (wall s): " + ", ".join(f"{k} {v:.1f}" for k, v in r["phases"].items()))
    print(
        "   stages (busy s / cached / in): "
        + ", ".join(f"{k} {s:.1f}/{c}/{n}" for k, (s, c, n) in r["stages"].items())
    )
    print(
        f"   records validated: {r['validated']} ({r['computed']} computed, "
        f"{r['validated'] - r['computed']} from cache); {r['per_minute']:.1f} validated per minute"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--skip-one-worker", action="store_true")
    args = ap.parse_args()
    extra = ["--backend", args.backend] + (["--limit", str(args.limit)] if args.limit else [])
    print(f"cpus: {os.cpu_count()}; builds: {extra}")
    with tempfile.TemporaryDirectory(prefix="bench_build_") as tmp:
        tmp = Path(tmp)
        cold2 = run_build(tmp / "w2", tmp / "ckd2", 2, extra)
        show("cold, 2 workers", cold2)
        warm2 = run_build(tmp / "w2", tmp / "ckd2", 2, extra)
        show("fully cached, 2 workers", warm2)
        print(f"   shards identical to the cold build's: {warm2['shards'] == cold2['shards']}")
        print(
            f"\ncached / cold wall: {warm2['wall']:.1f} / {cold2['wall']:.1f} s = {warm2['wall'] / cold2['wall']:.2f}"
        )
        if not args.skip_one_worker:
            cold1 = run_build(tmp / "w1", tmp / "ckd1", 1, extra)
            show("cold, 1 worker", cold1)
            print(
                f"\n1 -> 2 workers: wall {cold1['wall']:.1f} -> {cold2['wall']:.1f} s "
                f"(speed-up {cold1['wall'] / cold2['wall']:.2f}x); validated per minute "
                f"{cold1['per_minute']:.1f} -> {cold2['per_minute']:.1f} "
                f"({cold2['per_minute'] / cold1['per_minute'] if cold1['per_minute'] else 0:.2f}x)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
