"""A small GitHub REST client on `requests`: auth, rate limits, retries, conditional GETs.

Primary limit: every response's `X-RateLimit-Remaining`/`X-RateLimit-Reset` are remembered;
with none left the client waits until the reset (before the request, or after a 403/429 that
says so), up to `max_wait` seconds, else raises `RateLimitError`. Secondary limit: a 403/429
with `Retry-After` waits that long and retries. 5xx, connection errors and timeouts back off
exponentially with jitter. All of it is bounded by `max_retries`; `sleep` and `clock` are
injectable so tests never really wait.
"""

from __future__ import annotations

import base64
import hashlib
import os
import random
import time
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlencode

import requests

from .cache import ResponseCache

DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "cuda-kernel-data-crawler/0.1 (+https://github.com)"


class GitHubError(RuntimeError):
    """A request GitHub (or the network) would not serve; names the URL and the reason."""

    def __init__(self, message: str, status: int | None = None, url: str = ""):
        super().__init__(message)
        self.status = status
        self.url = url


class RateLimitError(GitHubError):
    """The primary rate limit is exhausted and its reset is further away than `max_wait`."""


def git_blob_sha(data: bytes) -> str:
    """The git object id of a blob with these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def token_from_env(token_env: str | None = "GITHUB_TOKEN") -> str | None:
    for name in (token_env or "GITHUB_TOKEN", "GITHUB_TOKEN", "GH_TOKEN"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


class GitHubClient:
    """GET JSON and blobs from the REST API at `api_url`, cached in `cache` when given."""

    def __init__(
        self,
        api_url: str | None = None,
        token: str | None = None,
        cache: ResponseCache | None = None,
        *,
        session: requests.Session | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        max_wait: float = 3600.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        timeout: float = 30.0,
        rng: random.Random | None = None,
    ):
        self.api_url = (api_url or os.environ.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
        self.cache = cache
        self.session = session or requests.Session()
        self.session.headers.update({
            "Accept": "application/vnd.github+json",
            "X-GitHub-Api-Version": "2022-11-28",
            "User-Agent": USER_AGENT,
        })
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        self.sleep = sleep
        self.clock = clock
        self.max_wait = max_wait
        self.max_retries = max_retries
        self.backoff = backoff
        self.timeout = timeout
        self.rng = rng or random.Random()
        self.remaining: int | None = None
        self.reset_at: float | None = None
        self.requests_made = 0
        self.not_modified = 0

    # -------------------------------------------------------------------- public

    def url(self, path: str, params: Mapping[str, Any] | None = None) -> str:
        query = f"?{urlencode(sorted(params.items()))}" if params else ""
        return f"{self.api_url}/{path.lstrip('/')}{query}"

    def get_json(
        self, path: str, params: Mapping[str, Any] | None = None, *, immutable: bool = False
    ) -> Any:
        """The parsed JSON at `path`. With a cache, the stored ETag is sent and a 304 reuses
        the stored body; `immutable` (a tree at a commit sha) reuses it without asking."""
        url = self.url(path, params)
        stored = self.cache.get(url) if self.cache else None
        if stored is not None and immutable:
            return stored[1]
        headers = {"If-None-Match": stored[0]} if stored and stored[0] else {}
        response = self._send(url, headers)
        if response.status_code == 304 and stored is not None:
            self.not_modified += 1
            return stored[1]
        body = self._json(response, url)
        if self.cache is not None:
            self.cache.put(url, response.headers.get("ETag"), body)
        return body

    def get_blob(self, owner: str, repo: str, sha: str) -> bytes:
        """The bytes of git blob `sha`; a blob in the cache is never requested again."""
        if self.cache is not None:
            data = self.cache.get_blob(sha)
            if data is not None:
                return data
        url = self.url(f"repos/{owner}/{repo}/git/blobs/{sha}")
        body = self._json(self._send(url, {}), url)
        if body.get("encoding") != "base64":
            raise GitHubError(f"{url}: blob encoding {body.get('encoding')!r}, expected base64",
                              url=url)
        data = base64.b64decode(body.get("content", ""))
        if git_blob_sha(data) != sha.lower():
            raise GitHubError(f"{url}: content does not hash to blob {sha}", url=url)
        if self.cache is not None:
            self.cache.put_blob(sha, data)
        return data

    # -------------------------------------------------------------------- transport

    def _json(self, response: requests.Response, url: str) -> Any:
        try:
            return response.json()
        except ValueError:
            raise GitHubError(
                f"{url}: HTTP {response.status_code} with a body that is not JSON",
                response.status_code, url,
            ) from None

    def _wait_for_reset(self, url: str) -> None:
        wait = max(0.0, (self.reset_at or 0.0) - self.clock()) + 1.0
        if wait > self.max_wait:
            raise RateLimitError(
                f"{url}: GitHub rate limit exhausted; it resets in {wait:.0f} s, more than "
                f"max_wait {self.max_wait:.0f} s (set GITHUB_TOKEN for a higher limit)",
                403, url,
            )
        self.sleep(wait)
        self.remaining = None

    def _note_limits(self, response: requests.Response) -> None:
        remaining = response.headers.get("X-RateLimit-Remaining")
        reset = response.headers.get("X-RateLimit-Reset")
        try:
            if remaining is not None:
                self.remaining = int(remaining)
            if reset is not None:
                self.reset_at = float(reset)
        except ValueError:
            pass  # a proxy's odd header must not break the crawl

    def _backoff(self, attempt: int) -> float:
        base = self.backoff * (2 ** attempt)
        return base + self.rng.uniform(0, base)

    def _send(self, url: str, headers: Mapping[str, str]) -> requests.Response:
        attempt = 0
        while True:
            if self.remaining == 0 and self.reset_at is not None and self.reset_at > self.clock():
                self._wait_for_reset(url)
            try:
                self.requests_made += 1
                response = self.session.get(url, headers=dict(headers), timeout=self.timeout)
            except (requests.ConnectionError, requests.Timeout) as exc:
                if attempt >= self.max_retries:
                    raise GitHubError(
                        f"{url}: {type(exc).__name__} after {attempt + 1} attempts: {exc}",
                        None, url,
                    ) from exc
                self.sleep(self._backoff(attempt))
                attempt += 1
                continue
            self._note_limits(response)
            status = response.status_code
            if status in (200, 304):
                return response
            if status in (403, 429) and attempt < self.max_retries:
                retry_after = response.headers.get("Retry-After")
                if retry_after is not None:
                    try:
                        delay = max(0.0, float(retry_after))
                    except ValueError:
                        delay = self._backoff(attempt)
                    if delay > self.max_wait:
                        raise RateLimitError(
                            f"{url}: secondary rate limit asks to wait {delay:.0f} s, more "
                            f"than max_wait {self.max_wait:.0f} s", status, url,
                        )
                    self.sleep(delay)
                    attempt += 1
                    continue
                if response.headers.get("X-RateLimit-Remaining") == "0":
                    self._wait_for_reset(url)
                    attempt += 1
                    continue
            if status >= 500 and attempt < self.max_retries:
                self.sleep(self._backoff(attempt))
                attempt += 1
                continue
            raise GitHubError(f"{url}: HTTP {status}: {_message(response)}", status, url)


def _message(response: requests.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text[:200].strip() or response.reason or ""
    if isinstance(body, dict) and body.get("message"):
        return str(body["message"])
    return response.reason or ""
