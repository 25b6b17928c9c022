"""`python -m sources.builtin {list,check,export}`: inspect the built-in corpus.

`export DIR` writes `DIR/<task>/task.json` (the complete `schemas.Task`, reference code
inlined) and `DIR/<task>/main.cu`, the form `python -m validators check --task ... --program ...`
takes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .loader import load_all, split_of


def _select(result, names: list[str]):
    if not names:
        return result.tasks, []
    by_name = {t.name: (t, p) for t, p in result.tasks}
    unknown = [n for n in names if n not in by_name]
    return [by_name[n] for n in names if n in by_name], unknown


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sources.builtin", description=__doc__.split("\n")[0])
    ap.add_argument("--root", type=Path, default=None, help="tasks folder (default: the shipped corpus)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list", help="one line per task: name, split, sizes, tags")
    sub.add_parser("check", help="load every task; report malformed folders (exit 1 if any)")
    ex = sub.add_parser("export", help="write standalone task.json + main.cu per task")
    ex.add_argument("out", type=Path)
    ex.add_argument("tasks", nargs="*", help="task names (default: all)")
    args = ap.parse_args(argv)

    result = load_all(args.root)
    for err in result.errors:
        print(f"error: {err}", file=sys.stderr)

    if args.cmd == "list":
        for task, _ in result.tasks:
            sizes = ",".join(f"{k}={v}" for k, v in task.sizes.items())
            print(f"{task.name:24s} {split_of(task.name):5s} {sizes:32s} {' '.join(task.tags)}")
    elif args.cmd == "check":
        print(f"{len(result.tasks)} tasks loaded, {len(result.errors)} malformed")
    elif args.cmd == "export":
        chosen, unknown = _select(result, args.tasks)
        if unknown:
            print(f"error: unknown task(s): {', '.join(unknown)}", file=sys.stderr)
            return 2
        try:
            for task, program in chosen:
                d = args.out / task.name
                d.mkdir(parents=True, exist_ok=True)
                (d / "task.json").write_text(task.model_dump_json(indent=2) + "\n", encoding="utf-8")
                (d / program.filename).write_text(program.source, encoding="utf-8")
        except OSError as exc:
            print(f"error: cannot write to {args.out}: {exc.strerror or exc}", file=sys.stderr)
            return 1
        print(f"exported {len(chosen)} tasks to {args.out}")
    return 1 if result.errors else 0


if __name__ == "__main__":
    sys.exit(main())
