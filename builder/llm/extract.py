"""Find the JSON object in a model's answer, and say concisely why an answer was refused."""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*(?:\r\n?|\n)(.*?)```", re.DOTALL)
_MAX_ERRORS = 12
_MAX_FEEDBACK = 2000
_MAX_STARTS = 50
"""Opening braces tried by the balanced scan: each try may read to the end of the text, and an
answer full of CUDA code has thousands of braces."""


class NoJSONError(ValueError):
    pass


def extract_json(text: str) -> dict[str, Any]:
    """The JSON object in `text`, tried in this order: the whole text (a bare object), the
    contents of a ```json (or unlabelled) fence, then the first balanced `{...}` that parses.
    Raises `NoJSONError` saying what was wrong: the parser's message when the text looks like
    JSON, else that no object was found."""
    stripped = text.strip()
    first_error = ""
    if stripped.startswith(("{", "[")):
        try:
            return _as_object(json.loads(stripped))
        except json.JSONDecodeError as exc:
            first_error = f"the answer is not valid JSON: {exc}"
    fences = sorted(_FENCE.finditer(text), key=lambda m: m.group(1).lower() != "json")
    for m in fences:
        try:
            return _as_object(json.loads(m.group(2)))
        except json.JSONDecodeError as exc:
            first_error = first_error or f"the fenced block is not valid JSON: {exc}"
    for candidate in _balanced_objects(text):
        try:
            return _as_object(json.loads(candidate))
        except (json.JSONDecodeError, NoJSONError):
            continue
    if first_error:
        raise NoJSONError(first_error)
    preview = stripped[:80].replace("\n", " ")
    raise NoJSONError(f"no JSON object found in the answer (it starts {preview!r})")


def _as_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise NoJSONError(f"expected a JSON object, got a JSON {type(value).__name__}")
    return value


def _balanced_objects(text: str):
    """Each `{...}` with balanced braces outside strings, in order of its opening brace."""
    start = text.find("{")
    for _ in range(_MAX_STARTS):
        if start == -1:
            return
        depth, in_string, escaped = 0, False, False
        for i in range(start, len(text)):
            c = text[i]
            if in_string:
                if escaped:
                    escaped = False
                elif c == "\\":
                    escaped = True
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
            elif c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
                if depth == 0:
                    yield text[start : i + 1]
                    break
        start = text.find("{", start + 1)


def describe_error(exc: Exception) -> str:
    """A short message for the model: pydantic's error list (location, message, the offending
    input cut short), at most a dozen entries and 2000 characters."""
    if isinstance(exc, ValidationError):
        errors = exc.errors(include_url=False)
        lines = [f"{len(errors)} validation error(s) for {exc.title}:"]
        for err in errors[:_MAX_ERRORS]:
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
            line = f"- {loc}: {err.get('msg', '')}"
            if err.get("type") != "missing":
                shown = repr(err.get("input"))
                line += f" (got {shown[:80] + '...' if len(shown) > 80 else shown})"
            lines.append(line)
        if len(errors) > _MAX_ERRORS:
            lines.append(f"- ... and {len(errors) - _MAX_ERRORS} more")
        text = "\n".join(lines)
    else:
        text = str(exc) or type(exc).__name__
    return text if len(text) <= _MAX_FEEDBACK else text[: _MAX_FEEDBACK - 15] + " ... (cut)"
