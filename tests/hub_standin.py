"""A Hugging Face Hub stand-in on loopback for uploads made by the real `huggingface_hub`
client: repository and branch creation, pre-upload, the LFS batch API with basic transfer
(PUT, then verify), the NDJSON commit endpoint, the tree listing, and the card check the
client runs before committing a README.md (YAML front matter a mapping; dataset `configs`
well formed), and the repository's info (its visibility). It keeps each branch's
files, so tests assert what a repository holds after a commit, and logs every request.

Uploads through Xet storage (the client's default when `hf_xet` is installed) speak a
chunk-level protocol to a separate CAS server; tests turn Xet off (`no_xet`) so the client
takes the LFS path this server speaks.
"""

from __future__ import annotations

import base64
import fnmatch
import hashlib
import json
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

GITATTRIBUTES = b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"
REPO = r"(?P<type>models|datasets|spaces)/(?P<repo>[^/]+/[^/]+)"


@dataclass
class Request:
    method: str
    path: str
    authorization: str | None
    body: bytes


@dataclass
class Commit:
    repo_type: str
    repo_id: str
    branch: str
    summary: str
    added: dict[str, bytes]
    deleted: list[str]
    lfs_paths: list[str]


@dataclass
class Repo:
    private: bool | None
    branches: dict[str, dict[str, bytes]] = field(default_factory=dict)


def card_problems(card: str, repo_type: str | None) -> list[str]:
    """What the Hub would refuse in a README.md's metadata (the subset a dataset card here
    can get wrong)."""
    import yaml

    if not card.startswith("---\n"):
        return []  # no metadata is allowed (the Hub only warns)
    end = card.find("\n---\n", 4)
    if end < 0:
        return ["YAML front matter is not closed by a '---' line"]
    try:
        meta = yaml.safe_load(card[4:end])
    except yaml.YAMLError as exc:
        return [f"YAML does not parse: {exc}"]
    if not isinstance(meta, dict):
        return ["YAML front matter must be a mapping"]
    problems = []
    for cfg in meta.get("configs", []) if repo_type == "dataset" else []:
        files = cfg.get("data_files") if isinstance(cfg, dict) else None
        if not isinstance(cfg, dict) or not isinstance(cfg.get("config_name"), str):
            problems.append("configs: every entry needs a config_name")
        elif not isinstance(files, str | list) or (isinstance(files, list) and not all(
                isinstance(f, dict) and {"split", "path"} <= f.keys() for f in files)):
            problems.append(f"configs.{cfg['config_name']}.data_files: expected a path or a "
                            "list of {split, path}")
    return problems


