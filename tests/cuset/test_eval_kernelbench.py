"""`python -m cuset eval --benchmark kernelbench:DIR --completions FILE` on KernelBench's real
level-1 problems (../shared/data) with completions written here: a correct load_inline answer,
the same extension with wrong numerics, a torch-only answer and prose without a code block,
plus lines the file must not accept. Exact, hand-checked Pass@k; the resume.

Verifications are few and share work: the correct answer is the one of
tests/validators/kernelbench/answers/19_ReLU.py and the wrong one builds the very same extension
source, so the module compiles one extension (content-addressed build cache); the run happens
once, in a module fixture, and the resume tests read what it wrote."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuset.cli import main as cli_main
from cuset.eval import runner

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LEVEL1 = REPO.parent / "shared" / "data" / "kernelbench_level1"
ANSWERS = REPO / "tests" / "validators" / "kernelbench" / "answers"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LEVEL1.is_dir(), reason="../shared/data is not here"),
]

CORRECT = (ANSWERS / "19_ReLU.py").read_text() if ANSWERS.is_dir() else ""
# The same extension (so no second build), its result shifted: it builds, runs, and is wrong.
WRONG = CORRECT.replace("return relu.relu_cuda(x)", "return relu.relu_cuda(x) + 1.0")
TORCH_ONLY = ((ANSWERS / "bad" / "torch_fallback__20_LeakyReLU.py").read_text()
              if ANSWERS.is_dir() else "")
PROSE = "I would launch one thread per element and clamp negative values to zero."
# A module built somewhere else: importing the answer fails, so it did not compile.
NO_IMPORT = "import leaky_relu_cuda_ext\n" + TORCH_ONLY


def _python(source: str) -> str:
    # A kernel shown first in a ```cpp block is not the answer: the ```python block is.
    return ("The kernel first:\n```cpp\n__global__ void k() {}\n```\nThe answer:\n"
            f"```python\n{source}```\n")


# (task, sample) -> completion. Per task (n, compiled, passed): 19_ReLU (3, 2, 1): correct,
# wrong, prose; 20_LeakyReLU (2, 1, 0): torch-only (rejected, torch_fallback: it built and ran,
# so it compiled), an answer whose module does not import (not compiled).
ROWS = [
    {"task": "19_ReLU", "sample": 0, "completion": _python(CORRECT)},
    {"task": "19_ReLU", "sample": 1, "completion": _python(WRONG)},
    {"task": "19_ReLU", "sample": 2, "completion": PROSE},
    {"task": "20_LeakyReLU", "sample": 0, "completion": _python(TORCH_ONLY)},
    {"task": "20_LeakyReLU", "sample": 1, "completion": _python(NO_IMPORT)},
]
# Pass@1 = mean c/n. Pass@2 = 1 - C(n-c, 2) / C(n, 2): compile 19_ReLU 1 - 0/3 = 1,
# 20_LeakyReLU 1 - 0/1 = 1; function 19_ReLU 1 - 1/3 = 2/3, 20_LeakyReLU 0. Pass@3: 20_LeakyReLU
# has 2 samples, so no unbiased estimate: null, not dropped.
EXPECTED = {
    "compile_pass_at_k": {"1": (2 / 3 + 1 / 2) / 2, "2": 1.0, "3": None},
    "function_pass_at_k": {"1": (1 / 3 + 0) / 2, "2": (2 / 3 + 0) / 2, "3": None},
}
# Lines the file must refuse, each by its line number, while the rows above are evaluated.
BAD = [
    ("{not json", "not JSON"),
    (json.dumps({"task": "19_ReLU", "completion": "x"}), "missing 'sample'"),
    (json.dumps({"task": "no_such_problem", "sample": 0, "completion": "x"}),
     "task 'no_such_problem' is not in the benchmark"),
    (json.dumps({"task": "19_ReLU", "sample": 0, "completion": "again"}),
     "task '19_ReLU' sample 0 again (first on line 1)"),
]


def _write(path: Path, rows: list[dict], bad: list[tuple[str, str]] = ()) -> Path:
    lines = [json.dumps(r) for r in rows] + [line for line, _ in bad]
    path.write_text("\n".join(lines) + "\n")
    return path


def _eval(completions: Path, out: Path) -> int:
    return cli_main(["eval", "--benchmark", f"kernelbench:{LEVEL1}", "--completions",
                     str(completions), "--k", "1,2,3", "--backend", "cpu", "--fast",
                     "--out", str(out), "--workers", "2", "--quiet"])


@pytest.fixture(scope="module")
def _cuset_cache():
    """Replaces the cuset conftest's private cache: the extension builds land in the cache the
    validators' KernelBench tests use, so a session builds each extension source once."""
    yield


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("kb-eval")
    completions = _write(tmp / "model-x.jsonl", ROWS, BAD)
    out = tmp / "out"
    code = _eval(completions, out)
    return completions, out, code


