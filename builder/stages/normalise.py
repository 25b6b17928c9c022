"""Text normalisation for exact dedup: comments dropped, whitespace collapsed."""

from __future__ import annotations

import hashlib
import re

_COMMENT_RE = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_WS_RE = re.compile(r"\s+")


def normalise_text(text: str) -> str:
    return _WS_RE.sub(" ", _COMMENT_RE.sub(" ", text)).strip()


def text_hash(text: str) -> str:
    return hashlib.sha256(normalise_text(text).encode("utf-8", "surrogatepass")).hexdigest()