def _oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class HubStandIn:
    """`lfs_patterns`: paths (fnmatch) the pre-upload answer sends through LFS, as the Hub
    does for the patterns of a repository's .gitattributes; everything else goes inline."""

    def __init__(self, *, lfs_patterns: Iterable[str] = (), fail_create: int | None = None):
        self.lfs_patterns = tuple(lfs_patterns)
        self.fail_create = fail_create
        self.requests: list[Request] = []
        self.repos: dict[tuple[str, str], Repo] = {}
        self.lfs_objects: dict[str, bytes] = {}
        self.commits: list[Commit] = []
        self.validated_cards: list[str] = []
        self._lock = threading.Lock()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self.server.server_port}"

    # what tests read
    @property
    def files(self) -> dict[str, bytes]:
        """The files of the only repository's main branch (the common single-upload case)."""
        (repo,) = self.repos.values()
        return {k: v for k, v in repo.branches["main"].items() if k != ".gitattributes"}

    def branch(self, repo_type: str, repo_id: str, branch: str = "main") -> dict[str, bytes]:
        return self.repos[(repo_type, repo_id)].branches[branch]

    def posts(self) -> list[Request]:
        return [r for r in self.requests if r.method == "POST"]

    def __enter__(self) -> HubStandIn:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # the protocol
    def _create_repo(self, body: dict) -> tuple[int, object, dict]:
        if self.fail_create:
            return self.fail_create, {"error": "You are not allowed to create this repo"}, {}
        repo_type = body.get("type") or "model"
        repo_id = f"{body['organization']}/{body['name']}"
        key = (f"{repo_type}s", repo_id)
        prefix = "" if repo_type == "model" else f"{repo_type}s/"
        if key in self.repos:
            # the client reads the url from this answer too (create_repo(exist_ok=True))
            return 409, {"error": f"You already created this {repo_type} repo",
                         "url": f"{self.url}/{prefix}{repo_id}"}, {}
        self.repos[key] = Repo(private=body.get("visibility") == "private" or body.get("private"),
                               branches={"main": {".gitattributes": GITATTRIBUTES}})
        return 200, {"url": f"{self.url}/{prefix}{repo_id}"}, {}

    def _repo(self, m: re.Match) -> Repo | None:
        return self.repos.get((m["type"], m["repo"]))

    def _create_branch(self, m: re.Match, body: dict) -> tuple[int, object, dict]:
        repo = self._repo(m)
        if repo is None:
            return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
        name = unquote(m["rev"])
        if name in repo.branches:
            return 409, {"error": f"Reference refs/heads/{name} already exists"}, {}
        start = body.get("startingPoint") or "main"
        repo.branches[name] = dict(repo.branches[start])
        return 200, {}, {}

    def _preupload(self, m: re.Match, body: dict) -> tuple[int, object, dict]:
        if self._repo(m) is None:
            return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
        files = [{"path": f["path"], "shouldIgnore": False,
                  "uploadMode": "lfs" if any(fnmatch.fnmatch(f["path"], p)
                                             for p in self.lfs_patterns) else "regular"}
                 for f in body["files"]]
        return 200, {"files": files}, {}

    def _lfs_batch(self, body: dict) -> tuple[int, object, dict]:
        if body.get("operation") != "upload" or "basic" not in body.get("transfers", ["basic"]):
            return 422, {"message": "only basic uploads are served"}, {}
        objects = []
        for o in body["objects"]:
            entry: dict = {"oid": o["oid"], "size": o["size"]}
            if o["oid"] not in self.lfs_objects:
                entry["actions"] = {"upload": {"href": f"{self.url}/lfs/{o['oid']}"},
                                    "verify": {"href": f"{self.url}/lfs/{o['oid']}/verify"}}
            objects.append(entry)
        return 200, {"transfer": "basic", "objects": objects}, {}

    def _lfs_put(self, oid: str, data: bytes) -> tuple[int, object, dict]:
        if hashlib.sha256(data).hexdigest() != oid:
            return 400, {"message": "content does not match its sha256"}, {}
        self.lfs_objects[oid] = data
        return 200, {}, {}

    def _lfs_verify(self, oid: str, body: dict) -> tuple[int, object, dict]:
        data = self.lfs_objects.get(oid)
        if data is None or len(data) != body.get("size"):
            return 404, {"message": f"object {oid} not uploaded"}, {}
        return 200, {}, {}

    def _commit(self, m: re.Match, body: bytes) -> tuple[int, object, dict]:
        repo = self._repo(m)
        branch = unquote(m["rev"])
        if repo is None or branch not in repo.branches:
            return 404, {"error": f"revision {branch} not found"}, {"X-Error-Code": "RevisionNotFound"}
        files = dict(repo.branches[branch])
        commit = Commit(m["type"], m["repo"], branch, "", {}, [], [])
        for line in body.decode().splitlines():
            op = json.loads(line)
            key, v = op["key"], op["value"]
            if key == "header":
                commit.summary = v["summary"]
            elif key == "file":
                files[v["path"]] = commit.added[v["path"]] = base64.b64decode(v["content"])
            elif key == "lfsFile":
                data = self.lfs_objects.get(v["oid"])
                if data is None:
                    return 422, {"error": f"LFS object of {v['path']} was never uploaded"}, {}
                files[v["path"]] = commit.added[v["path"]] = data
                commit.lfs_paths.append(v["path"])
            elif key == "deletedFile":
                if files.pop(v["path"], None) is None:
                    return 422, {"error": f"cannot delete {v['path']}: no such file"}, {}
                commit.deleted.append(v["path"])
            elif key == "deletedFolder":
                gone = [p for p in files if p.startswith(v["path"].rstrip("/") + "/")]
                for p in gone:
                    del files[p]
                commit.deleted += gone
            else:
                return 422, {"error": f"unknown operation {key!r}"}, {}
        repo.branches[branch] = files
        self.commits.append(commit)
        oid = hashlib.sha1(body).hexdigest()
        prefix = "" if m["type"] == "models" else f"{m['type']}/"
        return 200, {"commitUrl": f"{self.url}/{prefix}{m['repo']}/commit/{oid}",
                     "commitOid": oid, "pullRequestUrl": None}, {}

    def _repo_info(self, m: re.Match) -> tuple[int, object, dict]:
        repo = self._repo(m)
        if repo is None:
            return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
        return 200, {"id": m["repo"], "private": bool(repo.private), "sha": "0" * 40}, {}

    def _tree(self, m: re.Match, query: dict) -> tuple[int, object, dict]:
        repo = self._repo(m)
        branch = unquote(m["rev"])
        if repo is None:
            return 404, {"error": "Repository not found"}, {"X-Error-Code": "RepoNotFound"}
        if branch not in repo.branches:
            return 404, {"error": "Revision not found"}, {"X-Error-Code": "RevisionNotFound"}
        base = (m["path"] or "").strip("/")
        recursive = query.get("recursive", ["false"])[0].lower() == "true"
        entries: dict[str, dict] = {}
        for path, data in sorted(repo.branches[branch].items()):
            if base and not path.startswith(base + "/"):
                continue
            rest = path[len(base) + 1:] if base else path
            if "/" in rest and not recursive:
                folder = f"{base}/{rest.split('/')[0]}" if base else rest.split("/")[0]
                entries[folder] = {"type": "directory", "oid": "0" * 40, "size": 0, "path": folder}
                continue
            entries[path] = {"type": "file", "oid": _oid(data), "size": len(data), "path": path}
        if base and not entries:
            return 404, {"error": "Entry not found"}, {"X-Error-Code": "EntryNotFound"}
        return 200, list(entries.values()), {}

    def _validate_yaml(self, body: dict) -> tuple[int, object, dict]:
        self.validated_cards.append(body["content"])
        errors = [{"message": m} for m in card_problems(body["content"], body.get("repoType"))]
        return (400 if errors else 200), {"errors": errors, "warnings": []}, {}

    def _route(self, method: str, path: str, body: bytes) -> tuple[int, object, dict]:
        parts = urlsplit(path)
        route, query = parts.path, parse_qs(parts.query)
        with self._lock:
            if method == "POST" and route == "/api/validate-yaml":
                return self._validate_yaml(json.loads(body))
            if method == "POST" and route == "/api/repos/create":
                return self._create_repo(json.loads(body))
            if m := re.fullmatch(rf"/api/{REPO}/branch/(?P<rev>.+)", route):
                if method == "POST":
                    return self._create_branch(m, json.loads(body or b"{}"))
            if m := re.fullmatch(rf"/api/{REPO}/preupload/(?P<rev>.+)", route):
                return self._preupload(m, json.loads(body))
            if m := re.fullmatch(rf"/api/{REPO}/commit/(?P<rev>.+)", route):
                return self._commit(m, body)
            if (m := re.fullmatch(rf"/api/{REPO}", route)) and method == "GET":
                return self._repo_info(m)
            if m := re.fullmatch(rf"/api/{REPO}/tree/(?P<rev>[^/]+)(?:/(?P<path>.*))?", route):
                return self._tree(m, query)
            if re.fullmatch(r"/(?:datasets/|spaces/)?[^/]+/[^/]+\.git/info/lfs/objects/batch",
                            route) and method == "POST":
                return self._lfs_batch(json.loads(body))
            if m := re.fullmatch(r"/lfs/(?P<oid>[0-9a-f]{64})", route):
                if method == "PUT":
                    return self._lfs_put(m["oid"], body)
            if m := re.fullmatch(r"/lfs/(?P<oid>[0-9a-f]{64})/verify", route):
                return self._lfs_verify(m["oid"], json.loads(body))
        return 404, {"error": f"{method} {route} is not served by the stand-in"}, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def _body(self) -> bytes:
                if self.headers.get("transfer-encoding", "").lower() == "chunked":
                    out = bytearray()
                    while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
                        out += self.rfile.read(size)
                        self.rfile.readline()
                    self.rfile.readline()
                    return bytes(out)
                return self.rfile.read(int(self.headers.get("content-length") or 0))

            def _serve(self) -> None:
                body = self._body()
                stand_in.requests.append(
                    Request(self.command, self.path, self.headers.get("authorization"), body))
                code, obj, headers = stand_in._route(self.command, self.path, body)
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for k, v in headers.items():
                    self.send_header(k, v)
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _serve

        return Handler
