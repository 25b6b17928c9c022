"""An `error` sample (the validator or the task's reference failed) is no verdict: left out of
pass@k, reported, and validated again on resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cuset.cli import main as cli_main
from cuset.eval.benchmarks import EvalTask
from cuset.eval.report import markdown, summarise

REPO = Path(__file__).resolve().parents[2]


def _rec(task: str, sample: int, status: str) -> dict:
    return {"task": task, "sample": sample, "status": status, "reason": "", "tokens": 10,
            "compiled": status in ("passed", "failed"), "passed": status == "passed"}


def test_errors_are_left_out_of_pass_at_k_and_reported():
    tasks = [EvalTask(id="a", kind="task", prompt="p"), EvalTask(id="b", kind="task", prompt="p")]
    records = [_rec("a", 0, "passed"), _rec("a", 1, "error"), _rec("a", 2, "failed"),
               _rec("b", 0, "error")]
    summary, per_task = summarise(tasks, records, 3, (1,), "cpu")
    assert summary["n_samples"] == 2 and summary["n_errors"] == 2
    # Task a: 1 of its 2 judged samples passed; task b has no judged sample and is left out
    # (counting its error as a failure would give 0.25).
    assert summary["function_pass_at_k"] == {"1": pytest.approx(0.5)}
    text = markdown(summary, per_task, "m")
    assert "2 samples are `error`" in text and "left out of the mean: b" in text


def test_a_broken_reference_is_an_error_and_is_validated_again_on_resume(tmp_path):
    bench = tmp_path / "bench"
    subprocess.run([sys.executable, "-m", "sources.builtin", "export", str(bench), "relu"],
                   check=True, cwd=REPO, capture_output=True)
    spec_path = bench / "relu" / "task.json"
    good = spec_path.read_text()
    spec = json.loads(good)
    spec["reference"]["code"] = "def reference(inputs, sizes):\n    raise KeyError('x')\n"
    spec_path.write_text(json.dumps(spec))
    out = tmp_path / "out"
    args = ["eval", "--benchmark", str(bench), "--reference-solutions", "--backend", "cpu",
            "--out", str(out), "--quiet"]
    assert cli_main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n_samples"], summary["n_errors"]) == (0, 1)
    rec = json.loads((out / "samples.jsonl").read_text().splitlines()[-1])
    assert rec["status"] == "error" and "KeyError" in rec["reason"] and not rec["passed"]
    spec_path.write_text(good)  # the task is mended: the same out folder resumes
    assert cli_main(args) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["n_samples"], summary["n_errors"]) == (1, 0)
    assert summary["function_pass_at_k"] == {"1": 1.0}
