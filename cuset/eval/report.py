"""summary.json (exactly `n_tasks`, `n_samples`, `n_errors`, `compile_pass_at_k`,
`function_pass_at_k`, `avg_tokens`, `backend`; for KernelBench also `prompt` and `speed`) and
summary.md (the paper's table, then one row per task).

`n_samples` counts the judged samples, the ones pass@k is computed from; `n_errors` the samples
with no verdict (`error`: our machinery or the task's reference failed), which are left out of
pass@k rather than counted as wrong. A task with no judged sample is left out of the mean. A k
larger than some judged task's number of samples has no unbiased estimate: its pass@k is `null`
in summary.json and `n/a` in summary.md, which names the tasks that lack samples."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .benchmarks import EvalTask
from .passk import mean_pass_at_k


@dataclass
class TaskStats:
    task: str
    samples: int = 0
    compiled: int = 0
    passed: int = 0
    needs_gpu: int = 0
    errors: int = 0
    """Samples with no verdict (status `error`): not in `samples`, not in pass@k."""
    tokens: int = 0
    statuses: Counter = field(default_factory=Counter)


def summarise(tasks: list[EvalTask], records: list[dict[str, Any]],
              n: int | Collection[tuple[str, int]], ks: Sequence[int], backend: str,
              speed: dict[str, Any] | None = None, prompt: str | None = None
              ) -> tuple[dict[str, Any], list[TaskStats]]:
    """Pass@k over the benchmark's tasks from the records of samples 0..n-1, or of the (task,
    sample) pairs `n` names (completions read from a file); the last record of a pair counts.
    `speed` and `prompt` (KernelBench) are added to the summary as given."""
    wanted = (lambda key: key[1] < n) if isinstance(n, int) else (lambda key: key in n)
    latest = {key: r for r in records if wanted(key := (r["task"], int(r["sample"])))}
    stats = {t.id: TaskStats(t.id) for t in tasks}
    for (task, _), r in latest.items():
        s = stats.get(task)
        if s is None:
            continue
        s.statuses[r["status"]] += 1
        if r["status"] == "error":
            s.errors += 1
            continue
        s.samples += 1
        s.compiled += bool(r["compiled"])
        s.passed += bool(r["passed"])
        s.needs_gpu += r["status"] == "needs_gpu"
        s.tokens += int(r.get("tokens") or 0)
    per_task = list(stats.values())
    judged = [s for s in per_task if s.samples]
    usable_ks = [k for k in ks if all(k <= s.samples for s in judged)]
    n_samples = sum(s.samples for s in per_task)
    summary: dict[str, Any] = {
        "n_tasks": len(per_task),
        "n_samples": n_samples,
        "n_errors": sum(s.errors for s in per_task),
        "compile_pass_at_k": _with_gaps(
            mean_pass_at_k([(s.samples, s.compiled) for s in judged], usable_ks), ks),
        "function_pass_at_k": _with_gaps(
            mean_pass_at_k([(s.samples, s.passed) for s in judged], usable_ks), ks),
        "avg_tokens": sum(s.tokens for s in per_task) / n_samples if n_samples else 0.0,
        "backend": backend,
    }
    if prompt is not None:
        summary["prompt"] = prompt
    if speed is not None:
        summary["speed"] = speed
    return summary, per_task


def _with_gaps(values: dict[str, float], ks: Sequence[int]) -> dict[str, float | None]:
    """Every requested k, in order; None where it is not computable (k > a task's samples)."""
    return {str(k): values.get(str(k)) for k in ks}


def kernelbench_speed(backend: str) -> dict[str, Any]:
    """KernelBench's speed columns. Nothing is timed yet: on cpu no time says anything about a
    GPU kernel, and the cuda backend's KernelBench check does not time answers yet; the columns
    are present and empty, with the reason, rather than left out or filled in."""
    why = ("needs a GPU" if backend == "cpu"
           else "not measured: the cuda backend does not time KernelBench answers yet")
    return {"status": why, "speedup_over_eager": None, "speedup_over_torch_compile": None,
            "fast_p": {p: None for p in ("0", "1", "1.5", "2")}}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}"


