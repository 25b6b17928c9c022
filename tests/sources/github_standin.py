"""A GitHub REST API stand-in on 127.0.0.1 for the GitHub source's tests.

It serves repositories (real ones from a `repo.json` + `files/` folder, or synthetic ones a
test builds) through the endpoints the crawler uses, with GitHub's rate-limit headers, ETags
and 304s, real git blob shas, and programmable faults (secondary limit, primary-limit
exhaustion, 5xx, a request that hangs). Every request is logged for assertions.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


def git_sha(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


@dataclass(frozen=True)
class Symlink:
    """A symbolic link entry (git mode 120000); its blob is the target path."""

    target: str


@dataclass
class StandinRepo:
    full_name: str
    files: dict[str, bytes | Symlink]
    license: str | None = "MIT"
    stars: int = 0
    default_branch: str = "main"
    commit: str = ""
    description: str = ""
    language: str = "Cuda"
    submodules: dict[str, str] = field(default_factory=dict)
    """path -> commit sha of a submodule (git mode 160000)."""

    def __post_init__(self) -> None:
        self.blobs: dict[str, bytes] = {}
        self.trees: dict[str, list[dict[str, Any]]] = {}
        self.flat: list[dict[str, Any]] = []
        self.root_tree = self._build_tree("")
        if not self.commit:
            self.commit = git_sha("commit", f"{self.full_name}\n{self.root_tree}".encode())

    @property
    def html_url(self) -> str:
        return f"https://github.com/{self.full_name}"

    def _build_tree(self, prefix: str) -> str:
        """The sha of the folder `prefix` (a stand-in hash of its listing); fills `trees`,
        `flat` (the recursive listing, parents before children) and `blobs`."""
        children: dict[str, str] = {}  # name -> "blob" | "link" | "tree" | "commit"
        items = list(self.files) + list(self.submodules)
        for path in items:
            if not path.startswith(prefix):
                continue
            rest = path[len(prefix):]
            head, sep, _ = rest.partition("/")
            if sep:
                children[head] = "tree"
            elif path in self.submodules:
                children[head] = "commit"
            else:
                children[head] = "link" if isinstance(self.files[path], Symlink) else "blob"
        listing: list[dict[str, Any]] = []
        for name in sorted(children):
            path = prefix + name
            kind = children[name]
            if kind == "tree":
                sha = self._build_tree(path + "/")
                listing.append({"path": name, "mode": "040000", "type": "tree", "sha": sha})
            elif kind == "commit":
                listing.append({"path": name, "mode": "160000", "type": "commit",
                                "sha": self.submodules[path]})
            else:
                content = self.files[path]
                data = content.target.encode() if isinstance(content, Symlink) else content
                sha = git_sha("blob", data)
                self.blobs[sha] = data
                mode = "120000" if kind == "link" else "100644"
                listing.append({"path": name, "mode": mode, "type": "blob", "sha": sha,
                                "size": len(data)})
        sha = git_sha("tree", json.dumps(listing, sort_keys=True).encode())
        self.trees[sha] = listing
        if prefix == "":
            self.flat = self._flatten("", sha)
        return sha

    def _flatten(self, prefix: str, sha: str) -> list[dict[str, Any]]:
        out = []
        for e in self.trees[sha]:
            out.append({**e, "path": prefix + e["path"]})
            if e["type"] == "tree":
                out += self._flatten(prefix + e["path"] + "/", e["sha"])
        return out

    def api_json(self) -> dict[str, Any]:
        owner, name = self.full_name.split("/")
        lic = None
        if self.license is not None:
            lic = {"key": self.license.lower(), "name": self.license, "spdx_id": self.license}
        return {
            "id": int(self.commit[:8], 16), "name": name, "full_name": self.full_name,
            "owner": {"login": owner}, "html_url": self.html_url,
            "description": self.description, "default_branch": self.default_branch,
            "stargazers_count": self.stars, "language": self.language, "license": lic,
        }


def load_repo_folder(folder: Path, stars: int = 0) -> StandinRepo:
    """A real repository snapshot: `repo.json` and its `files/` at their repository paths."""
    info = json.loads((folder / "repo.json").read_text())
    root = folder / "files"
    files = {p.relative_to(root).as_posix(): p.read_bytes()
             for p in sorted(root.rglob("*")) if p.is_file()}
    return StandinRepo(
        full_name=info["full_name"], files=dict(files),
        license=(info.get("license") or {}).get("spdx_id"), stars=stars,
        default_branch=info["default_branch"], commit=info["commit"],
        description=info.get("description", ""),
    )


@dataclass
class Fault:
    kind: str
    """`secondary` (403 + Retry-After), `primary` (403, no requests left until a reset),
    `server` (500), `hang` (the request blocks until `release()`)."""
    match: Callable[[str], bool]
    times: int = 1
    retry_after: float = 1.0
    reset_in: float = 1.5


@dataclass
class LoggedRequest:
    path: str
    query: dict[str, str]
    status: int
    conditional: bool
    at: float
    authorization: str | None = None


class GitHubStandin:
    """Start with `with GitHubStandin(...) as gh:`; `gh.url` is the API base URL."""

    LIMIT = 5000

    def __init__(self, clock: Callable[[], float] = time.time, truncate_trees: bool = False):
        self.clock = clock
        self.truncate_trees = truncate_trees
        self.repos: dict[str, StandinRepo] = {}
        self.faults: list[Fault] = []
        self.log: list[LoggedRequest] = []
        self.remaining = self.LIMIT
        self.reset_at = clock() + 3600
        self._exhausted_until: float | None = None
        self._lock = threading.Lock()
        self._released = threading.Event()
        self.hanging = threading.Event()
        self._hung = 0
        self._hang_done = threading.Condition()
        self._server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------ set-up

    def add(self, repo: StandinRepo) -> StandinRepo:
        self.repos[repo.full_name.lower()] = repo
        return repo

    def add_folder(self, folder: Path, stars: int = 0) -> StandinRepo:
        return self.add(load_repo_folder(folder, stars))

    def fail(self, kind: str, match: str | Callable[[str], bool], times: int = 1,
             **kw: float) -> Fault:
        pred = match if callable(match) else (lambda p, s=match: s in p)
        fault = Fault(kind, pred, times, **kw)
        with self._lock:
            self.faults.append(fault)
        return fault

    def release(self) -> None:
        """Let hung requests go (they then answer 500) and wait until they are logged, so
        the log of what follows holds none of them."""
        self._released.set()
        with self._hang_done:
            self._hang_done.wait_for(lambda: self._hung == 0, timeout=30)

    def blob_requests(self) -> list[str]:
        return [r.path.rsplit("/", 1)[1] for r in self.log if "/git/blobs/" in r.path]

    def served(self, status: int = 200) -> list[LoggedRequest]:
        return [r for r in self.log if r.status == status]

    # ------------------------------------------------------------ server

    def __enter__(self) -> GitHubStandin:
        standin = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                standin._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client killed mid-request (the resume tests) is expected, not news

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05},
                         daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._released.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def _rate_headers(self) -> dict[str, str]:
        now = self.clock()
        if self._exhausted_until is not None:
            if now >= self._exhausted_until:
                self._exhausted_until = None
                self.remaining = self.LIMIT
                self.reset_at = now + 3600
        return {
            "X-RateLimit-Limit": str(self.LIMIT),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(int(self.reset_at)),
            "X-RateLimit-Used": str(self.LIMIT - self.remaining),
            "X-RateLimit-Resource": "core",
        }

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        parts = urlsplit(h.path)
        path = unquote(parts.path)
        query = {k: v[-1] for k, v in parse_qs(parts.query).items()}
        if_none_match = h.headers.get("If-None-Match")
        fault = None
        with self._lock:
            for f in self.faults:
                if f.times > 0 and f.match(path):
                    f.times -= 1
                    fault = f
                    break
            if fault is not None and fault.kind == "primary":
                self.remaining = 0
                self.reset_at = self.clock() + fault.reset_in
                self._exhausted_until = self.reset_at
        if fault is not None and fault.kind == "hang":
            with self._hang_done:
                self._hung += 1
            self.hanging.set()
            self._released.wait(60)
            try:
                self._reply(h, path, query, if_none_match, 500, {"message": "released"})
            finally:
                with self._hang_done:
                    self._hung -= 1
                    self._hang_done.notify_all()
            return
        with self._lock:
            limits = self._rate_headers()
        if fault is not None and fault.kind == "secondary":
            self._reply(h, path, query, if_none_match, 403, {
                "message": "You have exceeded a secondary rate limit. Please wait a few minutes."
            }, {"Retry-After": f"{fault.retry_after:g}"})
            return
        if fault is not None and fault.kind == "server":
            self._reply(h, path, query, if_none_match, 500, {"message": "Server Error"})
            return
        if limits["X-RateLimit-Remaining"] == "0":
            self._reply(h, path, query, if_none_match, 403, {
                "message": "API rate limit exceeded for 127.0.0.1."})
            return
        status, body = self._route(path, query)
        self._reply(h, path, query, if_none_match, status, body)

    def _reply(self, h: BaseHTTPRequestHandler, path: str, query: dict[str, str],
               if_none_match: str | None, status: int, body: Any,
               extra: dict[str, str] | None = None) -> None:
        data = json.dumps(body, sort_keys=True).encode()
        etag = f'"{hashlib.sha1(data).hexdigest()}"'
        with self._lock:
            if status == 200 and if_none_match == etag:
                status = 304  # GitHub does not count a 304 against the limit
            elif status == 200:
                self.remaining = max(0, self.remaining - 1)
            headers = self._rate_headers()
            self.log.append(LoggedRequest(path, query, status, if_none_match is not None,
                                          self.clock(), h.headers.get("Authorization")))
        h.send_response(status)
        for k, v in {**headers, **(extra or {})}.items():
            h.send_header(k, v)
        if status == 304:
            h.send_header("ETag", etag)
            h.end_headers()
            return
        h.send_header("Content-Type", "application/json; charset=utf-8")
        if status == 200:
            h.send_header("ETag", etag)
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    # ------------------------------------------------------------ API

    def _route(self, path: str, query: dict[str, str]) -> tuple[int, Any]:
        seg = [s for s in path.split("/") if s]
        if seg == ["search", "repositories"]:
            return self._search(query)
        if len(seg) < 3 or seg[0] != "repos":
            return 404, {"message": "Not Found"}
        repo = self.repos.get(f"{seg[1]}/{seg[2]}".lower())
        if repo is None:
            return 404, {"message": "Not Found"}
        rest = seg[3:]
        if not rest:
            return 200, repo.api_json()
        if rest[0] == "commits" and len(rest) >= 2:
            ref = "/".join(rest[1:])
            if ref not in (repo.default_branch, repo.commit, "HEAD"):
                return 422, {"message": f"No commit found for SHA: {ref}"}
            return 200, {"sha": repo.commit, "commit": {"tree": {"sha": repo.root_tree}}}
        if rest[:2] == ["git", "trees"] and len(rest) == 3:
            return self._tree(repo, rest[2], query.get("recursive") in ("1", "true"))
        if rest[:2] == ["git", "blobs"] and len(rest) == 3:
            data = repo.blobs.get(rest[2])
            if data is None:
                return 404, {"message": "Not Found"}
            b64 = base64.b64encode(data).decode()
            # GitHub wraps base64 content at 60 characters.
            wrapped = "\n".join(b64[i:i + 60] for i in range(0, len(b64), 60))
            return 200, {"sha": rest[2], "size": len(data), "encoding": "base64",
                         "content": wrapped + "\n"}
        return 404, {"message": "Not Found"}

    def _tree(self, repo: StandinRepo, sha: str, recursive: bool) -> tuple[int, Any]:
        if sha in (repo.commit, repo.default_branch):
            sha = repo.root_tree
        listing = repo.trees.get(sha)
        if listing is None:
            return 404, {"message": "Not Found"}
        if recursive and sha == repo.root_tree and not self.truncate_trees:
            return 200, {"sha": sha, "tree": repo.flat, "truncated": False}
        if recursive and sha == repo.root_tree:
            return 200, {"sha": sha, "tree": listing, "truncated": True}
        return 200, {"sha": sha, "tree": listing, "truncated": False}

    def _search(self, query: dict[str, str]) -> tuple[int, Any]:
        words, language = [], None
        for token in query.get("q", "").split():
            if token.lower().startswith("language:"):
                language = token.split(":", 1)[1].lower()
            else:
                words.append(token.lower())
        hits = []
        for repo in self.repos.values():
            text = f"{repo.full_name} {repo.description}".lower()
            if language and repo.language.lower() != language:
                continue
            if all(w in text for w in words):
                hits.append(repo)
        if query.get("sort") == "stars":
            hits.sort(key=lambda r: (-r.stars, r.full_name))
        per_page = int(query.get("per_page", 30))
        page = int(query.get("page", 1))
        items = hits[(page - 1) * per_page: page * per_page]
        return 200, {"total_count": len(hits), "incomplete_results": False,
                     "items": [r.api_json() for r in items]}
