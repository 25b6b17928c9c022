"""The LLM judge of `cuset grpo`: a reward term for the cold start, while the policy still earns
(nearly) no verified reward.

Any OpenAI-compatible endpoint through the project's `LLMClient` (bounded concurrency, retries,
the on-disk answer cache). The judge reads the task as posed to the policy and the completion,
never the reference, and answers three scores in [0, 1] (`Judgement`); `J` is their mean and
the term added to the reward is `weight * J`. A judgement that fails (transport error after the
retries, an answer that is not the schema) counts as `J = 0` and carries its reason: it must not
stop a training step, and it must not be mistaken for a low score either, so it is logged apart.

The prompt is `cuset/prompts/judge.<version>.md`; its text is part of every request, so the
answer cache is keyed by the judge's model (and sampling parameters), the prompt version and
text, the task and the completion.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from builder.llm import LLMAnswerError, LLMClient, LLMConfig, LLMError

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
PROMPT_VERSION = "v1"


class Judgement(BaseModel):
    """The judge's answer: exactly these three numbers, each in [0, 1]."""

    # strict: "0.9" (a string) or an extra key is a malformed answer, not a score
    model_config = ConfigDict(extra="forbid", strict=True)

    correctness: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    compilability: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    speed: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)

    @property
    def mean(self) -> float:
        return (self.correctness + self.compilability + self.speed) / 3.0


@dataclass(frozen=True)
class JudgeResult:
    scores: Judgement | None
    error: str | None = None
    """Why there is no judgement (then J = 0)."""

    @property
    def value(self) -> float:
        """J: the mean of the three scores, 0 for a failed judgement."""
        return self.scores.mean if self.scores is not None else 0.0


@cache
def judge_prompt(version: str = PROMPT_VERSION) -> str:
    path = PROMPTS_DIR / f"judge.{version}.md"
    try:
        return path.read_text(encoding="utf-8")
    except OSError as e:
        raise ValueError(f"judge prompt version {version!r}: cannot read {path}: {e}") from None


def task_text(prompt: Any) -> str:
    """The task as the policy saw it: a plain prompt, or the chat turns before the answer."""
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, Sequence):
        parts = [str(m.get("content", "")) for m in prompt
                 if isinstance(m, dict) and m.get("role") != "assistant"]
        return "\n\n".join(p for p in parts if p)
    raise TypeError(f"a prompt must be text or chat turns, not {type(prompt).__name__}")


def judge_messages(task: str, answer: str, version: str = PROMPT_VERSION) -> list[dict[str, str]]:
    # plain token replacement: task and answer are code full of braces
    text = judge_prompt(version).replace("<<TASK>>", task.strip()).replace("<<ANSWER>>", answer)
    return [{"role": "user", "content": text}]


class LLMJudge:
    """Scores completions in parallel (at most `client.cfg.concurrency` requests in flight)."""

    def __init__(self, client: LLMClient, *, version: str = PROMPT_VERSION) -> None:
        judge_prompt(version)  # a missing prompt file is a configuration error, found at once
        self.client, self.version = client, version
        self._pool = ThreadPoolExecutor(max_workers=client.cfg.concurrency,
                                        thread_name_prefix="judge")

    @classmethod
    def from_endpoint(cls, base_url: str, model: str, *, version: str = PROMPT_VERSION,
                      **llm: Any) -> LLMJudge:
        """`llm`: further `LLMConfig` fields (api_key_env, concurrency, max_retries, ...)."""
        return cls(LLMClient(LLMConfig(model=model, base_url=base_url, **llm)), version=version)

    def judge(self, task: str, answer: str) -> JudgeResult:
        try:
            got = self.client.structured(judge_messages(task, answer, self.version), Judgement,
                                          forget_refused=True)
        except LLMAnswerError as e:
            return JudgeResult(None, f"malformed: {e.detail}"[:500])
        except LLMError as e:
            return JudgeResult(None, f"{e.reason}: {e.detail}"[:500])
        return JudgeResult(got.value)

    def submit(self, tasks: Sequence[str], answers: Sequence[str]) -> list[Future[JudgeResult]]:
        return [self._pool.submit(self.judge, t, a) for t, a in zip(tasks, answers, strict=True)]

    def judge_many(self, tasks: Sequence[str], answers: Sequence[str]) -> list[JudgeResult]:
        return [f.result() for f in self.submit(tasks, answers)]

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


@dataclass
class JudgeTerm:
    """The judge as a reward term: `weight * J`, dropped for a batch whose share of correct
    completions is at least `until_correct` (None: always on)."""

    judge: LLMJudge
    weight: float = 0.5
    until_correct: float | None = None

    def active(self, correct_share: float) -> bool:
        return self.until_correct is None or correct_share < self.until_correct


__all__ = ["JudgeResult", "JudgeTerm", "Judgement", "LLMJudge", "judge_messages", "judge_prompt",
           "task_text"]
