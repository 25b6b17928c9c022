"""Where and how to ask an OpenAI-compatible endpoint (OpenAI, vLLM, SGLang, a local server)."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""What the `openai` client uses when neither the config nor `OPENAI_BASE_URL` names one."""

PUBLIC_OPENAI_HOST = "api.openai.com"


def default_cache_dir() -> Path:
    """`$CKD_CACHE_DIR/llm`, `CKD_CACHE_DIR` defaulting to `~/.cache/cuda-kernel-data`."""
    root = os.environ.get("CKD_CACHE_DIR")
    return (Path(root) if root else Path.home() / ".cache" / "cuda-kernel-data") / "llm"


@dataclass(frozen=True)
class LLMConfig:
    """Everything needed to build an `LLMClient`. Plain data, picklable, so Ray can ship it to
    workers; each worker builds its own client from it.

    The API key is never part of the config: it is read from the environment variable named by
    `api_key_env` when a client is created. An endpoint that needs no key (a local vLLM) works
    with the variable unset; only the public OpenAI endpoint refuses to start without it.

    Answers are cached on disk even with `temperature > 0`: with the fixed `seed` the cache is
    what makes a rebuild reproducible (servers do not promise determinism even with a seed).
    Change a field of `params()` (or clear `cache_dir`) to ask again.
    """

    model: str
    base_url: str | None = None
    """None: `$OPENAI_BASE_URL`, else the public OpenAI endpoint."""
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.2
    top_p: float = 1.0
    max_tokens: int = 4096
    seed: int | None = 0
    timeout: float = 120.0
    """Seconds per HTTP request."""
    max_retries: int = 6
    """Transport retries per answer: 429, 500/502/503/504, timeouts, dropped connections."""
    concurrency: int = 8
    """Requests in flight at once through one client (that is, per process)."""
    schema_retries: int = 2
    """Extra answers asked for, with the error fed back, when an answer fails validation."""
    cache_dir: Path | None = None
    """None: `$CKD_CACHE_DIR/llm`."""
    json_mode: bool = True
    """Send `response_format={"type": "json_object"}`. A server that rejects it with a 400 is
    asked again without it, and the client remembers."""

    def __post_init__(self) -> None:
        problems = []
        if not self.model.strip():
            problems.append("model is empty")
        if not self.api_key_env.strip():
            problems.append("api_key_env is empty")
        for name in ("timeout",):
            if not getattr(self, name) > 0:
                problems.append(f"{name} must be > 0 (got {getattr(self, name)})")
        for name in ("max_tokens", "concurrency"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1 (got {getattr(self, name)})")
        for name in ("max_retries", "schema_retries", "temperature"):
            if getattr(self, name) < 0:
                problems.append(f"{name} must be >= 0 (got {getattr(self, name)})")
        if not 0 < self.top_p <= 1:
            problems.append(f"top_p must be in (0, 1] (got {self.top_p})")
        if problems:
            raise ValueError("LLMConfig: " + "; ".join(problems))

    @property
    def effective_base_url(self) -> str:
        return self.base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL

    @property
    def effective_cache_dir(self) -> Path:
        return Path(self.cache_dir) if self.cache_dir is not None else default_cache_dir()

    def resolved(self) -> LLMConfig:
        """A copy with the environment's defaults filled in. Resolve once on the driver before
        shipping the config, so every worker talks to the same endpoint and cache."""
        return dataclasses.replace(
            self, base_url=self.effective_base_url, cache_dir=self.effective_cache_dir
        )

    def params(self) -> dict[str, Any]:
        """Everything an answer depends on: part of the response cache key and of the builder's
        stage cache key. The endpoint counts by host only, so a local server that moves to
        another port keeps its cache."""
        return {
            "model": self.model,
            "base_url_host": urlparse(self.effective_base_url).hostname or "",
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
            "json_mode": self.json_mode,
        }
