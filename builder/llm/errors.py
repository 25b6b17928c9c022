"""Errors of the LLM client, each with a short reason code for the build manifest.

Transport reasons: `rate_limited`, `server_error`, `timeout`, `connection` (retried first),
`bad_request`, `auth`, `not_found`, `http_error` (never retried), `bad_response` (a 200 that is
not a chat completion). `invalid_answer`: the model's answers never passed validation.
"""

from __future__ import annotations

from .reply import Usage


class LLMError(Exception):
    """A call that failed; `usage` is what it cost before failing (retries included)."""

    def __init__(self, reason: str, detail: str = "", usage: Usage | None = None) -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail
        self.usage = usage if usage is not None else Usage()

    def __reduce__(self):  # keyword state survives pickling (Ray ships errors between processes)
        return (self.__class__, (self.reason, self.detail, self.usage))


class LLMAnswerError(LLMError):
    """Every answer to a structured request failed validation; `detail` is the last error and
    `raw_texts` the answers, in order."""

    def __init__(
        self,
        reason: str = "invalid_answer",
        detail: str = "",
        usage: Usage | None = None,
        raw_texts: list[str] | None = None,
    ) -> None:
        super().__init__(reason, detail, usage)
        self.raw_texts = list(raw_texts or [])

    def __reduce__(self):
        return (self.__class__, (self.reason, self.detail, self.usage, self.raw_texts))
