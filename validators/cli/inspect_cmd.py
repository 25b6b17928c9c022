"""`python -m validators inspect FILE.cu [--json]`: what the static analysis sees in a file."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from validators.analysis import FEATURES, Analysis, analyze, parse

MAX_SHOWN = 70
"""Covered texts longer than this are abbreviated in the table (head ... tail)."""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "inspect",
        help="list kernels, launches, spans and feature flags of a CUDA source file",
        description="Static analysis of one CUDA source file (tree-sitter-cuda).",
    )
    p.add_argument("file", help="a .cu / .cuh / .cpp source file")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of tables")


def report(path: str, a: Analysis) -> dict[str, Any]:
    """The --json object: stable keys, offsets are character offsets into the file's text."""
    line_starts = _line_starts(a.text)

    def line_of(offset: int) -> int:
        from bisect import bisect_right

        return bisect_right(line_starts, offset)

    return {
        "file": path,
        "encoding": a.encoding,
        "chars": len(a.text),
        "kernels": [f.model_dump(mode="json") for f in a.kernels],
        "device_functions": [f.model_dump(mode="json") for f in a.device_functions],
        "launches": [x.model_dump(mode="json") for x in a.launches],
        "api_launches": [x.model_dump(mode="json") for x in a.api_launches],
        "dim3s": [d.model_dump(mode="json") for d in a.dim3s],
        "spans": [
            {
                "kind": s.kind,
                "start": s.start,
                "end": s.end,
                "label": s.label,
                "line": line_of(s.start),
            }
            for s in a.spans
        ],
        "features": a.features,
        "feature_hits": [h.model_dump(mode="json") for h in a.feature_hits],
        "errors": a.errors,
        "notes": a.notes,
    }


def _line_starts(text: str) -> list[int]:
    starts = [0]
    i = text.find("\n")
    while i >= 0:
        starts.append(i + 1)
        i = text.find("\n", i + 1)
    return starts


def abbreviate(text: str, limit: int = MAX_SHOWN) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    keep = (limit - 5) // 2
    return f"{flat[:keep]} ... {flat[-keep:]}"


def _table(title: str, *columns: str) -> Table:
    t = Table(title=title, title_justify="left", show_lines=False)
    for c in columns:
        t.add_column(c, overflow="fold")
    return t


def print_tables(path: str, a: Analysis, console: Console) -> None:
    line_starts = _line_starts(a.text)
    from bisect import bisect_right

    # soft_wrap: a long path stays on one line (copyable), whatever the terminal's width.
    console.print(Text(f"{path}: {len(a.text)} chars, {a.encoding}", style="bold"), soft_wrap=True)
    for note in a.notes:
        console.print(Text(f"note: {note}", style="dim"))
    for err in a.errors:
        console.print(Text(f"parse: {err}", style="yellow"))

    fns = _table("Kernels and device functions", "line", "name", "qualifiers", "template", "params")
    for f in sorted(a.kernels + a.device_functions, key=lambda f: f.span.start):
        fns.add_row(
            str(f.line),
            Text(f.qualified_name),
            " ".join(f.qualifiers),
            Text(", ".join(f.template_params)),
            Text(", ".join(f"{p.type} {p.name}".strip() for p in f.params)),
        )
    console.print(fns)

    launches = _table("Launches", "line", "kernel", "config", "args", "in")
    for x in a.launches:
        where = x.function or (f"#define {x.macro}" if x.macro else "file scope")
        if x.in_lambda:
            where += " (lambda)"
        if x.in_device_code:
            where += " (device)"
        launches.add_row(
            str(x.line),
            Text(x.callee or "?"),
            Text(abbreviate(", ".join(x.config))),
            Text(abbreviate(", ".join(x.args))),
            Text(where),
        )
    for api in a.api_launches:
        launches.add_row(
            str(api.line),
            Text(f"{api.kernel or '?'} (via {api.api})"),
            Text(abbreviate(", ".join(api.args[1:]))),
            "",
            Text(api.function or "file scope"),
        )
    console.print(launches)

    spans = _table("Spans", "kind", "line", "range", "label", "text")
    for s in a.spans:
        spans.add_row(
            s.kind,
            str(bisect_right(line_starts, s.start)),
            f"{s.start}-{s.end}",
            Text(s.label),
            Text(abbreviate(a.text[s.start : s.end])),
        )
    console.print(spans)

    feats = _table("Features", "feature", "what", "evidence")
    reasons = a.feature_reasons()
    for name in a.features:
        feats.add_row(name, FEATURES.get(name, ""), Text(reasons.get(name, "")))
    if not a.features:
        console.print("Features: none")
    else:
        console.print(feats)


def main(args: argparse.Namespace) -> int:
    path = Path(args.file)
    try:
        if path.exists() and not path.is_file() and not path.is_dir():
            # /dev/zero, a FIFO: reading could block or never end
            raise OSError(0, "not a regular file")
        with path.open("rb") as fh:
            # One byte over the analysis limit is enough for it to refuse with a clear error.
            data = fh.read(parse.MAX_INPUT_BYTES + 1)
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        print(f"inspect: cannot read {args.file}: {reason}", file=sys.stderr)
        return 2
    a = analyze(data)
    # Source text may hold characters the terminal's encoding lacks: escape, never crash.
    reconfigure = getattr(sys.stdout, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="backslashreplace")
    if args.json:
        sys.stdout.write(json.dumps(report(str(path), a), ensure_ascii=False) + "\n")
    else:
        print_tables(str(path), a, Console(soft_wrap=False))
    return 0
