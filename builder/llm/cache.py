"""On-disk cache of successful LLM answers, so a rebuild makes no repeat calls.

An entry is `<root>/<key[:2]>/<key>.json`: the sha256 of the body on the first line, then the
body (the answer's text, finish reason and token counts; never the request's headers, so never
the API key). Entries are written to a temporary file and renamed, so concurrent writers and a
`kill -9` leave a whole entry or none. A damaged entry is deleted and reported as a miss, and the
caller asks again. Errors are never cached, and an answer the caller refuses is deleted
(`delete`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from builder.cache import atomic_write_bytes


def response_key(params: dict[str, Any], messages: list[dict[str, str]],
                 overrides: dict[str, Any]) -> str:
    blob = json.dumps(
        {"params": params, "messages": messages, "overrides": overrides},
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[dict[str, Any] | None, str]:
        """(entry, "") on a hit, (None, "") on a miss, (None, why) when a damaged entry was
        thrown away."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None, ""
        except OSError as exc:
            return None, self._discard(path, f"unreadable ({exc.strerror})")
        head, sep, body = data.partition(b"\n")
        if not sep or hashlib.sha256(body).hexdigest().encode() != head:
            return None, self._discard(path, "checksum mismatch")
        try:
            entry = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None, self._discard(path, "not JSON")
        if not isinstance(entry, dict) or not isinstance(entry.get("text"), str):
            return None, self._discard(path, "not an answer")
        return entry, ""

    def put(self, key: str, entry: dict[str, Any]) -> None:
        body = json.dumps(entry, sort_keys=True, ensure_ascii=False).encode("utf-8")
        atomic_write_bytes(self.path(key), hashlib.sha256(body).hexdigest().encode() + b"\n" + body)

    def delete(self, key: str) -> bool:
        """Drop an entry its caller refused; True if there was one."""
        try:
            self.path(key).unlink()
        except FileNotFoundError:
            return False
        return True

    def _discard(self, path: Path, why: str) -> str:
        try:
            path.unlink()
        except OSError:
            pass
        return f"LLM cache entry {path.name[:12]} discarded: {why}"
