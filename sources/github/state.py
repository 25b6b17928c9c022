"""The crawl's progress, kept next to the response cache so a killed crawl resumes.

Per repository item (`owner/name` or `owner/name@ref`): the commit it was pinned to, the
repository facts recorded at pinning (licence, stars, URL), and whether all its records were
yielded. Pinned facts are reused as they are, so a record's provenance is the same on every run
for the same commit.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from .cache import atomic_write

STATE_VERSION = 1


class CrawlState:
    def __init__(self, path: Path):
        self.path = Path(path)
        self.repos: dict[str, dict[str, Any]] = {}
        try:
            data = json.loads(self.path.read_text("utf-8"))
        except (FileNotFoundError, ValueError):
            data = {}
        if isinstance(data, dict) and data.get("version") == STATE_VERSION:
            repos = data.get("repos")
            if isinstance(repos, dict):
                self.repos = {k: v for k, v in repos.items() if isinstance(v, dict)}

    def get(self, key: str) -> dict[str, Any] | None:
        return self.repos.get(key)

    def pin(self, key: str, facts: dict[str, Any]) -> None:
        self.repos[key] = {**facts, "done": False}
        self.save()

    def finish(self, key: str) -> None:
        if key in self.repos and not self.repos[key].get("done"):
            self.repos[key]["done"] = True
            self.save()

    def save(self) -> None:
        data = {"version": STATE_VERSION, "repos": self.repos}
        atomic_write(self.path, json.dumps(data, indent=1, sort_keys=True).encode("utf-8"))
