"""Clients of the validation service (`python -m validators serve`): `ValidationClient` (sync)
and `AsyncValidationClient`, over httpx.

Retries: a 429 or 503 answer, or a connection that could not be made, is retried with
exponential backoff (and jitter), waiting at least what the server's `Retry-After` asks. A
request that reached the server and then lost its connection is not retried: it may have been
validated, and the caller decides. `score` splits a long list of completions into batches of
at most what the server admits from one caller at once (`caller_capacity`, else
`capacity`, from /healthz).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from typing import Any

import httpx

from .retry_after import retry_after_seconds

RETRY_STATUS = (429, 503)


class ServiceError(RuntimeError):
    """The service answered with an error (or could not be reached after the retries)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class _Policy:
    def __init__(self, retries: int, backoff: float, max_backoff: float) -> None:
        self.retries, self.backoff, self.max_backoff = retries, backoff, max_backoff

    def delay(self, attempt: int, retry_after: float | None) -> float:
        base = min(self.max_backoff, self.backoff * (2 ** attempt))
        wait = base * (0.5 + random.random() / 2)  # jitter: a burst of clients spreads out
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_backoff))
        return wait


def _admits(resp: httpx.Response) -> int:
    """The most jobs the server admits from this caller at once: its per-caller share when it
    has one (a larger batch would never be admitted), else its whole capacity. A 503 /healthz
    (draining, or degraded: say, a worker to replace) still says it, and the server may still
    answer the requests themselves."""
    try:
        health = resp.json()
    except ValueError:
        health = None
    if not isinstance(health, dict) or "capacity" not in health:
        _answer(resp)
        raise ServiceError(f"GET /healthz: no capacity in {resp.text[:200]!r}", resp.status_code)
    return int(health.get("caller_capacity") or health["capacity"])


def _headers(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}


def _answer(resp: httpx.Response) -> Any:
    if resp.status_code < 400:
        return resp.json()
    try:
        message = resp.json().get("error") or resp.text
    except ValueError:
        message = resp.text
    raise ServiceError(f"{resp.request.method} {resp.request.url.path}: "
                       f"{resp.status_code} {message}", status=resp.status_code)


def _validate_body(program: str | dict[str, Any], task_id: str | None,
                   task: dict[str, Any] | None, thorough: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"program": program, "thorough": thorough}
    if task is not None:
        body["task"] = task
    else:
        body["task_id"] = task_id
    return body


def _score_body(task_id: str, completions: Sequence[str], alpha: float | None,
                beta: float | None, speed: float, speed_cap: float | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"task_id": task_id, "completions": list(completions)}
    if speed_cap is not None:
        body["speed_cap"] = speed_cap
    if alpha is not None:
        body["alpha"] = alpha
    if beta is not None:
        body["beta"] = beta
    if speed:
        body["speed"] = speed
    return body


def _batches(items: Sequence[str], size: int) -> list[Sequence[str]]:
    if size < 1:
        raise ValueError(f"batch_size must be at least 1 (got {size})")
    return [items[i:i + size] for i in range(0, len(items), size)]


def _merge(parts: list[dict[str, Any]], batch_size: int, task_id: str) -> dict[str, Any]:
    if not parts:
        return {"task_id": task_id, "results": []}
    merged = dict(parts[0])
    merged["results"] = []
    for n, part in enumerate(parts):
        for item in part["results"]:
            merged["results"].append({**item, "index": item["index"] + n * batch_size})
    return merged


