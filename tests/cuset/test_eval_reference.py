"""`--reference-solutions`: the harness checks each benchmark task's own program. Every held-out
built-in task passes on the cpu backend; a wrong reference fails; folders of tasks in our format
load (exported with task.json + main.cu, or in the corpus layout with reference.py); CUDABench
scale selection and the every-scale rule."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

from cuset.cli import main as cli_main
from cuset.eval import load_benchmark
from cuset.eval.benchmarks import pick_scales
from cuset.eval.errors import EvalError
from cuset.eval.verdict import validate
from sources.builtin import HELD_OUT, TASKS_DIR

REPO = Path(__file__).resolve().parents[2]
CHUNKS = [sorted(HELD_OUT)[i:i + 4] for i in range(0, len(HELD_OUT), 4)]


def _reference_run(bench: Path | str, out: Path) -> dict:
    assert cli_main(["eval", "--benchmark", str(bench), "--reference-solutions", "--backend",
                     "cpu", "--out", str(out), "--quiet"]) == 0
    return json.loads((out / "summary.json").read_text())


def _export(bench: Path, names: list[str]) -> None:
    subprocess.run([sys.executable, "-m", "sources.builtin", "export", str(bench), *names],
                   check=True, cwd=REPO, capture_output=True)


def test_the_exported_held_out_split_loads_as_the_built_in_tasks(tmp_path):
    """Every held-out task, exported the way a user would (`python -m sources.builtin export`),
    loads back through the folder loader as the built-in task and its program, unchanged."""
    bench = tmp_path / "bench"
    _export(bench, sorted(HELD_OUT))
    loaded = {t.id: t for t in load_benchmark(str(bench))}
    builtin = {t.id: t for t in load_benchmark("builtin")}
    assert sorted(loaded) == sorted(HELD_OUT)
    for name, t in loaded.items():
        assert t.kind == "task" and t.task == builtin[name].task, name
        assert t.reference_program == builtin[name].reference_program, name


@pytest.mark.slow
def test_held_out_references_pass_on_cpu_through_eval(tmp_path):
    """Four held-out tasks' own programs through `cuset eval --reference-solutions` (every one of
    the twelve passes the same checks in the full default build, tests/builder/test_build_full.py,
    whose test split they are; `cuset eval --benchmark builtin --reference-solutions` runs all)."""
    names = CHUNKS[0]
    bench = tmp_path / "bench"
    _export(bench, names)
    summary = _reference_run(bench, tmp_path / "out")
    assert summary["n_tasks"] == summary["n_samples"] == 4
    assert summary["function_pass_at_k"] == {"1": 1.0}
    assert summary["compile_pass_at_k"] == {"1": 1.0}
    recs = [json.loads(x) for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()]
    assert sorted(r["task"] for r in recs) == names


def test_builtin_benchmark_is_the_held_out_split():
    tasks = load_benchmark("builtin")
    assert sorted(t.id for t in tasks) == sorted(HELD_OUT)
    for t in tasks:
        assert t.kind == "task" and t.prompt == t.task.description
        assert t.reference_program == (TASKS_DIR / t.id / "main.cu").read_text()
    assert [t.id for t in load_benchmark("builtin", limit=2)] == sorted(HELD_OUT)[:2]


def test_corpus_layout_folder_and_a_wrong_reference(tmp_path):
    """Task folders with reference.py beside task.json; the wrong reference must fail."""
    bench = tmp_path / "bench"
    shutil.copytree(TASKS_DIR / "elu", bench / "elu")
    shutil.copytree(TASKS_DIR / "dot_product", bench / "dot_product")
    main = bench / "dot_product" / "main.cu"
    main.write_text(main.read_text().replace("sum += a[i] * b[i];", "sum += a[i] * b[i] * 2.0f;"))
    loaded = load_benchmark(str(bench))
    assert [t.id for t in loaded] == ["dot_product", "elu"]
    assert "def reference" in loaded[1].task.reference.code
    summary = _reference_run(bench, tmp_path / "out")
    assert summary["compile_pass_at_k"] == {"1": 1.0}
    assert summary["function_pass_at_k"] == {"1": 0.5}
    recs = {json.loads(x)["task"]: json.loads(x)
            for x in (tmp_path / "out" / "samples.jsonl").read_text().splitlines()}
    assert recs["dot_product"]["status"] == "failed" and recs["elu"]["status"] == "passed"


def test_folder_task_without_main_cannot_be_a_reference_run(tmp_path, capsys):
    shutil.copytree(TASKS_DIR / "elu", tmp_path / "elu")
    (tmp_path / "elu" / "main.cu").unlink()
    assert load_benchmark(str(tmp_path))[0].reference_program is None
    assert cli_main(["eval", "--benchmark", str(tmp_path), "--reference-solutions", "--backend",
                     "cpu", "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --reference-solutions: task elu has no reference program")


def test_malformed_task_json_is_named(tmp_path):
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "task.json").write_text("{not json")
    with pytest.raises(EvalError, match=r"task.json: line 1"):
        load_benchmark(str(tmp_path))


# --- CUDABench: scale choice and the every-scale rule, through a stand-in validators.cudabench --
# The real module is written in parallel; these check eval's own logic against its agreed API.


@dataclass(frozen=True)
class FakeScale:
    row_id: str
    bench_cu: str
    gen_py: str = ""
    compare_py: str = ""
    inputs: tuple = ()
    outputs: tuple = ()


@dataclass(frozen=True)
class FakeTask:
    task_name: str
    prompt: str
    scales: list


def _fake_cudabench(monkeypatch, verdicts: dict[str, str]) -> list[tuple[str, str]]:
    from schemas import Status, ValidationResult

    calls: list[tuple[str, str]] = []
    mod = types.ModuleType("validators.cudabench")

    def check(scale, program_source, backend="auto"):
        calls.append((scale.row_id, program_source))
        return ValidationResult(backend=backend, status=Status(verdicts[scale.row_id]),
                                reason="" if verdicts[scale.row_id] == "passed" else "mismatch")

    mod.load_jsonl = lambda path: [FakeTask("t", "Write t.", [
        FakeScale(f"t-{i}", f"// bench {i}") for i in range(5)])]
    mod.check = check
    monkeypatch.setitem(sys.modules, "validators.cudabench", mod)
    import validators

    monkeypatch.setattr(validators, "cudabench", mod, raising=False)
    return calls


def _cudabench_file(tmp_path: Path) -> Path:
    p = tmp_path / "cb.jsonl"
    row = {"id": 0, "task_name": "t", "inputs": [], "outputs": [], "level1_prompt": "Write t.",
           "bench.cu": "", "gen.py": "", "compare.py": ""}
    p.write_text(json.dumps(row) + "\n")
    return p


@pytest.mark.parametrize(("scale", "rows"), [
    ("smallest", ["t-0"]), ("largest", ["t-4"]), ("2", ["t-1"]),
    ("all", ["t-0", "t-1", "t-2", "t-3", "t-4"]),
])
def test_cudabench_scale_choice(monkeypatch, tmp_path, scale, rows):
    _fake_cudabench(monkeypatch, {})
    (task,) = load_benchmark(str(_cudabench_file(tmp_path)), scale)
    assert task.kind == "cudabench" and task.prompt == "Write t."
    assert [s.row_id for s in task.cudabench.scales] == rows
    assert task.reference_program == f"// bench {rows[0][-1]}"


def test_cudabench_bad_scale_is_refused():
    with pytest.raises(EvalError, match=r"--scale 6: choose smallest, largest, all or 1..5"):
        pick_scales([1, 2, 3, 4, 5], "6", "x")


def test_cudabench_all_scales_must_pass(monkeypatch, tmp_path):
    calls = _fake_cudabench(monkeypatch, {"t-0": "passed", "t-1": "passed", "t-2": "failed",
                                          "t-3": "passed", "t-4": "passed"})
    (task,) = load_benchmark(str(_cudabench_file(tmp_path)), "all")
    v = validate(task, "int main() {}", "cpu")
    assert (v.status, v.compiled, v.passed) == ("failed", True, False)
    assert v.reason == "scale t-2: mismatch"
    assert [c[0] for c in calls] == ["t-0", "t-1", "t-2"]  # stops at the first failing scale
    calls.clear()
    (largest,) = load_benchmark(str(_cudabench_file(tmp_path)), "largest")
    assert validate(largest, "int main() {}", "cpu").passed
    # The harness check sends each scale its own bench.cu.
    calls.clear()
    (first_two,) = load_benchmark(str(_cudabench_file(tmp_path)), "1")
    validate(first_two, "ignored", "cpu", per_scale_reference=True)
    assert calls == [("t-0", "// bench 0")]