def headline(summary: dict[str, Any], label: str) -> list[str]:
    """The paper's table (Compile and Function Pass@k in percent, average tokens)."""
    ks = list(summary["compile_pass_at_k"])
    cols = ["model", *[f"Compile Pass@{k}" for k in ks], *[f"Function Pass@{k}" for k in ks],
            "avg tokens"]
    row = [label, *[_pct(summary["compile_pass_at_k"][k]) for k in ks],
           *[_pct(summary["function_pass_at_k"][k]) for k in ks], f"{summary['avg_tokens']:.1f}"]
    return [_line(cols), _line(["---"] * len(cols)), _line(row)]


def speed_table(summary: dict[str, Any], label: str) -> list[str]:
    """KernelBench's speed columns (empty list for other benchmarks)."""
    speed = summary.get("speed")
    if speed is None:
        return []

    def cell(x: float | None, pct: bool = False) -> str:
        if x is None:
            return speed["status"]
        return _pct(x) if pct else f"{x:.2f}"

    cols = ["model", "speedup over eager", "speedup over torch.compile",
            *[f"fast_{p}" for p in speed["fast_p"]]]
    row = [label, cell(speed["speedup_over_eager"]), cell(speed["speedup_over_torch_compile"]),
           *[cell(v, pct=True) for v in speed["fast_p"].values()]]
    return [_line(cols), _line(["---"] * len(cols)), _line(row)]


def _line(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def markdown(summary: dict[str, Any], per_task: list[TaskStats], label: str,
             notes: Sequence[str] = ()) -> str:
    """`notes`: paragraphs about the run's input (lines of a completions file skipped, ...)."""
    needs_gpu = sum(s.needs_gpu for s in per_task)
    errors = sum(s.errors for s in per_task)
    lines = [f"# Evaluation: {label}", "",
             f"{summary['n_tasks']} tasks, {summary['n_samples']} samples, backend "
             f"`{summary['backend']}`. Pass@k in percent (unbiased estimator, Chen et al. 2021).",
             "", *headline(summary, label), ""]
    gaps = [k for k, v in summary["compile_pass_at_k"].items() if v is None]
    if gaps:
        judged = [s for s in per_task if s.samples]
        few = [f"{s.task} ({s.samples})" for s in judged if s.samples < int(max(gaps, key=int))]
        lines += [f"Pass@k for k = {', '.join(gaps)}: not computable (the unbiased estimator "
                  f"needs k <= the judged samples of every task; fewer: {', '.join(few)}).", ""]
    speed = speed_table(summary, label)
    if speed:
        lines += ["## Speed (KernelBench)", "", *speed, ""]
    if "prompt" in summary:
        lines += [f"Prompt: `{summary['prompt']}` (cuset/eval/kernelbench_prompt.md).", ""]
    for note in notes:
        lines += [note, ""]
    if needs_gpu:
        lines += [f"{needs_gpu} samples are `needs_gpu` (not judgeable on this backend): counted "
                  "as neither compiled nor passed.", ""]
    if errors:
        unjudged = [s.task for s in per_task if s.errors and not s.samples]
        lines += [f"{errors} samples are `error` (the validator or the task's reference failed: "
                  "no verdict on the program): left out of pass@k, validated again on resume."
                  + (f" Tasks with no judged sample, left out of the mean: "
                     f"{', '.join(unjudged)}." if unjudged else ""), ""]
    lines += ["## Per task", "",
              _line(["task", "samples", "compiled", "passed", "needs_gpu", "errors",
                     "avg tokens", "statuses"]),
              _line(["---"] * 8)]
    for s in per_task:
        avg = s.tokens / s.samples if s.samples else 0.0
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items()))
        lines.append(_line([s.task, str(s.samples), str(s.compiled), str(s.passed),
                            str(s.needs_gpu), str(s.errors), f"{avg:.1f}", statuses]))
    return "\n".join(lines) + "\n"


def write_reports(out: Path, summary: dict[str, Any], per_task: list[TaskStats], label: str,
                  notes: Sequence[str] = ()) -> None:
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    (out / "summary.md").write_text(markdown(summary, per_task, label, notes), encoding="utf-8")
