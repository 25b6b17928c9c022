"""The evaluation loop: sample what `samples.jsonl` does not hold yet, validate in a process pool,
append each finished sample to `samples.jsonl` (flushed, so a crash loses at most the samples in
flight), then summarise every sample of the benchmark's tasks.

Resume is by (task, sample index): a line in `samples.jsonl` is never asked or validated again,
except an `error` line (no verdict: our machinery failed), whose completion is validated again
(not sampled again) and whose new line replaces it.

With completions read from a file (`--completions`) instead of a sampler, the file says which
(task, sample) pairs there are, and a pair is validated again when its completion in the file
is not the one `samples.jsonl` judged (the file was regenerated), so a verdict always belongs to
the text beside it.
An out folder belongs to one configuration (model, benchmark, sampling options); reusing it with
another mixes their samples. A last line cut by a crash is dropped on start.
"""

from __future__ import annotations

import json
import multiprocessing
import queue
import threading
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .benchmarks import EvalTask
from .errors import EvalError
from .extract import extract_program
from .report import kernelbench_speed, summarise, write_reports
from .samplers import Completion, Sampler
from .verdict import ERROR, Verdict, error_verdict, validate

SAMPLES = "samples.jsonl"


@dataclass(frozen=True)
class RunOptions:
    out: Path
    n: int = 3
    ks: tuple[int, ...] = (1, 3)
    backend: str = "cpu"
    """A resolved backend name (`cpu` or `cuda`), so workers do not probe for a GPU again."""
    workers: int = 2
    reference: bool = False
    """Validate each task's reference program once instead of sampling (the harness check)."""
    label: str = "model"
    progress: bool = True
    fast: bool = False
    """KernelBench: the verifier's quick check (one checking variant of three)."""


def read_samples(path: Path) -> list[dict[str, Any]]:
    """The records of `samples.jsonl`; a line that does not parse (a write cut by a crash) is
    dropped and the file rewritten without it, so appending continues on a clean line."""
    if not path.is_file():
        return []
    records, bad = [], 0
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
            _ = (rec["task"], int(rec["sample"]))
            records.append(rec)
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            bad += 1
    if bad or not path.read_text(encoding="utf-8").endswith("\n"):
        path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return records


def _record(c: Completion, program: str | None, v: Verdict) -> dict[str, Any]:
    return {"task": c.task_id, "sample": c.sample, "completion": c.text, "program": program,
            "status": v.status, "reason": v.reason, "tokens": c.tokens, "compiled": v.compiled,
            "passed": v.passed}


def run_eval(tasks: list[EvalTask], sampler: Sampler | None, opts: RunOptions,
             completions: list[Completion] | None = None,
             notes: list[str] | None = None) -> dict[str, Any]:
    """Run (or resume) the evaluation; write samples.jsonl, summary.json and summary.md in
    `opts.out`; return the summary. `sampler` is unused with `opts.reference` or with
    `completions` (generated elsewhere: they decide the tasks and samples evaluated). `notes`
    go into summary.md."""
    notes = list(notes or [])
    if completions is not None:
        tasks, wanted, given = _from_completions(tasks, completions, notes)
    else:
        n = 1 if opts.reference else opts.n
        wanted = [(t.id, i) for t in tasks for i in range(n)]
        given = {}
        if opts.reference:
            lacking = [t.id for t in tasks if not t.reference_program]
            if lacking:
                raise EvalError(f"--reference-solutions: task {lacking[0]} has no reference "
                                "program")
        elif sampler is None:
            raise EvalError("no model: give --base-url/--model, --model-path, "
                            "or --reference-solutions")
    opts.out.mkdir(parents=True, exist_ok=True)
    path = opts.out / SAMPLES
    previous = read_samples(path)
    latest = {(r["task"], int(r["sample"])): r for r in previous}
    # An error had no verdict: validate its completion again rather than ask the model again.
    retry = {key: r for key, r in latest.items() if r.get("status") == ERROR}
    done = {key for key, r in latest.items() if r.get("status") != ERROR
            and (key not in given or r.get("completion") == given[key].text)}
    by_id = {t.id: t for t in tasks}
    missing = [(by_id[tid], i) for tid, i in wanted if (tid, i) not in done]
    if missing:
        _sample_and_validate(missing, sampler, opts, path, retry, given)
    records = read_samples(path)
    kb = any(t.kind == "kernelbench" for t in tasks)
    prompt = None
    if kb:
        from .kernelbench import prompt_version

        prompt = prompt_version()
    summary, per_task = summarise(
        tasks, records, set(wanted), opts.ks if not opts.reference else (1,), opts.backend,
        speed=kernelbench_speed(opts.backend) if kb else None, prompt=prompt)
    write_reports(opts.out, summary, per_task, opts.label, notes)
    return summary


