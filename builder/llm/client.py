"""A thread-safe client for any OpenAI-compatible chat endpoint, built for batch synthesis.

One `LLMClient` per process, shared by every thread: a semaphore bounds the requests in flight
(`LLMConfig.concurrency`), transport failures are retried here rather than inside `openai` so
that `Retry-After` is honoured exactly and every retry is counted, and successful answers are
cached on disk so a rebuild asks nothing twice. An answer the caller's checks refuse is dropped
from the cache again (`forget`; `structured(..., forget_refused=True)` does it), so it is not
served on the next run.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from validators.retry_after import retry_after_seconds

from .cache import ResponseCache, response_key
from .config import PUBLIC_OPENAI_HOST, LLMConfig
from .errors import LLMAnswerError, LLMError
from .extract import NoJSONError, describe_error, extract_json
from .reply import Reply, Structured, Usage

M = TypeVar("M", bound=BaseModel)

BACKOFF_BASE = 1.0
BACKOFF_CAP = 60.0
PLACEHOLDER_KEY = "EMPTY"
"""Sent to endpoints that need no key (vLLM's convention): the `openai` client insists on one."""

_RETRYABLE_STATUS = {429: "rate_limited", 408: "timeout", 500: "server_error",
                     502: "server_error", 503: "server_error", 504: "server_error"}
_FINAL_STATUS = {400: "bad_request", 401: "auth", 403: "auth", 404: "not_found",
                 422: "bad_request"}
_MAX_NOTES = 50
_NOT_CACHE_KEY = frozenset({"timeout"})
"""Overrides that change how we wait, not what the model answers."""


def feedback_message(error: str) -> str:
    """The user turn that follows a refused answer."""
    return (
        "Your answer could not be used:\n"
        f"{error}\n\n"
        "Answer again with the complete corrected JSON object only, no other text."
    )


class LLMClient:
    """`chat` for text, `structured` for a validated pydantic answer. Thread-safe.

    `sleep` is called with the seconds to wait before each retry (tests pass a recorder).
    Pickling a client ships its config only: the receiver gets a fresh client (own semaphore,
    own statistics), so `concurrency` bounds each process separately.
    """

    def __init__(
        self,
        cfg: LLMConfig,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.cfg = cfg.resolved()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._openai = openai.OpenAI(
            base_url=self.cfg.base_url,
            api_key=_api_key(self.cfg),
            timeout=self.cfg.timeout,
            max_retries=0,
        )
        self._slots = threading.BoundedSemaphore(self.cfg.concurrency)
        self._cache = ResponseCache(self.cfg.effective_cache_dir)
        self._params = self.cfg.params()
        self._lock = threading.Lock()
        self._json_mode = self.cfg.json_mode
        self._stats: Counter[str] = Counter()
        self._errors: Counter[str] = Counter()
        self._notes: list[str] = []

    def __reduce__(self):
        return (self.__class__, (self.cfg,))

    # -- text -------------------------------------------------------------------------------

    def chat(self, messages: list[dict[str, str]], **overrides: Any) -> Reply:
        """One answer to `messages`. `overrides` are passed to `chat.completions.create`
        (`temperature`, `max_tokens`, `stop`, ...) and are part of the cache key, except
        `timeout`. Raises `LLMError` after the retries are spent, or at once for a request the
        server refuses (400/401/403/404)."""
        key = self._key(messages, overrides)
        entry, discarded = self._cache.get(key)
        if discarded:
            self._count(cache_discarded=1, note=discarded)
        if entry is not None:
            usage = Usage(
                prompt_tokens=int(entry.get("prompt_tokens", 0)),
                completion_tokens=int(entry.get("completion_tokens", 0)),
                calls=1,
                cached_calls=1,
                usage_missing=int(bool(entry.get("usage_missing", False))),
            )
            self._count(calls=1, cached_calls=1)
            return Reply(entry["text"], usage, cached=True, attempts=0,
                         finish_reason=str(entry.get("finish_reason", "")))
        reply = self._ask(messages, overrides)
        try:
            self._cache.put(key, {
                "text": reply.text,
                "finish_reason": reply.finish_reason,
                "prompt_tokens": reply.usage.prompt_tokens,
                "completion_tokens": reply.usage.completion_tokens,
                "usage_missing": bool(reply.usage.usage_missing),
                "model": self.cfg.model,
            })
        except OSError as exc:  # a full or read-only disk costs a rebuild, not this answer
            self._count(cache_write_failed=1, note=f"LLM cache write failed: {exc}")
        return reply

    def forget(self, messages: list[dict[str, str]], **overrides: Any) -> bool:
        """Drop the cached answer to `messages` (with the same `overrides` as `chat`), so the
        next `chat` asks the endpoint again. A caller whose checks refuse an answer must call
        this: `chat` caches every answer it gets, before anyone has looked at it, and a refused
        one served from the cache would be refused on every later run. True if one was dropped."""
        try:
            return self._cache.delete(self._key(messages, overrides))
        except OSError as exc:  # as a failed write: the worst case is the old answer again
            self._count(note=f"LLM cache entry could not be dropped: {exc}")
            return False

    def _key(self, messages: list[dict[str, str]], overrides: dict[str, Any]) -> str:
        return response_key(
            self._params, messages, {k: v for k, v in overrides.items() if k not in _NOT_CACHE_KEY}
        )

    def _ask(self, messages: list[dict[str, str]], overrides: dict[str, Any]) -> Reply:
        attempts = retries = 0
        json_fallback_tried = False
        while True:
            attempts += 1
            request = self._request(messages, overrides)
            self._count(requests=1)
            wait: float | None = None
            try:
                with self._slots:
                    completion = self._openai.chat.completions.create(**request)
            except openai.APITimeoutError:
                reason, retryable = "timeout", True
                detail = f"no answer within {request.get('timeout', self.cfg.timeout)} s"
            except openai.APIConnectionError as exc:
                reason, retryable = "connection", True
                detail = f"{exc.message} ({_cause(exc)})"
            except openai.APIStatusError as exc:
                if (exc.status_code == 400 and "response_format" in request
                        and not json_fallback_tried and _names(exc, "response_format")):
                    # Some servers have no JSON mode; the prompt still asks for JSON.
                    json_fallback_tried = True
                    with self._lock:
                        first, self._json_mode = self._json_mode, False
                    if first:
                        self._count(note=f"{self._params['base_url_host']} rejected "
                                    "response_format; asking without JSON mode")
                    continue
                retryable = exc.status_code in _RETRYABLE_STATUS
                reason = _RETRYABLE_STATUS.get(exc.status_code) or _FINAL_STATUS.get(
                    exc.status_code, "server_error" if exc.status_code >= 500 else "http_error")
                detail = f"HTTP {exc.status_code}: {_message(exc)}"
                if retryable:
                    wait = retry_after(exc.response.headers)
            except openai.APIError as exc:
                reason, retryable, detail = "bad_response", False, str(exc)[:300]
            else:
                return self._reply(completion, attempts, retries)
            if not retryable or retries >= self.cfg.max_retries:
                self._count(error=reason)
                tried = f" (after {attempts} attempts)" if attempts > 1 else ""
                raise LLMError(reason, f"{self.cfg.model} at {self.cfg.base_url}: {detail}{tried}",
                               Usage(retries=retries))
            delay = wait if wait is not None else self._backoff(retries)
            retries += 1
            self._count(retries=1)
            self._sleep(delay)

    def _request(self, messages: list[dict[str, str]], overrides: dict[str, Any]) -> dict[str, Any]:
        cfg = self.cfg
        request: dict[str, Any] = {
            "model": cfg.model,
            "messages": messages,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "max_tokens": cfg.max_tokens,
        }
        if cfg.seed is not None:
            request["seed"] = cfg.seed
        with self._lock:
            json_mode = self._json_mode
        if json_mode:
            request["response_format"] = {"type": "json_object"}
        request.update(overrides)
        return request

    def _reply(self, completion: Any, attempts: int, retries: int) -> Reply:
        choices = getattr(completion, "choices", None)
        if not choices:
            self._count(error="bad_response")
            raise LLMError("bad_response", f"{self.cfg.model}: the answer has no choices",
                           Usage(retries=retries))
        choice = choices[0]
        text = choice.message.content or ""
        raw_usage = getattr(completion, "usage", None)
        prompt = int(getattr(raw_usage, "prompt_tokens", 0) or 0)
        completion_tokens = int(getattr(raw_usage, "completion_tokens", 0) or 0)
        missing = int(raw_usage is None)
        self._count(calls=1, prompt_tokens=prompt, completion_tokens=completion_tokens,
                    usage_missing=missing)
        usage = Usage(prompt_tokens=prompt, completion_tokens=completion_tokens, calls=1,
                      retries=retries, usage_missing=missing)
        return Reply(text, usage, cached=False, attempts=attempts,
                     finish_reason=choice.finish_reason or "")

    def _backoff(self, retry: int) -> float:
        """Exponential backoff with full jitter, so a crowd of workers does not retry in step."""
        with self._lock:
            return self._rng.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * 2**retry))

    # -- structured -------------------------------------------------------------------------

    def structured(
        self,
        messages: list[dict[str, str]],
        model_cls: type[M],
        *,
        validate: Callable[[M], None] | None = None,
        feedback: Callable[[str], str] = feedback_message,
        forget_refused: bool = False,
        **overrides: Any,
    ) -> Structured[M]:
        """An answer parsed into `model_cls`.

        The JSON object is taken from the answer as `extract_json` finds it: the bare text, a
        ```json fence, or the first balanced `{...}`. It is checked by
        `model_cls.model_validate`, then by `validate` (which raises ValueError with a message).
        A refused answer is sent back as the assistant's turn followed by `feedback(error)`, at
        most `schema_retries` times; then `LLMAnswerError("invalid_answer")` with the last error.
        Refused answers stay cached by default, so a rebuild asks nothing again and refuses the
        same records for the same reasons (at temperature 0 the endpoint would mostly answer the
        same). With `forget_refused` (a judge, whose inputs rarely repeat and whose refusal would
        otherwise stick for good) a refused answer is dropped from the cache (`forget`), and one
        that came from the cache is asked for afresh once, without spending a schema retry.
        Usage adds up over every answer, refused ones included; a transport `LLMError` carries
        it too.
        """
        convo = list(messages)
        usage = Usage()
        texts: list[str] = []
        error = ""
        attempt = 0
        refreshed = False
        while attempt <= self.cfg.schema_retries:
            try:
                reply = self.chat(convo, **overrides)
            except LLMError as exc:
                exc.usage = usage + exc.usage
                raise
            usage += reply.usage
            texts.append(reply.text)
            try:
                value = model_cls.model_validate(extract_json(reply.text))
                if validate is not None:
                    validate(value)
                return Structured(value, usage, attempt + 1, texts)
            except (NoJSONError, ValidationError, ValueError) as exc:
                error = describe_error(exc)
                if reply.finish_reason == "length":
                    error += f"\n(the answer was cut off at {self.cfg.max_tokens} tokens: be shorter)"
            if forget_refused:
                self.forget(convo, **overrides)
                if reply.cached and not refreshed:
                    refreshed = True
                    continue
            attempt += 1
            convo = [*convo, {"role": "assistant", "content": reply.text},
                     {"role": "user", "content": feedback(error)}]
        self._count(error="invalid_answer")
        raise LLMAnswerError("invalid_answer", error, usage, texts)

    # -- accounting -------------------------------------------------------------------------

    def _count(self, *, error: str | None = None, note: str | None = None, **counts: int) -> None:
        with self._lock:
            self._stats.update(counts)
            if error:
                self._errors[error] += 1
            if note and len(self._notes) < _MAX_NOTES:
                self._notes.append(note)

    def stats(self) -> dict[str, Any]:
        """A snapshot for the build manifest, for this client (this process) only.

        `calls`: answers obtained, `cached_calls` of them from the cache; `requests`: HTTP
        requests sent (retries included); `prompt_tokens`/`completion_tokens`: spent by this
        client (cached answers cost nothing); `errors`: failed calls by reason; `notes`:
        discarded cache entries, JSON-mode fallbacks."""
        with self._lock:
            out: dict[str, Any] = {name: self._stats.get(name, 0) for name in (
                "calls", "cached_calls", "requests", "retries", "prompt_tokens",
                "completion_tokens", "usage_missing", "cache_discarded", "cache_write_failed")}
            out["errors"] = dict(sorted(self._errors.items()))
            out["json_mode"] = self._json_mode
            out["notes"] = list(self._notes)
        return out


def _api_key(cfg: LLMConfig) -> str:
    key = os.environ.get(cfg.api_key_env, "")
    if key:
        return key
    if cfg.params()["base_url_host"] == PUBLIC_OPENAI_HOST:
        raise LLMError("auth", f"environment variable {cfg.api_key_env} is not set; "
                       f"{cfg.base_url} needs an API key")
    return PLACEHOLDER_KEY


def retry_after(headers: Any) -> float | None:
    """Seconds the server asked us to wait: `retry-after-ms`, or `retry-after` in seconds or
    as an HTTP date; None when it gave none (or nonsense)."""
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    return retry_after_seconds(headers.get("retry-after"))


def _message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
    return str(exc.message)[:300]


def _names(exc: openai.APIStatusError, param: str) -> bool:
    return exc.param == param or param in _message(exc) or param in str(exc.body)


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}"[:200] if cause else "no detail"
