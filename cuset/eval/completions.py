"""Completions generated elsewhere (`--completions FILE.jsonl`), one JSON object a line:
`{"task": ID, "sample": INDEX, "completion": TEXT}`, as KernelBench's `eval_from_generations`
reads them. Other fields are ignored; `tokens` (an integer), when present, is the completion's
length for the average-tokens column (0 where absent: no tokenizer is guessed at).

A bad line (not JSON, a field missing or of the wrong type, a task the benchmark does not hold,
a (task, sample) seen on an earlier line) is reported as `FILE:LINE: reason` and skipped; the
other lines are evaluated. The number of samples of a task is the number of its lines.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from .benchmarks import EvalTask
from .errors import EvalError
from .samplers import Completion


@dataclass
class CompletionsFile:
    path: Path
    completions: list[Completion] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    """One `FILE:LINE: reason` per skipped line."""


def read_completions(path: Path, tasks: list[EvalTask]) -> CompletionsFile:
    """The usable completions of `path` for `tasks`, and the lines skipped with their reasons.
    Raises EvalError for a file that cannot be read at all."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise EvalError(f"--completions {path}: cannot read: {why}") from None
    known = {t.id for t in tasks}
    out = CompletionsFile(path)
    seen: dict[tuple[str, int], int] = {}
    for no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{no}"
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            out.problems.append(f"{where}: not JSON ({exc.msg}, column {exc.colno})")
            continue
        why = _row_problem(row, known)
        if why:
            out.problems.append(f"{where}: {why}")
            continue
        key = (row["task"], row["sample"])
        if key in seen:
            out.problems.append(f"{where}: task {key[0]!r} sample {key[1]} again "
                                f"(first on line {seen[key]}); this line is skipped")
            continue
        seen[key] = no
        tokens = row.get("tokens")
        if not isinstance(tokens, int) or isinstance(tokens, bool) or tokens < 0:
            tokens = 0  # unknown: a word count would pass for a tokenizer's figure
        out.completions.append(Completion(row["task"], row["sample"], row["completion"], tokens))
    return out


def _row_problem(row: object, known: set[str]) -> str:
    if not isinstance(row, dict):
        return f"not a JSON object but {type(row).__name__}"
    missing = [f for f in ("task", "sample", "completion") if f not in row]
    if missing:
        return f"missing {', '.join(repr(f) for f in missing)}"
    if not isinstance(row["task"], str):
        return f"'task' must be a string, not {type(row['task']).__name__}"
    sample = row["sample"]
    if not isinstance(sample, int) or isinstance(sample, bool) or sample < 0:
        return f"'sample' must be an integer >= 0, not {sample!r}"
    if not isinstance(row["completion"], str):
        return f"'completion' must be a string, not {type(row['completion']).__name__}"
    if row["task"] not in known:
        return f"task {row['task']!r} is not in the benchmark"
    return ""
