"""LLM synthesis: a client for any OpenAI-compatible endpoint (bounded concurrency, retries that
honour Retry-After, an on-disk answer cache, validated structured answers)."""

from .client import LLMClient
from .config import LLMConfig
from .errors import LLMAnswerError, LLMError
from .reply import Reply, Structured, Usage

__all__ = ["LLMAnswerError", "LLMClient", "LLMConfig", "LLMError", "Reply", "Structured", "Usage"]
