"""`python -m builder run ...`: build the dataset, with a progress display and a summary."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from .config import BuildConfig, default_workers
from .pipeline import BuildError, BuildResult, build
from .pipeline import Progress as PipelineProgress


class RichProgress(PipelineProgress):
    def __init__(self, console: Console):
        self._p = Progress(
            TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=console, transient=False,
        )
        self._tasks: dict[str, int] = {}
        self._p.start()

    def phase(self, name: str, total: int) -> None:
        self._tasks[name] = self._p.add_task(name, total=total)

    def advance(self, name: str, n: int = 1) -> None:
        self._p.advance(self._tasks[name], n)

    def done(self, name: str) -> None:
        pass

    def stop(self) -> None:
        self._p.stop()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m builder", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="build the dataset")
    r.add_argument("--sources", default="builtin", help="comma-separated source names (default: builtin)")
    r.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    r.add_argument("--out", type=Path, default=Path("out/dataset"), help="output folder (default: ./out/dataset)")
    r.add_argument("--workers", type=int, default=default_workers(), help="Ray CPUs for a local cluster")
    r.add_argument("--limit", type=int, default=None, help="read at most N records")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--resume", dest="resume", action="store_true", default=True,
                   help="reuse finished work from the stage cache (default)")
    g.add_argument("--fresh", dest="resume", action="store_false",
                   help="drop the stage cache and previous shards first")
    r.add_argument("--address", default=None, help="Ray cluster address (default: a local cluster)")
    r.add_argument("--executor", default="ray", choices=["ray", "local"],
                   help="ray (default) or local (in-process, no Ray; for debugging)")
    r.add_argument("--near-dup-threshold", type=float, default=0.85,
                   help="MinHash Jaccard at or above which records are near duplicates (>=1 disables)")
    r.add_argument("--quick", action="store_true",
                   help="one schedule and no sanitizer build per case (faster, weaker validation)")
    r.add_argument("--cache-dir", type=Path, default=None, help="stage cache (default: <out>/.cache)")
    r.add_argument("--no-progress", action="store_true", help="no progress display")
    return p


def summary_table(res: BuildResult) -> Table:
    m = res.manifest
    t = Table(title=f"build summary: {res.out}  ({res.wall_seconds:.1f} s wall, backend {m.backend})")
    for col, just in (("stage", "left"), ("in", "right"), ("out", "right"), ("cached", "right"),
                      ("busy s", "right"), ("rejected (reason: count)", "left")):
        t.add_column(col, justify=just)
    for st in m.stages:
        rej = ", ".join(f"{k}: {v}" for k, v in sorted(st.rejected.items())) or "-"
        t.add_row(st.name, str(st.records_in), str(st.records_out), str(st.cached), f"{st.seconds:.1f}", rej)
    return t


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    if args.limit is not None and args.limit < 0:
        err.print(f"error: --limit {args.limit}: must not be negative", markup=False)
        return 2
    cfg = BuildConfig(
        sources=[s.strip() for s in args.sources.split(",") if s.strip()],
        backend=args.backend,
        out=args.out,
        workers=args.workers,
        limit=args.limit,
        resume=args.resume,
        address=args.address,
        executor=args.executor,
        near_dup_threshold=args.near_dup_threshold,
        thorough=not args.quick,
        cache_dir=args.cache_dir,
    )
    progress = None if args.no_progress else RichProgress(err)
    try:
        res = build(cfg, progress)
    except BuildError as exc:
        if progress:
            progress.stop()
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        if progress:
            progress.stop()
        err.print("interrupted: finished work is cached; run the same command again to resume",
                  markup=False)
        return 130
    if progress:
        progress.stop()
    out = Console()
    out.print(summary_table(res))
    m = res.manifest
    total_in = m.stages[0].records_in if m.stages else 0
    kept = sum(m.splits.values())
    out.print(f"records in {total_in}, kept {kept} ({', '.join(f'{k} {v}' for k, v in m.splits.items())}), "
              f"rejected {total_in - kept}; dataset: {res.out}", markup=False, highlight=False)
    for note in res.notes:
        out.print(f"note: {note}", markup=False, highlight=False)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "run":
        return run(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
