"""`python -m cuset grpo` end to end on the CPU: grpo-tiny.yaml, the tiny model, a local reward
service on loopback (cpu backend), 4 steps; what the run records; resume."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
TERMS = ("reward_terms/compiled", "reward_terms/correct", "reward_terms/speed",
         "reward_terms/judge", "reward_terms/groups_all_equal")


def _scores(answer: str) -> dict[str, float]:
    """The judge stand-in's scripted scores: a function of the completion alone, so that a
    resumed run is judged as the first was."""
    n = len(answer)
    return {"correctness": (n % 5) / 4, "compilability": (n % 3) / 2, "speed": (n % 2) / 1}


@pytest.fixture(scope="module")
def judge():
    from openai_standin import StandIn, ok

    def respond(body: dict) -> object:
        text = body["messages"][-1]["content"]
        return ok(_scores(text.split("BEGIN UNTRUSTED\n", 1)[1].rsplit("\nEND UNTRUSTED", 1)[0]))

    with StandIn(respond=respond) as srv:
        yield srv


def _grpo(out: Path, *extra: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "CKD_ALLOW_WEAK_SANDBOX": "1"}
    return subprocess.run(
        [sys.executable, "-m", "cuset", "grpo", "--config", "cuset/configs/grpo-tiny.yaml",
         "--tasks", "builtin", "--reward-local", "--output-dir", str(out), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)


def _judged(srv) -> tuple[str, ...]:
    return ("--judge-base-url", srv.url, "--judge-model", "judge-standin", "--judge-weight", "0.5")


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "rewards.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def run(tmp_path_factory, judge):
    out = tmp_path_factory.mktemp("grpo") / "run"
    proc = _grpo(out, *_judged(judge))
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out, proc


@pytest.mark.slow  # about 90 s on a loaded 2-core machine (the tiny model is built first)
def test_grpo_tiny_logs_every_reward_term_per_step(run, judge):
    from sources.builtin import HELD_OUT

    out, proc = run
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 4
    steps = [e for e in state["log_history"] if "loss" in e]
    assert [e["step"] for e in steps] == [1, 2, 3, 4]
    for entry in steps:
        for key in TERMS:
            assert 0.0 <= entry[key] <= 4.1, (key, entry)
    rows = _rows(out)
    # G = 6 completions of one prompt per step
    assert Counter(r["step"] for r in rows) == {1: 6, 2: 6, 3: 6, 4: 6}
    for r in rows:
        assert set(r) >= {"task", "status", "reason", "terms", "reward"}
        assert r["task"] not in HELD_OUT  # `cuset eval` measures on those
    for step in (1, 2, 3, 4):
        tasks = {r["task"] for r in rows if r["step"] == step}
        assert len(tasks) == 1
    # the per-step means are the means of the logged terms
    for entry in steps:
        mine = [r for r in rows if r["step"] == entry["step"]]
        for name in ("compiled", "judge"):
            assert entry[f"reward_terms/{name}"] == pytest.approx(
                sum(r["terms"][name] for r in mine) / len(mine))
        assert entry["judge/failures"] == 0.0 and entry["judge/active"] == 1.0
    # the judge term is lambda times the mean of the stand-in's scores for that completion, and
    # every completion was judged (its answer cache is keyed by the completion)
    for r in rows:
        assert r["judge"] is not None and r["judge_error"] is None
        assert r["terms"]["judge"] == pytest.approx(0.5 * sum(r["judge"].values()) / 3)
        assert r["reward"] == pytest.approx(sum(r["terms"].values()))
    assert len(judge.chat_requests()) >= 1
    assert any(r["terms"]["judge"] > 0 for r in rows)
    assert (out / "final" / "adapter_config.json").is_file()
    # the local service was started for the run and stopped after it
    url = re.search(r"reward service: local \(cpu\) at (\S+)", proc.stdout).group(1)
    with pytest.raises(httpx.TransportError):
        httpx.get(url + "/healthz", timeout=2)


@pytest.mark.slow
def test_a_resumed_run_continues_with_the_same_steps_and_reward_log(run, judge, tmp_path):
    out, _ = run
    resumed = tmp_path / "run"
    shutil.copytree(out, resumed)
    shutil.rmtree(resumed / "checkpoint-4")  # as if the run had died after step 2's save
    shutil.rmtree(resumed / "final")
    proc = _grpo(resumed, "--resume", *_judged(judge))
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "resuming from" in proc.stdout and "checkpoint-2" in proc.stdout
    state = json.loads((resumed / "trainer_state.json").read_text())
    assert state["global_step"] == 4
    assert [e["step"] for e in state["log_history"] if "loss" in e] == [1, 2, 3, 4]
    before, after = _rows(out), _rows(resumed)
    # steps 1-2 kept as they were, steps 3-4 redone once (not appended to the old ones)
    assert [r for r in after if r["step"] <= 2] == [r for r in before if r["step"] <= 2]
    assert Counter(r["step"] for r in after) == {1: 6, 2: 6, 3: 6, 4: 6}
    assert [r["task"] for r in after] == [r["task"] for r in before]


def test_no_reward_service_is_a_clear_error(tmp_path):
    env = {**os.environ, "CKD_ALLOW_WEAK_SANDBOX": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "cuset", "grpo", "--config", "cuset/configs/grpo-tiny.yaml",
         "reward.local=false", "training.output_dir=" + str(tmp_path / "x")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2
    assert "--reward-url" in proc.stderr and "Traceback" not in proc.stderr


def test_group_size_that_splits_groups_is_refused(tmp_path):
    from cuset.errors import CusetError
    from cuset.grpo import load_grpo_config

    with pytest.raises(CusetError, match="per_device_train_batch_size"):
        load_grpo_config(ROOT / "cuset/configs/grpo-tiny.yaml",
                         ["training.per_device_train_batch_size=4"])
    with pytest.raises(CusetError, match="grpo.num_generation"):
        load_grpo_config(ROOT / "cuset/configs/grpo-tiny.yaml", ["grpo.num_generation=4"])


def test_builtin_prompts_are_what_cuset_eval_sends_for_the_training_tasks():
    from cuset.eval.benchmarks import load_benchmark
    from cuset.eval.samplers import chat_messages
    from cuset.grpo import load_grpo_config, prompt_rows
    from sources.builtin import HELD_OUT, load_all

    rows = prompt_rows(load_grpo_config(ROOT / "cuset/configs/grpo-tiny.yaml", ["tasks.limit=null"]))
    described = {t.name: t.description for t, _ in load_all().tasks}
    assert {r["task_id"] for r in rows} == set(described) - set(HELD_OUT)
    for r in rows:
        assert r["prompt"] == chat_messages(described[r["task_id"]])
    held = prompt_rows(load_grpo_config(ROOT / "cuset/configs/grpo-tiny.yaml",
                                        ["tasks.split=test", "tasks.limit=null"]))
    evaluated = {t.id: t for t in load_benchmark("builtin")}
    assert {r["task_id"] for r in held} == set(evaluated)
    for r in held:
        assert r["prompt"] == chat_messages(evaluated[r["task_id"]].prompt)


def test_dataset_prompts_are_the_records_training_prompts_and_the_service_knows_them(cuda_dataset):
    """`--tasks DATASET`: a builder dataset's own prompts (the turns before the answer, as SFT
    saw them), its train split by default, each under the id the service answers for it."""
    import pyarrow.parquet as pq

    from cuset.eval.samplers import chat_messages
    from cuset.grpo import load_grpo_config, prompt_rows
    from validators.service.tasks import load_task_set

    def rows(split: str) -> list[dict]:
        return prompt_rows(load_grpo_config(ROOT / "cuset/configs/grpo-tiny.yaml", [
            f"tasks.spec={cuda_dataset}", f"tasks.split={split}", "tasks.limit=null"]))

    records = [r for shard in sorted((cuda_dataset / "data").glob("*.parquet"))
               for r in pq.read_table(shard).to_pylist()]
    by_split: dict[str, dict[str, str]] = {}
    for r in records:
        name = json.loads(r["task_json"])["name"]
        by_split.setdefault(r["split"], {}).setdefault(name, r["prompt"])
    train, test = rows("train"), rows("test")
    assert {r["task_id"]: r["prompt"] for r in train} == {
        n: chat_messages(p) for n, p in by_split["train"].items()}
    assert {r["task_id"] for r in test} == set(by_split["test"])
    assert len(rows("all")) == len(set(by_split["train"]) | set(by_split["test"]))
    served = load_task_set(str(cuda_dataset))
    assert all(served.get(r["task_id"]) is not None for r in train + test)


def test_a_kernelbench_form_dataset_is_refused_by_name(cuda_dataset, tmp_path):
    import shutil

    from cuset.errors import CusetError
    from cuset.grpo import load_grpo_config, prompt_rows

    kb = tmp_path / "kb-form"
    shutil.copytree(cuda_dataset, kb)
    (kb / "manifest.json").write_text(json.dumps({"config": {"format": "kernelbench"}}))
    with pytest.raises(CusetError, match="--format kernelbench.*kernelbench:DIR"):
        prompt_rows(load_grpo_config(ROOT / "cuset/configs/grpo-tiny.yaml", [f"tasks.spec={kb}"]))


def test_resume_keeps_the_reward_log_up_to_the_checkpoint(tmp_path):
    from cuset.grpo import _trim_reward_log

    log = tmp_path / "rewards.jsonl"
    log.write_text("".join(json.dumps({"step": s, "i": i}) + "\n"
                           for s in (1, 2, 3) for i in range(2)))
    ckpt = tmp_path / "checkpoint-2"
    ckpt.mkdir()
    (ckpt / "trainer_state.json").write_text(json.dumps({"global_step": 2}))
    _trim_reward_log(log, str(ckpt))
    assert [json.loads(x)["step"] for x in log.read_text().splitlines()] == [1, 1, 2, 2]
    _trim_reward_log(log, None)  # a fresh run starts a fresh log
    assert not log.exists()


def test_every_train_config_has_a_grpo_config_that_loads():
    from cuset.config import load_config
    from cuset.grpo import load_grpo_config

    configs = ROOT / "cuset" / "configs"
    for train in sorted(configs.glob("*.yaml")):
        if train.name.startswith("grpo-") or train.name == "tiny.yaml":
            continue
        grpo = load_grpo_config(configs / f"grpo-{train.name}")
        trained = load_config(train).model
        # the train config's model keys; the warm start is the user's to name
        assert {f.name: getattr(grpo.model, f.name) for f in dataclasses.fields(trained)} == \
            dataclasses.asdict(trained), train.name
        assert grpo.model.init_from is None
        assert (grpo.grpo.num_generations, grpo.grpo.beta, grpo.grpo.num_iterations) == (6, 0.0, 1)
        assert (grpo.lora.r, grpo.training.learning_rate, grpo.reward.speed_cap) == (32, 1e-5, 3.0)


def _logits(model, tok) -> Any:
    import torch

    ids = tok("__global__ void k(float *x) { x[threadIdx.x] = 0; }", return_tensors="pt")
    with torch.no_grad():
        return model(**ids).logits


def test_the_warm_start_is_the_sft_runs_adapter_merged_into_its_base(lora_run, tmp_path):
    import torch
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from cuset.errors import CusetError
    from cuset.grpo import load_grpo_config, load_policy
    from cuset.tiny import tiny_checkpoint

    tiny = ROOT / "cuset/configs/grpo-tiny.yaml"
    model, tok = load_policy(load_grpo_config(tiny, [f"model.init_from={lora_run}"]), False)
    base = AutoModelForCausalLM.from_pretrained(str(tiny_checkpoint()), dtype=torch.float32)
    plain = _logits(base, tok)
    sft = _logits(PeftModel.from_pretrained(base, str(lora_run / "final")), tok)
    assert not torch.allclose(plain, sft, atol=1e-4)  # the adapter matters on this input
    torch.testing.assert_close(_logits(model, tok), sft, atol=1e-4, rtol=1e-4)
    assert tok.chat_template  # the SFT run's tokenizer and template
    # an adapter of another model is refused by name, before anything is trained
    with pytest.raises(CusetError, match="model.name_or_path=builtin:tiny"):
        load_policy(load_grpo_config(tiny, [f"model.init_from={lora_run}",
                                            "model.name_or_path=Qwen/Qwen3-4B"]), False)
    with pytest.raises(CusetError, match="model.init_from: .* holds no adapter or model"):
        load_policy(load_grpo_config(tiny, [f"model.init_from={tmp_path}"]), False)
