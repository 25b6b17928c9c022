"""The reward of `cuset grpo` against a real local validation service (cpu backend): scripted
completions get exactly the recipe's reward, term by term, and every completion is logged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cuset.grpo_reward import LocalService, RewardWeights, VerifiedReward, groups_all_equal
from validators.client import ValidationClient

ROOT = Path(__file__).resolve().parents[2]
TASK = "clamp"  # small built-in task: its reference builds in well under a second
# Read at collection, before the package's conftest points CKD_CACHE_DIR at a fresh folder: the
# service keeps the user's build cache, so the reference program's builds are reused.
SERVICE_ENV = dict(os.environ)


def _reference() -> str:
    return (ROOT / "sources" / "builtin" / "tasks" / TASK / "main.cu").read_text()


def _fenced(source: str) -> str:
    return f"Here is the program.\n```cuda\n{source}\n```\n"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    with LocalService("builtin", tmp_path_factory.mktemp("svc") / "service.log",
                      backend="cpu", workers=2, env=SERVICE_ENV) as svc:
        yield svc
    assert svc.proc is not None and svc.proc.poll() is not None, "the service was left running"


def test_scripted_completions_get_the_recipes_reward(service, tmp_path):
    # weights other than the service's defaults, so a reward can only match if they travel
    weights = RewardWeights(compiled=0.25, correct=2.0, speed=0.0, speed_cap=3.0)
    wrong = _reference().replace("#define CLAMP_HI 2.0f", "#define CLAMP_HI 2.5f")
    assert wrong != _reference()
    completions = [
        [{"role": "assistant", "content": _fenced(_reference())}],   # correct
        [{"role": "assistant", "content": _fenced(wrong)}],          # builds, wrong answer
        [{"role": "assistant", "content": "```cuda\n```"}],         # empty program
        [{"role": "assistant", "content": "I would write a kernel."}],  # no code block
    ]
    log = tmp_path / "rewards.jsonl"
    metrics: dict[str, list[float]] = {}
    with ValidationClient(service.url) as client:
        reward = VerifiedReward(client, weights, num_generations=2, log_path=log)
        got = reward(prompts=["p"] * 4, completions=completions, task_id=[TASK] * 4,
                     log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
    assert got == pytest.approx([2.25, 0.25, 0.0, 0.0], abs=1e-9)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    # an empty block holds no program: the service treats it as no block at all
    assert [r["status"] for r in rows] == ["passed", "failed", "no_code_block", "no_code_block"]
    assert [r["terms"] for r in rows] == [
        {"compiled": 0.25, "correct": 2.0, "speed": 0.0},
        {"compiled": 0.25, "correct": 0.0, "speed": 0.0},
        {"compiled": 0.0, "correct": 0.0, "speed": 0.0},
        {"compiled": 0.0, "correct": 0.0, "speed": 0.0},
    ]
    assert all(r["task"] == TASK and r["step"] == 1 and "reason" in r for r in rows)
    assert metrics["reward_terms/compiled"] == [pytest.approx(0.125)]
    assert metrics["reward_terms/correct"] == [pytest.approx(0.5)]
    assert metrics["reward_terms/speed"] == [0.0]
    # groups of two: (correct, wrong) differ, (empty, no block) are both 0
    assert metrics["reward_terms/groups_all_equal"] == [0.5]


def test_a_refused_request_is_an_error_naming_the_task_not_a_reward(service):
    from cuset.grpo_reward import RewardError

    with ValidationClient(service.url) as client:
        reward = VerifiedReward(client, RewardWeights(), num_generations=1)
        with pytest.raises(RewardError, match="no-such-task"):
            reward(completions=[_fenced(_reference())], task_id=["no-such-task"])


def test_groups_all_equal_counts_whole_groups_only():
    assert groups_all_equal([0, 0, 1, 1, 0, 1], 2) == pytest.approx(2 / 3)
    assert groups_all_equal([0, None, 1, 1], 2) == 1.0  # an unjudged completion is left out
    assert groups_all_equal([0, 0, 0], 2) is None