def _samples(out: Path) -> dict[tuple[str, int], dict]:
    return {(r["task"], r["sample"]): r
            for r in map(json.loads, (out / "samples.jsonl").read_text().splitlines())}


def test_exact_pass_at_k_and_verdicts(first_run, capsys) -> None:
    completions, out, code = first_run
    assert code == 1  # lines were skipped; the rest was evaluated
    summary = json.loads((out / "summary.json").read_text())
    for key, want in EXPECTED.items():
        assert summary[key] == pytest.approx(want), key
    assert (summary["n_tasks"], summary["n_samples"], summary["n_errors"]) == (2, 5, 0)
    assert summary["speed"]["status"] == "needs a GPU"
    assert summary["speed"]["fast_p"] == {"0": None, "1": None, "1.5": None, "2": None}
    assert summary["prompt"].startswith("kernelbench-prompt-")

    got = {k: (r["status"], r["compiled"], r["passed"]) for k, r in _samples(out).items()}
    assert got == {("19_ReLU", 0): ("passed", True, True),
                   ("19_ReLU", 1): ("failed", True, False),
                   ("19_ReLU", 2): ("compile_error", False, False),
                   ("20_LeakyReLU", 0): ("rejected", True, False),
                   ("20_LeakyReLU", 1): ("runtime_error", False, False)}
    recs = _samples(out)
    assert recs[("20_LeakyReLU", 0)]["reason"].startswith("torch_fallback")
    assert recs[("19_ReLU", 2)]["reason"] == "no_code_block"
    assert "leaky_relu_cuda_ext" in recs[("20_LeakyReLU", 1)]["reason"]
    assert recs[("19_ReLU", 0)]["program"] == CORRECT  # the ```python block, not the ```cpp one

    md = (out / "summary.md").read_text()
    assert "| model-x | 58.33 | 100.00 | n/a | 16.67 | 33.33 | n/a |" in md
    assert "not computable" in md and "20_LeakyReLU (2)" in md
    assert "needs a GPU" in md and "fast_1.5" in md
    assert "98 tasks of the benchmark have no completion" in md
    first_line = len(ROWS) + 1
    for n, (_, says) in enumerate(BAD):
        assert f"{completions}:{first_line + n}: {says}" in md


def test_resume_reuses_every_verdict(first_run, monkeypatch) -> None:
    completions, out, _ = first_run
    before = (out / "samples.jsonl").read_text()
    summary = json.loads((out / "summary.json").read_text())

    def no_validation(*args, **kwargs):
        raise AssertionError(f"validated again: {args[0]}")

    monkeypatch.setattr(runner, "_sample_and_validate", no_validation)
    assert _eval(completions, out) == 1
    assert (out / "samples.jsonl").read_text() == before
    assert json.loads((out / "summary.json").read_text()) == summary


def test_resume_judges_a_changed_completion_again(first_run, tmp_path, monkeypatch) -> None:
    _, out, _ = first_run
    # The file regenerated with one completion changed (prose for the wrong answer): only that
    # pair is validated; the others keep their verdicts.
    rows = [dict(r) for r in ROWS]
    rows[1]["completion"] = PROSE + " Really."
    changed = _write(tmp_path / "model-x.jsonl", rows)
    seen: list[list[tuple[str, int]]] = []
    real = runner._sample_and_validate

    def spy(missing, *args, **kwargs):
        seen.append([(t.id, i) for t, i in missing])
        return real(missing, *args, **kwargs)

    monkeypatch.setattr(runner, "_sample_and_validate", spy)
    assert _eval(changed, out) == 0
    assert seen == [[("19_ReLU", 1)]]
    assert _samples(out)[("19_ReLU", 1)]["reason"] == "no_code_block"
    summary = json.loads((out / "summary.json").read_text())
    assert summary["compile_pass_at_k"]["1"] == pytest.approx((1 / 3 + 1 / 2) / 2)
    assert summary["function_pass_at_k"]["1"] == pytest.approx((1 / 3 + 0) / 2)