def _from_completions(tasks: list[EvalTask], completions: list[Completion], notes: list[str]
                      ) -> tuple[list[EvalTask], list[tuple[str, int]],
                                 dict[tuple[str, int], Completion]]:
    """The tasks the completions cover (in the benchmark's order), the (task, sample) pairs and
    the completion of each. A benchmark task without any completion is named in a note, not
    counted as failed: the file is the evaluation's input, as a sampler's output would be."""
    given = {(c.task_id, c.sample): c for c in completions}
    covered = {c.task_id for c in completions}
    if not covered:
        raise EvalError("--completions: no usable completion (every line was skipped)")
    absent = [t.id for t in tasks if t.id not in covered]
    if absent:
        shown = ", ".join(absent[:20]) + (f" and {len(absent) - 20} more" if len(absent) > 20
                                          else "")
        notes.append(f"{len(absent)} tasks of the benchmark have no completion in the file and "
                     f"are not part of this evaluation: {shown}.")
    kept = [t for t in tasks if t.id in covered]
    order = {t.id: n for n, t in enumerate(kept)}
    wanted = sorted(given, key=lambda key: (order[key[0]], key[1]))
    return kept, wanted, given


def _completions(missing: list[tuple[EvalTask, int]], sampler: Sampler | None,
                 reference: bool, retry: dict[tuple[str, int], dict[str, Any]],
                 given: dict[tuple[str, int], Completion]):
    if reference:
        for t, i in missing:
            yield Completion(t.id, i, "", 0)
        return
    if given:
        for t, i in missing:
            yield given[(t.id, i)]
        return
    again = [(t, i) for t, i in missing if (t.id, i) in retry]
    for t, i in again:
        r = retry[(t.id, i)]
        yield Completion(t.id, i, r.get("completion") or "", int(r.get("tokens") or 0))
    fresh = [(t, i) for t, i in missing if (t.id, i) not in retry]
    if fresh:
        assert sampler is not None
        yield from sampler.sample(fresh)


def _sample_and_validate(missing: list[tuple[EvalTask, int]], sampler: Sampler | None,
                         opts: RunOptions, path: Path,
                         retry: dict[tuple[str, int], dict[str, Any]] | None = None,
                         given: dict[tuple[str, int], Completion] | None = None) -> None:
    by_id = {t.id: t for t, _ in missing}
    results: queue.Queue[tuple[str, Any, Any]] = queue.Queue()

    def feed(pool: ProcessPoolExecutor) -> None:
        try:
            for c in _completions(missing, sampler, opts.reference, retry or {}, given or {}):
                task = by_id[c.task_id]
                program = (task.reference_program if opts.reference
                           else extract_program(c.text, task.language))
                fut = pool.submit(validate, task, program, opts.backend, opts.reference,
                                  opts.fast)
                fut.add_done_callback(
                    lambda f, c=c, p=program: results.put(("done", (c, p), f)))
        except BaseException as exc:  # surfaced on the main thread, which owns the exit code
            results.put(("error", exc, None))

    ctx = multiprocessing.get_context("spawn")  # no fork of a process holding torch or threads
    with ProcessPoolExecutor(max_workers=max(1, opts.workers), mp_context=ctx) as pool, \
            path.open("a", encoding="utf-8") as fh, _progress(len(missing), opts.progress) as bar:
        feeder = threading.Thread(target=feed, args=(pool,), daemon=True)
        feeder.start()
        passed = 0
        for _ in range(len(missing)):
            kind, payload, fut = results.get()
            if kind == "error":
                raise payload if isinstance(payload, EvalError) else EvalError(
                    f"sampling failed: {type(payload).__name__}: {payload}")
            c, program = payload
            verdict = _verdict_of(fut)
            fh.write(json.dumps(_record(c, program, verdict)) + "\n")
            fh.flush()
            passed += verdict.passed
            bar.update(1)
            bar.set_postfix(passed=passed)
        feeder.join()


def _verdict_of(fut: Future) -> Verdict:
    try:
        return fut.result()
    except Exception as exc:
        from validators.backends import BackendUnavailable

        if isinstance(exc, BackendUnavailable):
            raise EvalError(f"--backend: {exc}") from None
        # The validation itself crashed (a bug of ours, a worker killed): no verdict on the
        # program. Recorded as an error, left out of pass@k and retried on resume.
        return error_verdict(f"validation crashed: {type(exc).__name__}: {exc}"[:500])


def _progress(total: int, enabled: bool):
    from tqdm import tqdm

    return tqdm(total=total, desc="eval", unit="sample", disable=not enabled, dynamic_ncols=True)
