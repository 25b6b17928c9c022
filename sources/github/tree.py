"""A repository's git tree at a pinned commit as a `sources.files.Tree` (blobs read lazily)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sources.files import Entry

from .client import GitHubClient, GitHubError

MODE_SYMLINK = "120000"
MODE_SUBMODULE = "160000"


def fetch_tree(client: GitHubClient, owner: str, repo: str, commit: str) -> list[dict[str, Any]]:
    """Every entry of the tree at `commit` (`path`, `mode`, `type`, `sha`, `size`). A recursive
    listing GitHub truncated is completed by walking the subtrees one by one."""
    base = f"repos/{owner}/{repo}/git/trees"
    # A tree addressed by a commit or tree sha never changes: cached means final.
    top = client.get_json(f"{base}/{commit}", {"recursive": "1"}, immutable=True)
    if not isinstance(top, dict) or not isinstance(top.get("tree"), list):
        raise GitHubError(f"{base}/{commit}: the tree response has no 'tree' list")
    if not top.get("truncated"):
        return [e for e in top["tree"] if isinstance(e, dict)]
    entries: list[dict[str, Any]] = []
    pending = [("", top.get("sha") or commit)]
    while pending:
        prefix, sha = pending.pop()
        listing = client.get_json(f"{base}/{sha}", immutable=True)
        for e in listing.get("tree", []):
            if not isinstance(e, dict) or "path" not in e:
                continue
            e = {**e, "path": f"{prefix}{e['path']}"}
            if e.get("type") == "tree":
                pending.append((f"{e['path']}/", e["sha"]))
            entries.append(e)
    return entries


class GitHubTree:
    def __init__(self, client: GitHubClient, owner: str, repo: str, raw: list[dict[str, Any]]):
        self.client = client
        self.owner = owner
        self.repo = repo
        self._entries: dict[str, Entry] = {}
        self._sha: dict[str, str] = {}
        for e in raw:
            path, mode, kind = e.get("path", ""), e.get("mode", ""), e.get("type")
            if not path or kind == "tree":
                continue
            if mode == MODE_SUBMODULE or kind == "commit":
                self._entries[path] = Entry("submodule")
            elif mode == MODE_SYMLINK:
                self._entries[path] = Entry("symlink")
            elif kind == "blob":
                size = e.get("size")
                self._entries[path] = Entry("file", size if isinstance(size, int) else None)
                self._sha[path] = e["sha"]

    def entries(self) -> Mapping[str, Entry]:
        return self._entries

    def read(self, path: str) -> bytes:
        return self.client.get_blob(self.owner, self.repo, self._sha[path])