class ValidationClient:
    """Synchronous client. `token` is sent as a bearer token."""

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 300.0,
                 retries: int = 6, backoff: float = 0.25, max_backoff: float = 30.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._http = httpx.Client(base_url=base_url, headers=_headers(token), timeout=timeout,
                                  transport=transport)
        self._policy = _Policy(retries, backoff, max_backoff)
        self._capacity: int | None = None

    def __enter__(self) -> ValidationClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        """One call with the retry policy; the last answer (or connection error) wins."""
        attempt = 0
        while True:
            try:
                resp = self._http.request(method, path, **kw)
            except httpx.ConnectError:
                if attempt >= self._policy.retries:
                    raise
                time.sleep(self._policy.delay(attempt, None))
            else:
                if resp.status_code not in RETRY_STATUS or attempt >= self._policy.retries:
                    return resp
                time.sleep(self._policy.delay(
                    attempt, retry_after_seconds(resp.headers.get("Retry-After"))))
            attempt += 1

    def validate(self, program: str | dict[str, Any], *, task_id: str | None = None,
                 task: dict[str, Any] | None = None, thorough: bool = False) -> dict[str, Any]:
        """The `schemas.ValidationResult` (as a dict) of `program` for a task id or task."""
        return _answer(self.request("POST", "/v1/validate",
                                    json=_validate_body(program, task_id, task, thorough)))

    def score(self, task_id: str, completions: Sequence[str], *, alpha: float | None = None,
              beta: float | None = None, speed: float = 0.0, speed_cap: float | None = None,
              batch_size: int | None = None) -> dict[str, Any]:
        """Score completions (in batches of `batch_size`, default the server's capacity);
        `results` in the input's order. `speed_cap`: the request's r_max (default the
        server's)."""
        if batch_size is None:
            batch_size = self.capacity()
        parts = [_answer(self.request("POST", "/v1/score",
                                      json=_score_body(task_id, batch, alpha, beta, speed,
                                                       speed_cap)))
                 for batch in _batches(completions, batch_size)]
        return _merge(parts, batch_size, task_id)

    def tasks(self) -> list[dict[str, Any]]:
        return _answer(self.request("GET", "/v1/tasks"))["tasks"]

    def health(self) -> dict[str, Any]:
        return self._http.get("/healthz").json()

    def capacity(self) -> int:
        """Jobs the server admits at once (cached after the first call)."""
        if self._capacity is None:
            try:
                resp = self._http.get("/healthz")
            except httpx.ConnectError:
                resp = self.request("GET", "/healthz")  # with the retries
            self._capacity = _admits(resp)
        return self._capacity


class AsyncValidationClient:
    """The same calls, async; `score` sends its batches concurrently."""

    def __init__(self, base_url: str, *, token: str | None = None, timeout: float = 300.0,
                 retries: int = 6, backoff: float = 0.25, max_backoff: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None,
                 limits: httpx.Limits | None = None) -> None:
        self._http = httpx.AsyncClient(base_url=base_url, headers=_headers(token),
                                       timeout=timeout, transport=transport,
                                       limits=limits or httpx.Limits(max_connections=100))
        self._policy = _Policy(retries, backoff, max_backoff)
        self._capacity: int | None = None

    async def __aenter__(self) -> AsyncValidationClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, **kw: Any) -> httpx.Response:
        attempt = 0
        while True:
            try:
                resp = await self._http.request(method, path, **kw)
            except httpx.ConnectError:
                if attempt >= self._policy.retries:
                    raise
                await asyncio.sleep(self._policy.delay(attempt, None))
            else:
                if resp.status_code not in RETRY_STATUS or attempt >= self._policy.retries:
                    return resp
                await asyncio.sleep(self._policy.delay(
                    attempt, retry_after_seconds(resp.headers.get("Retry-After"))))
            attempt += 1

    async def validate(self, program: str | dict[str, Any], *, task_id: str | None = None,
                       task: dict[str, Any] | None = None,
                       thorough: bool = False) -> dict[str, Any]:
        return _answer(await self.request("POST", "/v1/validate",
                                          json=_validate_body(program, task_id, task, thorough)))

    async def score(self, task_id: str, completions: Sequence[str], *,
                    alpha: float | None = None, beta: float | None = None, speed: float = 0.0,
                    speed_cap: float | None = None,
                    batch_size: int | None = None) -> dict[str, Any]:
        if batch_size is None:
            batch_size = await self.capacity()

        async def one(batch: Sequence[str]) -> dict[str, Any]:
            return _answer(await self.request(
                "POST", "/v1/score",
                json=_score_body(task_id, batch, alpha, beta, speed, speed_cap)))

        parts = await asyncio.gather(*(one(b) for b in _batches(completions, batch_size)))
        return _merge(list(parts), batch_size, task_id)

    async def tasks(self) -> list[dict[str, Any]]:
        return _answer(await self.request("GET", "/v1/tasks"))["tasks"]

    async def health(self) -> dict[str, Any]:
        return (await self._http.get("/healthz")).json()

    async def capacity(self) -> int:
        if self._capacity is None:
            try:
                resp = await self._http.get("/healthz")
            except httpx.ConnectError:
                resp = await self.request("GET", "/healthz")
            self._capacity = _admits(resp)
        return self._capacity
