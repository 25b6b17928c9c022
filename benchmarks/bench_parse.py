"""Static-analysis speed over the HeCBench CUDA sources, on one core.

    python benchmarks/bench_parse.py [--data DIR] [--repeat N]

Prints files/s and MB/s for tree-sitter parsing alone and for the whole `analyze()`, and splits
the time of `analyze()` into: parsing (tree-sitter, C), the query pass (tree-sitter, C) and our
Python walk over the captured nodes. CPU time of this process is used (the machine is shared),
wall-clock is printed next to it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from tree_sitter import QueryCursor

from validators.analysis import analyze
from validators.analysis.analyzer import _main_query
from validators.analysis.parse import parser

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "hecbench"


def _timed(fn, sources: list[bytes], repeat: int) -> tuple[float, float]:
    """(cpu seconds, wall seconds) of `repeat` passes of `fn` over all sources."""
    c0, w0 = time.process_time(), time.perf_counter()
    for _ in range(repeat):
        for src in sources:
            fn(src)
    return time.process_time() - c0, time.perf_counter() - w0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder searched for *.cu")
    ap.add_argument("--repeat", type=int, default=20, help="passes over the files")
    args = ap.parse_args(argv)

    files = sorted(args.data.rglob("*.cu")) if args.data.is_dir() else []
    if not files:
        print(f"bench_parse: no .cu files under {args.data}", file=sys.stderr)
        return 2
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # one core
    sources = [f.read_bytes() for f in files]
    n_files = len(sources) * args.repeat
    mb = sum(map(len, sources)) * args.repeat / 1e6

    # warm up: parser, compiled queries, imports
    for src in sources:
        analyze(src)

    p = parser()
    query = _main_query()
    parse_cpu, parse_wall = _timed(p.parse, sources, args.repeat)
    trees = [p.parse(s) for s in sources]

    def captures_only(i: int) -> None:
        QueryCursor(query).captures(trees[i].root_node)

    idx = list(range(len(sources)))
    query_cpu, query_wall = _timed(captures_only, idx, args.repeat)  # type: ignore[arg-type]
    full_cpu, full_wall = _timed(analyze, sources, args.repeat)

    python_cpu = max(full_cpu - parse_cpu - query_cpu, 0.0)
    print(
        f"{len(files)} files, {sum(map(len, sources)) / 1e3:.1f} kB, x{args.repeat} passes, one core"
    )
    print(f"{'stage':<28}{'cpu s':>9}{'wall s':>9}{'files/s':>11}{'MB/s':>8}{'share':>8}")
    rows = [
        ("tree-sitter parse", parse_cpu, parse_wall),
        ("tree-sitter query captures", query_cpu, query_wall),
        ("python walk (rest)", python_cpu, max(full_wall - parse_wall - query_wall, 0.0)),
        ("analyze() total", full_cpu, full_wall),
    ]
    for name, cpu, wall in rows:
        print(
            f"{name:<28}{cpu:>9.3f}{wall:>9.3f}{n_files / cpu if cpu else 0:>11.0f}"
            f"{mb / cpu if cpu else 0:>8.2f}{cpu / full_cpu:>8.0%}"
        )
    print(f"analyze() / parse alone: {full_cpu / parse_cpu:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
