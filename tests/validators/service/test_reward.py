"""`validators.reward.ServiceReward` against the real service: TRL's reward contract (strings
and chat messages, the `task_id` column, one float per completion, in order), and inside a real
`GRPOTrainer` for two steps with a tiny model."""

from __future__ import annotations

import importlib.util
import re

import httpx
import pytest
from service_server import ROOT, free_port, reference_program, start_server, wrong_program

from validators.client import ValidationClient
from validators.reward import ServiceReward, completion_text

TOKEN = "reward-token"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # Rewards come from the thorough check: its cold builds (AddressSanitizer, race) on a
    # loaded machine must not meet the service's limit, which is not under test here.
    srv = start_server(tmp_path_factory.mktemp("reward"), "--backend", "cpu", "--workers", "2",
                       "--queue", "16", "--timeout", "300", token=TOKEN)
    yield srv
    srv.stop()


def _fenced(source: str) -> str:
    return f"Here is the program.\n```cuda\n{source}\n```\n"


def test_rewards_for_strings_and_chat_messages_keep_their_order(server):
    reward = ServiceReward(server.url, token=TOKEN)
    completions = [
        [{"role": "assistant", "content": _fenced(reference_program("clamp"))}],
        _fenced(wrong_program()),
        [{"role": "assistant", "content": _fenced(reference_program("relu"))}],
        "I would rather not.",
    ]
    logged: dict[str, list] = {}
    metrics: dict[str, float] = {}
    got = reward(prompts=["p"] * 4, completions=completions, completion_ids=[[1]] * 4,
                 task_id=["clamp", "clamp", "relu", "relu"],
                 log_extra=lambda k, v: logged.setdefault(k, v),
                 log_metric=lambda k, v: metrics.setdefault(k, v))
    # The server's weights: alpha 1.0 for correct, beta 0.1 for compiled.
    assert got == pytest.approx([1.1, 0.1, 1.1, 0.0])
    assert logged["validation"] == ["passed", "failed", "passed", "no_code_block"]
    assert metrics["validation/passed"] == 0.5
    reward.close()


def test_weights_given_to_the_reward_override_the_servers(server):
    reward = ServiceReward(server.url, token=TOKEN, alpha=3.0, beta=1.0)
    got = reward(prompts=["p"], completions=[_fenced(reference_program("clamp"))],
                 task_id=["clamp"])
    assert got == [4.0]


def test_completion_text_of_each_shape():
    assert completion_text("x") == "x"
    assert completion_text([{"role": "assistant", "content": "a"}]) == "a"
    assert completion_text([{"role": "assistant",
                             "content": [{"type": "text", "text": "b"}]}]) == "b"


def test_a_missing_task_column_is_named(server):
    reward = ServiceReward(server.url, token=TOKEN)
    with pytest.raises(ValueError, match="'task_id' dataset column"):
        reward(prompts=["p"], completions=["c"], problem=["x"])


def test_an_unreachable_service_raises_or_gives_none():
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    strict = ServiceReward(url, client=ValidationClient(url, retries=1, backoff=0.01))
    with pytest.raises(httpx.ConnectError):
        strict(prompts=["p"], completions=["c"], task_id=["clamp"])
    lenient = ServiceReward(url, on_error="none",
                            client=ValidationClient(url, retries=1, backoff=0.01))
    assert lenient(prompts=["p", "q"], completions=["c", "d"], task_id=["clamp", "relu"]) == [
        None, None]


@pytest.mark.slow
def test_grpo_trainer_trains_on_service_rewards(server, tmp_path):
    spec = importlib.util.spec_from_file_location("grpo_rewards",
                                                  ROOT / "examples" / "grpo_rewards.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    history = example.train(server.url, tmp_path / "out", token=TOKEN, steps=2, limit=4)
    steps = [row for row in history if "rewards/cuda_validation/mean" in row]
    assert [row["step"] for row in steps] == [1, 2]
    # One score request per step (one prompt, two generations), all answered.
    text = httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {TOKEN}"}).text
    calls = re.search(r'ckd_requests_total\{code="200",route="/v1/score"\} (\S+)', text)
    assert calls is not None and float(calls.group(1)) >= 2
