"""Convert a folder of KernelBench tasks into tasks with torch references, and say which work.

    python benchmarks/kernelbench_convert.py --dir PATH/TO/level1 [--limit N] [--validate]
        [--jobs 2] [--out DIR] [--literals-only]

Every `*.py` file goes through `sources.kernelbench.records` and `builder.modules.module_task`
(scaling for the CPU, five cases, described in the sandbox). With `--validate` the torch
reference then runs for all five cases through `validators.reference.ReferenceRunner` (in the
sandbox, into a fresh cache), which is what a validation will do. The table gives, per task,
whether it converted (and with `--validate`, whether all five references ran), the scaled
sizes, the seconds taken and the reason otherwise; the summary counts tasks whose reference
runs on the CPU and groups the rest by reason, then lists the tasks that still cannot be judged
on the CPU and why (`too_large`: a tensor over the cap at the smallest sizes, naming it;
`needs_cuda`; ...). Sizes written as literals are named and scaled (`validators.module_scaling`):
the `lit` column counts a task's named literal sizes. `--literals-only` converts only the files
that write sizes as literals (the rest convert as before that rule existed). `--out` writes each
converted task as `<name>.json`.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tqdm import tqdm  # noqa: E402

from builder.modules import ModuleTaskError, module_task  # noqa: E402
from schemas import RawRecord  # noqa: E402
from sources.base import UnreadableRecord  # noqa: E402
from sources.kernelbench import records  # noqa: E402
from validators.reference import ReferenceError, ReferenceRunner  # noqa: E402
from validators.sandbox import SandboxError  # noqa: E402
from validators.torch_module import name_literal_sizes  # noqa: E402


@dataclass
class Row:
    task: str
    converted: bool = False
    references: str = "-"
    sizes: str = ""
    seconds: float = 0.0
    convert_seconds: float = 0.0
    reason: str = ""
    detail: str = ""
    literals: int = 0
    cases: list[str] = field(default_factory=list)

    @property
    def runs(self) -> bool:
        return self.converted and self.references in ("5/5", "-")


def task_name(rid: str) -> str:
    stem = rid.split("/", 1)[-1]
    clean = "".join(ch if ch.isalnum() else "_" for ch in stem).strip("_").lower()
    while "__" in clean:
        clean = clean.replace("__", "_")
    return f"kb_{clean}" if clean[:1].isdigit() else clean


def convert(rec: RawRecord, runner: ReferenceRunner | None, out: Path | None) -> Row:
    row = Row(task=rec.id.split("/", 1)[-1])
    t0 = time.monotonic()
    try:
        task = module_task(task_name(rec.id), rec.module or "")
    except ModuleTaskError as exc:
        row.reason, row.detail = exc.reason, exc.detail
        row.seconds = time.monotonic() - t0
        return row
    row.converted = True
    # Named literals, and literals written as a constant they are tied to, as the task records them.
    row.literals = task.scaling.count(" became ")
    row.convert_seconds = time.monotonic() - t0
    row.sizes = ", ".join(f"{k}={v}" for k, v in task.sizes.items() if k in task.original_sizes)
    row.cases = [c.name for c in task.cases]
    if out is not None:
        (out / f"{task.name}.json").write_text(task.to_json() if hasattr(task, "to_json")
                                               else task.model_dump_json(indent=2))
    if runner is not None:
        ok = 0
        for case in task.cases:
            try:
                runner.case_data(task, case)
                ok += 1
            except (ReferenceError, SandboxError) as exc:
                row.reason = row.reason or "reference_failed"
                row.detail = row.detail or f"case {case.name}: {exc}"
        row.references = f"{ok}/{len(task.cases)}"
    row.seconds = time.monotonic() - t0
    return row


def _has_literals(code: str) -> bool:
    try:
        return bool(name_literal_sizes(code)[1])
    except SyntaxError:
        return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", required=True, type=Path, help="folder of KernelBench *.py files")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--validate", action="store_true",
                    help="also run the torch reference for the five cases of each task")
    ap.add_argument("--jobs", type=int, default=2, help="tasks converted at the same time")
    ap.add_argument("--out", type=Path, default=None, help="write converted tasks here")
    ap.add_argument("--literals-only", action="store_true",
                    help="only the files that write sizes as literals")
    args = ap.parse_args(argv)

    recs = list(records(args.dir, limit=args.limit))
    if args.literals_only:
        recs = [r for r in recs if isinstance(r, RawRecord) and _has_literals(r.module or "")]
    rows: list[Row] = [Row(task=r.id.split("/", 1)[-1], reason=r.code, detail=r.reason)
                       for r in recs if isinstance(r, UnreadableRecord)]
    good = [r for r in recs if isinstance(r, RawRecord)]
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="ckd-kb-refs-") as refs:
        runner = ReferenceRunner(Path(refs) / "refs") if args.validate else None
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = [pool.submit(convert, r, runner, args.out) for r in good]
            for f in tqdm(futures, desc="kernelbench", unit="task", file=sys.stderr):
                rows.append(f.result())
    wall = time.monotonic() - started

    width = max([len(r.task) for r in rows] + [4])
    head = f"{'task':<{width}}  conv  refs  lit  {'seconds':>7}  scaled sizes / reason"
    print(head)
    print("-" * len(head))
    for r in rows:
        what = r.sizes if r.runs else f"{r.reason}: {r.detail[:160]}"
        print(f"{r.task:<{width}}  {'yes' if r.converted else 'no':<4}  {r.references:<4}  "
              f"{r.literals:>3}  {r.seconds:7.1f}  {what}")
    n = len(rows)
    runs = [r for r in rows if r.runs]
    print()
    print(f"tasks: {n}; converted: {sum(r.converted for r in rows)}; "
          + (f"reference runs on the CPU for all five cases: {len(runs)} "
             f"({100 * len(runs) / max(n, 1):.0f}%)" if args.validate
             else "references not run (pass --validate)"))
    reasons = Counter(r.reason for r in rows if not r.runs)
    for reason, count in reasons.most_common():
        print(f"  {reason}: {count}")
    print(f"tasks with sizes written as literals, named and scaled: "
          f"{sum(r.literals > 0 for r in rows)}")
    stuck = [r for r in rows if not r.runs]
    if stuck:
        print("cannot be judged on the CPU:")
        for r in stuck:
            print(f"  {r.task}: {r.reason}: {r.detail[:300]}")
    conv = [r.convert_seconds for r in rows if r.converted]
    seed_only = sum(c.endswith("_seed") for r in rows for c in r.cases)
    if conv:
        print(f"conversion seconds per task: mean {sum(conv) / len(conv):.1f}, "
              f"max {max(conv):.1f}; seed-only case variants: {seed_only} of {5 * len(conv)}")
    print(f"wall time: {wall:.0f} s with {args.jobs} jobs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
