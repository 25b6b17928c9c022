"""The reward of `cuset grpo`: the recipe's composite reward from the validation service, per term.

`r = compiled_w * 1[compiled] + correct_w * 1[correct] + speed_w * min(t0 / t, r_max) * 1[correct]`

The verdicts (and the total) come from `POST /v1/score` of a running service; the terms are
recomputed here from the verdict's `compiled`, `correct` and `speedup` so each can be logged, and
must add up to the service's total (a disagreement is a bug of ours or the service's, never a
verdict, so it raises). The service names the weights differently (its `alpha` is correct, its
`beta` compiled, `speed_cap` is r_max): see `validators/service/README.md`.

With a judge (`cuset/grpo_judge.py`), `r' = r + weight * J`: the judge term is computed here,
after the service's total is checked, and logged as the term `judge`.

`LocalService` starts `python -m validators serve` on loopback for one run and stops it after.
"""

from __future__ import annotations

import json
import math
import signal
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from validators.client import ServiceError, ValidationClient
from validators.reward import completion_text

from .errors import CusetError
from .grpo_judge import JudgeResult, JudgeTerm, task_text

UNJUDGED = frozenset({"error", "service_timeout", "service_error"})
"""Statuses whose reward is null: the service could not judge the completion."""


@dataclass(frozen=True)
class RewardWeights:
    compiled: float = 0.1
    correct: float = 1.0
    speed: float = 0.0
    speed_cap: float = 3.0


class RewardError(CusetError):
    """The reward could not be computed (service unreachable, refused, or inconsistent)."""


