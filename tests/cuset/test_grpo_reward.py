"""The reward of `cuset grpo` against a real local validation service (cpu backend): scripted
completions get exactly the recipe's reward, term by term, and every completion is logged."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from openai_standin import ok

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
    # The session's build of the emulator itself (tests/conftest.py), set after collection.
    env = {**SERVICE_ENV, **{k: os.environ[k] for k in ("CKD_SHIM_DIR",) if k in os.environ}}
    with LocalService("builtin", tmp_path_factory.mktemp("svc") / "service.log",
                      backend="cpu", workers=2, env=env) as svc:
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


# -- the LLM judge ----------------------------------------------------------------------------

def _wrong() -> str:
    return _reference().replace("#define CLAMP_HI 2.0f", "#define CLAMP_HI 2.5f")


def _scripted() -> list[tuple[str, dict[str, float]]]:
    """(completion text, the scores the judge stand-in gives it): correct, wrong, empty, prose."""
    return [
        (_fenced(_reference()), {"correctness": 1.0, "compilability": 1.0, "speed": 0.5}),
        (_fenced(_wrong()), {"correctness": 0.25, "compilability": 1.0, "speed": 0.25}),
        ("```cuda\n```", {"correctness": 0.0, "compilability": 0.0, "speed": 0.0}),
        ("I would write a kernel.", {"correctness": 0.0, "compilability": 0.0, "speed": 0.75}),
    ]


def _answer_of(body: dict) -> str:
    text = body["messages"][-1]["content"]
    return text.split("BEGIN UNTRUSTED\n", 1)[1].rsplit("\nEND UNTRUSTED", 1)[0]


def _judge_standin(answers: dict[str, object]):
    """The OpenAI-protocol stand-in answering each completion with its scripted reply (a dict of
    scores, raw text, or an `Answer`)."""
    from openai_standin import Answer, StandIn

    def respond(body: dict) -> Answer:
        got = answers[_answer_of(body)]
        return got if isinstance(got, Answer) else ok(got)

    return StandIn(respond=respond)


def _judge(srv, tmp_path, weight: float = 0.5, until_correct: float | None = None):
    from cuset.grpo_judge import JudgeTerm, LLMJudge

    judge = LLMJudge.from_endpoint(srv.url, "judge-model", cache_dir=tmp_path / "llm-cache",
                                   max_retries=0, schema_retries=0, temperature=0.0)
    return JudgeTerm(judge, weight=weight, until_correct=until_correct)


def _prompt() -> list[dict[str, str]]:
    from cuset.grpo import GrpoRunConfig, prompt_rows

    cfg = GrpoRunConfig()
    return next(r["prompt"] for r in prompt_rows(cfg) if r["task_id"] == TASK)


def test_with_the_judge_the_reward_is_the_recipes_plus_lambda_times_the_mean_score(service, tmp_path):
    from cuset.grpo_judge import judge_messages, task_text

    weights = RewardWeights(compiled=0.25, correct=2.0, speed=0.0, speed_cap=3.0)
    scripted = _scripted()
    log = tmp_path / "rewards.jsonl"
    metrics: dict[str, list[float]] = {}
    prompt = _prompt()
    with _judge_standin(dict(scripted)) as srv, ValidationClient(service.url) as client:
        term = _judge(srv, tmp_path, weight=0.5)
        reward = VerifiedReward(client, weights, num_generations=2, log_path=log, judge=term)
        got = reward(prompts=[prompt] * 4, completions=[t for t, _ in scripted], task_id=[TASK] * 4,
                     log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
        requests = srv.chat_requests()
    judge = [0.5 * sum(s.values()) / 3 for _, s in scripted]
    verified = [weights.compiled + weights.correct, weights.compiled, 0.0, 0.0]
    assert got == pytest.approx([v + j for v, j in zip(verified, judge, strict=True)], abs=1e-9)
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["terms"]["judge"] for r in rows] == pytest.approx(judge)
    assert [r["judge"] for r in rows] == [s for _, s in scripted]
    assert all(r["judge_error"] is None for r in rows)
    assert metrics["reward_terms/judge"] == [pytest.approx(sum(judge) / 4)]
    assert metrics["judge/failures"] == [0.0] and metrics["judge/active"] == [1.0]
    # the judge's requests hold the task as posed and the completion, nothing else: never the
    # reference program (the wrong answer differs from it by one line) nor the NumPy reference
    assert len(requests) == 4
    sent = {_answer_of(r.body): r.body["messages"] for r in requests}
    for text, _ in scripted:
        assert sent[text] == judge_messages(task_text(prompt), text)
    numpy_ref = (ROOT / "sources/builtin/tasks" / TASK / "reference.py").read_text()
    for r in requests:
        content = r.body["messages"][-1]["content"]
        assert "np.clip" not in content and numpy_ref.strip() not in content
        if _answer_of(r.body) != scripted[0][0]:
            assert "#define CLAMP_HI 2.0f" not in content


def test_a_failed_or_malformed_judgement_counts_zero_and_is_logged(service, tmp_path):
    from openai_standin import server_error

    weights = RewardWeights(compiled=0.25, correct=2.0, speed=0.0, speed_cap=3.0)
    # completions the service answers without building anything: the judge is under test
    scripted = dict(_scripted()[2:])
    empty, prose = scripted
    replies = {empty: '{"correctness": 0.9, "compilability": "high"}',  # malformed
               prose: server_error(500)}
    log = tmp_path / "rewards.jsonl"
    metrics: dict[str, list[float]] = {}
    with _judge_standin(replies) as srv, ValidationClient(service.url) as client:
        reward = VerifiedReward(client, weights, num_generations=2, log_path=log,
                                judge=_judge(srv, tmp_path))
        got = reward(prompts=[_prompt()] * 2, completions=[empty, prose], task_id=[TASK] * 2,
                     log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
        # training goes on: the next batch is judged again, and neither a failed request nor a
        # malformed answer is cached (else that completion would stay at J = 0 for good)
        later = {empty: {"correctness": 0.5, "compilability": 0.25, "speed": 0.0},
                 prose: {"correctness": 0.0, "compilability": 0.5, "speed": 1.0}}
        srv.respond = lambda body: ok(later[_answer_of(body)])
        again = reward(prompts=[_prompt()] * 2, completions=[empty, prose], task_id=[TASK] * 2,
                       log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
    assert got == [0.0, 0.0]
    assert again == pytest.approx([0.5 * sum(later[t].values()) / 3 for t in (empty, prose)])
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["terms"]["judge"] for r in rows[:2]] == [0.0, 0.0]
    assert rows[0]["judge"] is None and rows[0]["judge_error"].startswith("malformed")
    assert rows[1]["judge"] is None and "500" in rows[1]["judge_error"]
    assert metrics["judge/failures"] == [2.0, 0.0]


def test_the_judge_term_is_dropped_once_the_batch_is_correct_enough(service, tmp_path):
    weights = RewardWeights(compiled=0.25, correct=2.0, speed=0.0, speed_cap=3.0)
    scripted = dict(_scripted())
    correct, _, empty, prose = scripted
    log = tmp_path / "rewards.jsonl"
    metrics: dict[str, list[float]] = {}
    with _judge_standin(scripted) as srv, ValidationClient(service.url) as client:
        reward = VerifiedReward(client, weights, num_generations=2, log_path=log,
                                judge=_judge(srv, tmp_path, until_correct=0.5))
        # a correct share of 1/2 reaches F = 0.5: no judge term, and no judge calls
        got = reward(prompts=[_prompt()] * 2, completions=[correct, prose], task_id=[TASK] * 2,
                     log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
        asked = len(srv.chat_requests())
        # a correct share of 0 is below F: the judge is on
        cold = reward(prompts=[_prompt()] * 2, completions=[empty, prose], task_id=[TASK] * 2,
                      log_metric=lambda k, v: metrics.setdefault(k, []).append(v))
        asked_cold = len(srv.chat_requests())
    assert got == pytest.approx([weights.compiled + weights.correct, 0.0], abs=1e-9)
    assert cold == pytest.approx([0.5 * sum(scripted[t].values()) / 3 for t in (empty, prose)])
    assert (asked, asked_cold) == (0, 2)
    assert metrics["judge/active"] == [0.0, 1.0]
    rows = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["terms"]["judge"] for r in rows[:2]] == [0.0, 0.0]


def test_judge_answers_are_cached_by_model_and_prompt(tmp_path):
    from openai_standin import StandIn, ok

    from cuset.grpo_judge import LLMJudge

    scores = {"correctness": 0.5, "compilability": 0.5, "speed": 0.5}
    with StandIn(default=ok(scores)) as srv:
        def judge(model: str) -> LLMJudge:
            return LLMJudge.from_endpoint(srv.url, model, cache_dir=tmp_path, max_retries=0)

        first = judge("m1").judge_many(["task"], ["answer"])
        again = judge("m1").judge_many(["task"], ["answer"])
        assert len(srv.chat_requests()) == 1 and first == again
        judge("m2").judge_many(["task"], ["answer"])
        judge("m1").judge_many(["task"], ["another answer"])
        judge("m1").judge_many(["another task"], ["answer"])
        assert len(srv.chat_requests()) == 4


def test_a_malformed_judgement_is_not_kept_for_the_same_completion(tmp_path):
    from openai_standin import StandIn, ok

    from cuset.grpo_judge import LLMJudge

    good = {"correctness": 1.0, "compilability": 0.5, "speed": 0.0}
    with StandIn(default=ok(good)) as srv:
        srv.push(ok('{"correctness": 1.0, "compilability": 0.5}'))
        judge = LLMJudge.from_endpoint(srv.url, "m", cache_dir=tmp_path, max_retries=0,
                                       schema_retries=0)
        first, = judge.judge_many(["task"], ["answer"])
        second, = judge.judge_many(["task"], ["answer"])
        third, = judge.judge_many(["task"], ["answer"])  # the good one is cached
        judge.close()
        assert first.value == 0.0 and first.error.startswith("malformed")
        assert second.value == pytest.approx(0.5) and second.error is None
        assert third == second and len(srv.chat_requests()) == 2
