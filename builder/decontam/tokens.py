"""Token streams and n-grams for overlap matching.

Code uses the token idea of near dedup (`builder.stages.dedup`): comments dropped, then
identifiers, numbers and single punctuation characters, so that whitespace, layout and comment
edits do not hide a copy. Prompts use lower-cased words, as n-gram contamination checks on
natural language do (GPT-3, PaLM).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..stages.normalise import normalise_text
from .model import Language

_CODE_TOKEN_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d*)?|\S")
_WORD_RE = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
# Python comments, but not a `#` inside a quoted string on the same line: good enough for
# matching, where a rare miss only shortens a run.
_PY_COMMENT_RE = re.compile(r"""("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')|#[^\n]*""")


def _strip_python_comments(text: str) -> str:
    return _PY_COMMENT_RE.sub(lambda m: m.group(1) or " ", text)


def code_tokens(text: str, language: Language = "cuda") -> list[str]:
    if language == "python":
        return _CODE_TOKEN_RE.findall(_strip_python_comments(text))
    return _CODE_TOKEN_RE.findall(normalise_text(text))


def prompt_tokens(text: str) -> list[str]:
    return _WORD_RE.findall(text.lower())


def ngrams(tokens: list[str], n: int) -> Iterator[str]:
    """Every window of `n` tokens, joined by one space; nothing when the text is shorter."""
    for i in range(len(tokens) - n + 1):
        yield " ".join(tokens[i : i + n])