class VerifiedReward:
    """A TRL reward function (`reward_funcs=[VerifiedReward(...)]`) over a dataset with a
    `task_id` column. Completions are scored per task in batches of what the service admits.

    `on_error`: `skip` gives a completion the service could not judge `None` (TRL leaves it out
    of the advantage; it is logged with its status); `raise` stops the run. A service that cannot
    be reached or refuses the request always raises: no reward is better than a made-up one.
    """

    def __init__(self, client: ValidationClient, weights: RewardWeights, *,
                 num_generations: int, log_path: str | Path | None = None,
                 on_error: str = "skip", require_check: str | None = "thorough",
                 judge: JudgeTerm | None = None) -> None:
        if on_error not in ("skip", "raise"):
            raise ValueError(f"on_error must be 'skip' or 'raise' (got {on_error!r})")
        self.client, self.weights = client, weights
        self.num_generations, self.on_error = num_generations, on_error
        self.require_check, self.judge = require_check, judge
        self.log_path = Path(log_path) if log_path is not None else None
        # TRL names a reward function's logged columns by its __name__.
        self.__name__ = "verified"

    def _body(self, task_id: str, texts: Sequence[str]) -> dict[str, Any]:
        w = self.weights
        body: dict[str, Any] = {"task_id": task_id, "completions": list(texts),
                                "alpha": w.correct, "beta": w.compiled}
        if w.speed:
            # only sent when used: the cpu backend refuses any speed request
            body.update(speed=w.speed, speed_cap=w.speed_cap)
        return body

    def score(self, task_id: str, texts: Sequence[str]) -> list[dict[str, Any]]:
        """The service's per-completion results for `texts` on `task_id`, in order."""
        size = max(1, self.client.capacity())
        results: list[dict[str, Any]] = []
        for start in range(0, len(texts), size):
            try:
                resp = self.client.request("POST", "/v1/score",
                                           json=self._body(task_id, texts[start:start + size]))
            except httpx.HTTPError as exc:
                raise RewardError(f"reward service {self.client._http.base_url}: {exc}") from None
            if resp.status_code >= 400:
                try:
                    why = resp.json().get("error") or resp.text
                except ValueError:
                    why = resp.text
                raise RewardError(f"reward service refused task {task_id!r}: "
                                  f"{resp.status_code} {why}")
            answer = resp.json()
            ran = answer.get("check")
            if self.require_check is not None and ran != self.require_check:
                raise RewardError(f"task {task_id!r}: the service scored with the {ran} check, not "
                                  f"{self.require_check} (serve --score-check, or "
                                  "reward.require_check)")
            results.extend(answer["results"])
        return results

    def terms(self, item: dict[str, Any]) -> dict[str, float]:
        w = self.weights
        correct = bool(item.get("correct"))
        speedup = item.get("speedup") or 0.0
        return {"compiled": w.compiled * bool(item.get("compiled")),
                "correct": w.correct * correct,
                "speed": w.speed * min(float(speedup), w.speed_cap) * correct}

    def __call__(self, prompts: Sequence[Any] | None = None,
                 completions: Sequence[Any] | None = None, **kwargs: Any) -> list[float | None]:
        completions = list(completions or [])
        ids = kwargs.get("task_id")
        if ids is None or len(ids) != len(completions):
            raise RewardError(f"the reward needs one task_id per completion; got "
                              f"{None if ids is None else len(ids)} for {len(completions)}")
        state = kwargs.get("trainer_state")
        # the optimizer step these completions train (TRL generates before the step it feeds),
        # numbered as the trainer's log and checkpoints number them
        step = int(getattr(state, "global_step", 0) or 0) + 1
        texts = [completion_text(c) for c in completions]
        pending = None
        if self.judge is not None and self.judge.until_correct is None:
            # always on: ask the judge while the service builds and runs the programs
            pending = self.judge.judge.submit(self._tasks(prompts, len(texts)), texts)
        items: list[dict[str, Any]] = [{} for _ in completions]
        by_task: dict[str, list[int]] = {}
        for i, task_id in enumerate(ids):
            by_task.setdefault(str(task_id), []).append(i)
        for task_id, where in by_task.items():
            got = self.score(task_id, [texts[i] for i in where])
            for i, item in zip(where, got, strict=True):
                items[i] = item
        rewards: list[float | None] = []
        rows = []
        for i, item in enumerate(items):
            terms = self.terms(item)
            total = item.get("reward")
            if total is None:
                if self.on_error == "raise":
                    raise RewardError(f"task {ids[i]}: completion {i} was not judged "
                                      f"({item.get('status')}: {item.get('reason', '')})")
            elif not math.isclose(float(total), sum(terms.values()), abs_tol=1e-6):
                raise RewardError(f"task {ids[i]}: the service's reward {total} is not the sum of "
                                  f"the recipe's terms {terms} (status {item.get('status')})")
            rewards.append(None if total is None else float(total))
            rows.append({"step": step, "task": str(ids[i]), "group": i // self.num_generations,
                         "status": item.get("status"), "reason": item.get("reason", ""),
                         "terms": None if total is None else terms, "reward": rewards[-1]})
        judge_on = self._add_judge(rows, rewards, items, pending, prompts, texts)
        self._log(rows, rewards, kwargs.get("log_metric"), kwargs.get("log_extra"), judge_on)
        return rewards

    @staticmethod
    def _tasks(prompts: Sequence[Any] | None, n: int) -> list[str]:
        if prompts is None or len(prompts) != n:
            raise RewardError(f"the judge needs one prompt per completion; got "
                              f"{None if prompts is None else len(prompts)} for {n}")
        return [task_text(p) for p in prompts]

    def _add_judge(self, rows: list[dict[str, Any]], rewards: list[float | None],
                   items: list[dict[str, Any]], pending: list[Any] | None,
                   prompts: Sequence[Any] | None, texts: list[str]) -> bool | None:
        """Adds `weight * J` to each judged reward and its row; returns whether the term was on
        for this batch (None: no judge)."""
        term = self.judge
        if term is None:
            return None
        judged = [i for i, r in enumerate(rewards) if r is not None]
        share = sum(bool(items[i].get("correct")) for i in judged) / len(judged) if judged else 0.0
        if not term.active(share):
            for row in rows:
                if row["terms"] is not None:
                    row["terms"]["judge"] = 0.0
            return False
        if pending is None:
            pending = term.judge.submit(self._tasks(prompts, len(texts)), texts)
        results: list[JudgeResult] = [f.result() for f in pending]
        for i, (row, got) in enumerate(zip(rows, results, strict=True)):
            row["judge"] = got.scores.model_dump() if got.scores is not None else None
            row["judge_error"] = got.error
            if row["terms"] is None:
                continue
            row["terms"]["judge"] = term.weight * got.value
            rewards[i] = row["reward"] = float(rewards[i] or 0.0) + row["terms"]["judge"]
        return True

    def _log(self, rows: list[dict[str, Any]], rewards: list[float | None],
             log_metric: Any, log_extra: Any, judge_on: bool | None = None) -> None:
        if self.log_path is not None and rows:
            with self.log_path.open("a", encoding="utf-8") as f:
                f.writelines(json.dumps(r) + "\n" for r in rows)
        if callable(log_extra):
            log_extra("status", [r["status"] for r in rows])
        if not callable(log_metric) or not rows:
            return
        judged = [r for r in rows if r["terms"] is not None]
        names = ("compiled", "correct", "speed") + (("judge",) if judge_on is not None else ())
        for name in names:
            if judged:
                log_metric(f"reward_terms/{name}", sum(r["terms"][name] for r in judged) / len(judged))
        if judge_on is not None:
            log_metric("judge/active", float(judge_on))
            # a failure counts J = 0: logged apart so that it is not read as a low score
            log_metric("judge/failures", float(sum(r.get("judge_error") is not None for r in rows)))
        share = groups_all_equal(rewards, self.num_generations)
        if share is not None:
            log_metric("reward_terms/groups_all_equal", share)
        for status, n in Counter(r["status"] for r in rows).items():
            log_metric(f"status/{status}", n / len(rows))


