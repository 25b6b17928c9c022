"""`python -m builder run --format kernelbench` end to end: KernelBench level-1 problems, the
scripted LLM answering the evaluation prompt with ModelNew files, the KernelBench verifier
keeping the right answer and rejecting the wrong one, the folder loaded with
`datasets.load_dataset`, and CuSeT trained on it for 4 steps with the tiny config."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from llm_scripts import SHARED, user_text
from openai_standin import Answer, StandIn, ok

from builder.cli import main

KB = SHARED / "kernelbench_level1"
REPO = Path(__file__).resolve().parents[2]
RELU_ANSWER = (REPO / "tests" / "validators" / "kernelbench" / "answers" / "19_ReLU.py").read_text()
pytestmark = [pytest.mark.slow, pytest.mark.skipif(not KB.is_dir(), reason="../shared/data is not here")]


def respond(body: dict) -> Answer:
    # ReLU: first a reply with no code block (asked again), then the right answer. LeakyReLU:
    # answered with the ReLU answer, which negative inputs expose. One extension source for
    # both, one the verifier's own tests build.
    prompt = user_text(body)
    if "class Model" in prompt and "negative_slope" in prompt:
        return ok(f"```python\n{RELU_ANSWER}```\n")
    if len(body["messages"]) == 2:
        return ok("I would write a grid-stride kernel that clamps negatives to zero.")
    return ok(f"Here it is.\n\n```python\n{RELU_ANSWER}```\n")


def test_kernelbench_form_build_loads_and_trains(tmp_path: Path, capsys, monkeypatch, shared_dir) -> None:
    from cuset.eval.kernelbench import prompt_template, user_prompt

    folder = tmp_path / "kb"
    folder.mkdir()
    for stem in ("19_ReLU", "20_LeakyReLU"):
        shutil.copy(KB / f"{stem}.py", folder / f"{stem}.py")
    shutil.copy(KB / "LICENSE", folder / "LICENSE")
    out = tmp_path / "dataset"
    with StandIn(respond=respond) as llm:
        code = main([
            "run", "--format", "kernelbench", "--sources", "kernelbench", "--kernelbench-dir",
            str(folder), "--kernelbench-split", "train", "--limit", "2", "--llm-model", "scripted",
            "--llm-base-url", llm.url, "--llm-cache-dir", str(tmp_path / "llm"),
            "--backend", "cpu", "--quick", "--executor", "local", "--no-progress", "--out", str(out),
        ])
        requests = [r.body for r in llm.chat_requests()]
    capsys.readouterr()
    assert code == 0
    # The training prompt is the evaluation prompt, byte for byte.
    version, system, _ = prompt_template()
    relu_problem = (folder / "19_ReLU.py").read_text()
    first = [b for b in requests if len(b["messages"]) == 2 and "torch.relu" in user_text(b)]
    assert first and first[0]["messages"] == [{"role": "system", "content": system},
                                              {"role": "user", "content": user_prompt(relu_problem)}]
    assert any("no Python code block" in user_text(b) for b in requests)  # the re-ask

    rejections = {r["id"]: r for r in map(json.loads, (out / "rejections.jsonl").read_text().splitlines())}
    assert rejections["kernelbench/20_LeakyReLU"]["reason"] == "validation_failed"

    import datasets

    ds = datasets.load_dataset(str(out), split="train")
    assert ds["id"] == ["kernelbench/19_ReLU"]
    row = ds[0]
    assert row["prompt"] == user_prompt(relu_problem) and row["response"] == RELU_ANSWER
    assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
    assert json.loads(row["synthesis_json"])["prompt_version"] == version
    cuda_start = RELU_ANSWER.index('r"""') + 4
    cuda_end = RELU_ANSWER.index('"""', cuda_start)
    assert {s["kind"] for s in row["spans"]} >= {"kernel_body", "launch_config"}
    assert all(cuda_start <= s["start"] <= s["end"] <= cuda_end for s in row["spans"])
    body = next(s for s in row["spans"] if s["kind"] == "kernel_body")
    assert RELU_ANSWER[body["start"]:body["end"]].startswith("{\n    int64_t stride")
    validation = json.loads(row["validation_json"])
    assert validation["status"] == "passed" and validation["backend"] == "cpu"
    card = (out / "README.md").read_text()
    assert "Format: `kernelbench`" in card
    assert json.loads((out / "manifest.json").read_text())["config"]["format"] == "kernelbench"

    # CuSeT trains on the records unchanged (the tiny checkpoint of the cuset tests, kept out of
    # the user's cache and built once for the run).
    from cuset.cli import main as cuset_main

    monkeypatch.setenv("CKD_CACHE_DIR", str(shared_dir("cuset-cache")))
    run = tmp_path / "train"
    rc = cuset_main(["train", "--config", str(REPO / "cuset" / "configs" / "tiny.yaml"),
                     "--data", str(out), "--output-dir", str(run), "training.max_steps=4",
                     "training.disable_tqdm=true", "training.report_to=[]",
                     "training.logging_steps=1"])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    # The spans reached the CUDA mask: the record was used whole, with CUDA tokens.
    m = re.search(r"\[cuset\] data: 1 of 1 records used; 0 truncated; (\d+) response tokens, "
                  r"(\d+) in the CUDA mask", printed)
    assert m and 0 < int(m.group(2)) < int(m.group(1)), printed
    state = json.loads(next(run.rglob("trainer_state.json")).read_text())
    assert state["global_step"] == 4
    losses = [h["loss"] for h in state["log_history"] if "loss" in h]
    assert len(losses) == 4 and all(loss == loss and loss > 0 for loss in losses)
