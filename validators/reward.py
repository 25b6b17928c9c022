"""A reward function for TRL's `GRPOTrainer` that scores completions with the validation
service (`python -m validators serve`).

Contract (TRL's `reward_funcs` entries): called as
`reward(prompts=..., completions=..., completion_ids=..., **columns)`, where `columns` holds
every other dataset column as a list, one value per completion (here `task_id`), plus TRL's
`trainer_state`, `log_extra` and `log_metric`. Completions are strings (standard datasets) or
message lists `[{"role": "assistant", "content": ...}]` (conversational ones). Returns one float
per completion: `alpha * correct + beta * compiled` as the service computes it (the weights are
the server's unless given here).

The check behind the rewards is the server's (`serve --score-check`, thorough by default: every
build variant and schedule, the race build and poisoned memory included); a request cannot
weaken it. `require_check` (default `"thorough"`) makes a reward from any other check an error
(`ServiceError`), so a trainer pointed at a server set to the fast check finds out at once
instead of teaching its policy to exploit the holes the fast check leaves; `None` accepts
whatever the server runs.

A service that cannot be reached after the client's retries, or a completion the service could
not judge (reward `null`: status `error`, `service_timeout`, `service_error`), raises by
default: a silent zero would teach the policy that every program is wrong. With
`on_error="none"` the affected completions get `None`, which TRL turns into NaN and leaves out
of the advantage.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import httpx

from .client import ServiceError, ValidationClient


def completion_text(completion: str | Sequence[dict[str, Any]] | dict[str, Any]) -> str:
    """The text of a completion: a string as is; of a message list, the assistant turns'
    content joined (a list holding no assistant turn gives all contents)."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    messages = list(completion)
    said = [m for m in messages if isinstance(m, dict) and m.get("role") == "assistant"]
    chosen = said or [m for m in messages if isinstance(m, dict)]
    parts = []
    for m in chosen:
        content = m.get("content", "")
        if isinstance(content, list):  # multimodal style: [{"type": "text", "text": ...}]
            content = "".join(c.get("text", "") for c in content if isinstance(c, dict))
        parts.append(str(content))
    return "\n".join(parts)


class ServiceReward:
    """`reward_funcs=[ServiceReward("http://host:8000")]`; the dataset needs a `task_id`
    column (name it otherwise with `task_column`)."""

    def __init__(self, url: str, *, token: str | None = None, alpha: float | None = None,
                 beta: float | None = None, task_column: str = "task_id",
                 batch_size: int | None = None, on_error: str = "raise",
                 require_check: str | None = "thorough",
                 client: ValidationClient | None = None) -> None:
        if on_error not in ("raise", "none"):
            raise ValueError(f"on_error must be 'raise' or 'none' (got {on_error!r})")
        if require_check not in ("thorough", "fast", None):
            raise ValueError(f"require_check must be 'thorough', 'fast' or None "
                             f"(got {require_check!r})")
        self.require_check = require_check
        self.client = client or ValidationClient(url, token=token)
        self.alpha, self.beta = alpha, beta
        self.task_column, self.batch_size, self.on_error = task_column, batch_size, on_error
        # TRL names a reward function's logged metrics by its __name__.
        self.__name__ = "cuda_validation"

    def __call__(self, prompts: Sequence[Any] | None = None,
                 completions: Sequence[Any] | None = None,
                 **kwargs: Any) -> list[float | None]:
        completions = list(completions or [])
        ids = kwargs.get(self.task_column)
        if ids is None:
            raise ValueError(f"the reward needs a {self.task_column!r} dataset column (one task "
                             f"id per prompt); got columns {sorted(kwargs)}")
        if len(ids) != len(completions):
            raise ValueError(f"{len(completions)} completions but {len(ids)} "
                             f"{self.task_column!r} values")
        rewards: list[float | None] = [None] * len(completions)
        statuses = [""] * len(completions)
        by_task: dict[str, list[int]] = defaultdict(list)
        for i, task_id in enumerate(ids):
            by_task[str(task_id)].append(i)
        for task_id, where in by_task.items():
            texts = [completion_text(completions[i]) for i in where]
            try:
                answer = self.client.score(task_id, texts, alpha=self.alpha, beta=self.beta,
                                           batch_size=self.batch_size)
            except (ServiceError, httpx.HTTPError) as exc:
                if self.on_error == "raise":
                    raise
                for i in where:
                    statuses[i] = f"service error: {exc}"
                continue
            ran = answer.get("check")
            if self.require_check is not None and ran != self.require_check:
                # Not a failure of one request: every reward from this server would be weaker.
                raise ServiceError(f"task {task_id}: the service scored with the {ran or 'unnamed'} "
                                   f"check, not the {self.require_check} one this reward "
                                   f"requires (serve --score-check; or pass require_check=None)")
            for i, item in zip(where, answer["results"], strict=True):
                statuses[i] = item["status"]
                if item.get("reward") is None:
                    if self.on_error == "raise":
                        raise ServiceError(f"task {task_id}: completion {i} was not judged "
                                           f"({item['status']}: {item.get('reason', '')})")
                    continue
                rewards[i] = float(item["reward"])
        log_extra, log_metric = kwargs.get("log_extra"), kwargs.get("log_metric")
        if callable(log_extra):
            log_extra("validation", statuses)
        if callable(log_metric) and completions:
            n = len(completions)
            log_metric("validation/passed", sum(s == "passed" for s in statuses) / n)
            log_metric("validation/has_code", sum(s not in ("no_code_block", "") and
                                                  not s.startswith("service error")
                                                  for s in statuses) / n)
        return rewards

    def close(self) -> None:
        self.client.close()
