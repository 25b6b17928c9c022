"""`python -m cuset eval --reference-solutions` on a CUDABench-format file written for the tests
(tasks of our own: NumPy and torch gen.py): gen.py and compare.py run in the sandbox, the right
reference programs pass, a wrong one fails."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.append(str(Path(__file__).resolve().parents[1] / "validators"))
from cudabench_tasks import rows, vecadd_cu, write_jsonl  # noqa: E402

from cuset.cli import main  # noqa: E402

pytestmark = pytest.mark.slow


def test_reference_solutions_of_a_cudabench_file(tmp_path: Path, capsys) -> None:
    items = rows()
    # Vector_Add's references are made wrong (off by one): the harness check must catch it.
    for r in items:
        if r["task_name"] == "Vector_Add":
            n = int(r["inputs"][0]["shape"].strip("(),"))
            r["bench.cu"] = vecadd_cu(n, wrong=True)
    bench = write_jsonl(tmp_path / "bench.jsonl", items)
    out = tmp_path / "eval"
    code = main(["eval", "--benchmark", str(bench), "--scale", "smallest", "--reference-solutions",
                 "--backend", "cpu", "--out", str(out), "--workers", "2", "--quiet"])
    capsys.readouterr()
    assert code == 0
    samples = {s["task"]: s for s in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}
    assert set(samples) == {"Vector_Add", "ReLU", "Row_Sum"}
    assert samples["ReLU"]["passed"] and samples["Row_Sum"]["passed"]  # torch and NumPy gen.py
    assert not samples["Vector_Add"]["passed"] and samples["Vector_Add"]["compiled"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["function_pass_at_k"] == {"1": pytest.approx(2 / 3)}
    assert summary["compile_pass_at_k"] == {"1": 1.0} and summary["backend"] == "cpu"