def groups_all_equal(rewards: Sequence[float | None], group: int) -> float | None:
    """Share of the groups (consecutive runs of `group` completions, TRL's order) whose judged
    rewards are all equal, so that their advantages are all zero; None when the batch does not
    split into whole groups."""
    if group < 1 or not rewards or len(rewards) % group:
        return None
    chunks = [[r for r in rewards[i:i + group] if r is not None]
              for i in range(0, len(rewards), group)]
    return sum(len(set(c)) <= 1 for c in chunks) / len(chunks)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LocalService:
    """`python -m validators serve` on loopback for the length of a `with` block."""

    def __init__(self, tasks: str, log_path: str | Path, *, backend: str = "cpu",
                 workers: int = 2, timeout: float = 300.0, ready_seconds: float = 180.0,
                 env: dict[str, str] | None = None, caller_share: int | None = 1) -> None:
        """`caller_share` 1: one trainer alone on its own server may use every slot; None: the
        server's default, as a service shared by several callers runs."""
        self.tasks, self.log_path, self.backend, self.env = tasks, Path(log_path), backend, env
        self.caller_share = caller_share
        self.workers, self.timeout, self.ready_seconds = workers, timeout, ready_seconds
        self.proc: subprocess.Popen | None = None
        self.url = ""

    def __enter__(self) -> LocalService:
        port = _free_port()
        cmd = [sys.executable, "-m", "validators", "serve", "--host", "127.0.0.1",
               "--port", str(port), "--backend", self.backend, "--workers", str(self.workers),
               "--tasks", self.tasks, "--timeout", str(self.timeout)]
        if self.caller_share is not None:
            cmd += ["--caller-share", str(self.caller_share)]
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("wb") as out:
            self.proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        self.url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + self.ready_seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RewardError(f"the local reward service exited ({self.proc.returncode}): "
                                  f"{self._tail()}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.2)
        self.stop()
        raise RewardError(f"the local reward service did not answer within {self.ready_seconds:.0f} s "
                          f"(log {self.log_path}): {self._tail()}")

    def _tail(self) -> str:
        try:
            lines = self.log_path.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return " | ".join(lines[-3:])

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(10)

    def __exit__(self, *exc: object) -> None:
        self.stop()


__all__ = ["LocalService", "RewardError", "RewardWeights", "ServiceError", "VerifiedReward",
           "groups_all_equal"]
