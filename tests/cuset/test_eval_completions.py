"""`python -m cuset eval --completions FILE.jsonl` on the built-in benchmark: completions
generated elsewhere, the lines the file must not accept (named FILE:LINE with the reason, the
others still evaluated), a k above a task's samples reported as not computable, and the options
that cannot go with a completions file. No completion here holds a program, so nothing compiles;
the KernelBench test (test_eval_kernelbench.py) judges real answers."""

from __future__ import annotations

import json
from pathlib import Path

from cuset.cli import main as cli_main

ROWS = [
    {"task": "elu", "sample": 0, "completion": "One thread per element would do."},
    {"task": "elu", "sample": 1, "completion": "```cuda\n```\n", "tokens": 7},
    {"task": "dot_product", "sample": 0, "completion": "A tree reduction in shared memory."},
]
BAD = [
    ("", None),  # blank lines are no lines
    ('["elu", 0, "x"]', "not a JSON object but list"),
    ('{"task": "elu", "sample": -1, "completion": "x"}', "'sample' must be an integer >= 0"),
    ('{"task": "elu", "sample": true, "completion": "x"}', "'sample' must be an integer >= 0"),
    ('{"task": "elu", "sample": 2, "completion": 5}', "'completion' must be a string, not int"),
    ('{"task": "elu", "sample": 1, "completion": "x"}', "task 'elu' sample 1 again (first on line 2)"),
]


def _eval(tmp: Path, completions: Path, *extra: str) -> int:
    return cli_main(["eval", "--benchmark", "builtin", "--completions", str(completions),
                     "--backend", "cpu", "--out", str(tmp / "out"), "--workers", "1", "--quiet",
                     *extra])


def test_completions_file_with_bad_lines(tmp_path: Path, capsys) -> None:
    path = tmp_path / "gen.jsonl"
    path.write_text("\n".join([json.dumps(r) for r in ROWS] + [b for b, _ in BAD]) + "\n")
    assert _eval(tmp_path, path, "--k", "1,2") == 1
    err = capsys.readouterr().err.splitlines()
    want = [f"error: {path}:{len(ROWS) + 1 + n}: {says}" for n, (_, says) in enumerate(BAD) if says]
    assert len(err) == len(want)
    for line, prefix in zip(err, want, strict=True):
        assert line.startswith(prefix), (line, prefix)

    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert (summary["n_tasks"], summary["n_samples"]) == (2, 3)
    # No program anywhere: 0 for k = 1; dot_product has one sample, so k = 2 has no estimate.
    assert summary["compile_pass_at_k"] == {"1": 0.0, "2": None}
    assert summary["function_pass_at_k"] == {"1": 0.0, "2": None}
    assert summary["avg_tokens"] == 7 / 3  # only the line that gave `tokens` counts any
    assert "speed" not in summary and "prompt" not in summary
    samples = [json.loads(ln) for ln in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert sorted((s["task"], s["sample"], s["reason"]) for s in samples) == [
        ("dot_product", 0, "no_code_block"), ("elu", 0, "no_code_block"),
        ("elu", 1, "empty_code_block")]
    md = (tmp_path / "out" / "summary.md").read_text()
    assert "| gen | 0.00 | n/a | 0.00 | n/a |" in md
    assert "k = 2: not computable" in md and "dot_product (1)" in md
    assert f"{path}:{len(ROWS) + 2}: not a JSON object" in md


def test_completions_file_errors_are_one_line(tmp_path: Path, capsys) -> None:
    def one_line() -> str:
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1, err
        return err[0]

    missing = tmp_path / "none.jsonl"
    assert _eval(tmp_path, missing) == 2
    assert one_line().startswith(f"error: --completions {missing}: cannot read")
    path = tmp_path / "gen.jsonl"
    path.write_text(json.dumps(ROWS[0]) + "\n")
    assert _eval(tmp_path, path, "--n", "3") == 2
    assert one_line() == "error: --n: with --completions the file decides the samples per task"
    assert _eval(tmp_path, path, "--reference-solutions") == 2
    assert "not both" in one_line()
    assert _eval(tmp_path, path, "--fast") == 2
    assert one_line() == "error: --fast is for --benchmark kernelbench:DIR, not builtin"
    path.write_text('{"task": "nope", "sample": 0, "completion": "x"}\n')
    assert _eval(tmp_path, path) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {path}:1: task 'nope' is not in the benchmark",
                   "error: --completions: no usable completion (every line was skipped)"]
