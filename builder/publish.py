"""`python -m builder publish`: push a built dataset folder to the Hugging Face Hub.

The file list comes from the build's `manifest.json` (its shards, with their sha256), plus the
card and the manifest, so the stage cache, timings and anything else the builder keeps in the
folder never leave the machine, and a folder edited after its build is refused rather than
published with shards the card does not describe. Everything goes in one commit; shards of an
earlier publish that this build does not produce are deleted in that same commit, because the
card's `data/<split>-*` globs would otherwise load them too.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pydantic import ValidationError

from schemas import BuildManifest

CARD = "README.md"
MANIFEST = "manifest.json"
# what `--with-reports` adds: the documents the card's "Build" section points readers to
REPORTS = ("build_report.md", "funnel.png", "rejections.jsonl")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
TOKEN_HELP = "set HF_TOKEN or run `hf auth login`"


class PublishError(Exception):
    """Bad input or a refused upload; the message names the input and the reason."""


@dataclass(frozen=True)
class PlannedFile:
    path_in_repo: str
    local: Path
    size: int


@dataclass(frozen=True)
class UploadPlan:
    dataset: Path
    files: list[PlannedFile]
    manifest: BuildManifest

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def card(self) -> str:
        return (self.dataset / CARD).read_text(encoding="utf-8")


@dataclass(frozen=True)
class PublishResult:
    url: str
    commit_url: str
    uploaded: list[str]
    deleted: list[str]


def check_repo_id(repo_id: str) -> str:
    if not REPO_ID.match(repo_id) or ".." in repo_id or repo_id.endswith((".git", ".")):
        raise PublishError(f"--repo-id {repo_id!r}: expected ORG/NAME (letters, digits, '-', '_', '.')")
    return repo_id


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _load_manifest(dataset: Path) -> BuildManifest:
    path = dataset / MANIFEST
    if not path.is_file():
        raise PublishError(f"--dataset {dataset}: not a builder output (no {MANIFEST}); build one "
                           "with `python -m builder run --out DIR`")
    try:
        return BuildManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError, UnicodeDecodeError) as exc:
        first = str(exc).strip().splitlines()
        raise PublishError(f"--dataset {dataset}: {MANIFEST} is not a build manifest "
                           f"({' '.join(first[:3])})") from None


def _shard_path(dataset: Path, rel: str) -> Path:
    # the manifest is data from disk: a shard path must stay inside data/ of this folder
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or p.parts[:1] != ("data",) or p.suffix != ".parquet":
        raise PublishError(f"--dataset {dataset}: {MANIFEST} lists shard {rel!r}, which is not a "
                           "data/*.parquet path")
    return dataset / p


def plan_upload(dataset: Path, *, with_reports: bool = False) -> UploadPlan:
    """The files one commit will hold, in repository order (card, manifest, shards)."""
    if not dataset.is_dir():
        raise PublishError(f"--dataset {dataset}: not a folder")
    manifest = _load_manifest(dataset)
    if not manifest.shards:
        raise PublishError(f"--dataset {dataset}: not a builder output ({MANIFEST} lists no shards)")
    if not (dataset / CARD).is_file():
        raise PublishError(f"--dataset {dataset}: no dataset card ({CARD}); rebuild the folder "
                           "with `python -m builder run`")
    files = [PlannedFile(CARD, dataset / CARD, (dataset / CARD).stat().st_size),
             PlannedFile(MANIFEST, dataset / MANIFEST, (dataset / MANIFEST).stat().st_size)]
    if with_reports:
        files += [PlannedFile(n, dataset / n, (dataset / n).stat().st_size)
                  for n in REPORTS if (dataset / n).is_file()]
    seen: set[str] = set()
    for shard in sorted(manifest.shards, key=lambda s: s.path):
        if shard.path in seen:
            raise PublishError(f"--dataset {dataset}: {MANIFEST} lists shard {shard.path} twice")
        seen.add(shard.path)
        local = _shard_path(dataset, shard.path)
        if not local.is_file():
            raise PublishError(f"--dataset {dataset}: shard {shard.path} (listed in {MANIFEST}) "
                               "is missing; rebuild the folder")
        if _sha256(local) != shard.sha256:
            raise PublishError(f"--dataset {dataset}: shard {shard.path} differs from the one "
                               f"{MANIFEST} describes (sha256); the folder changed after its "
                               "build, rebuild it")
        files.append(PlannedFile(shard.path, local, local.stat().st_size))
    return UploadPlan(dataset=dataset, files=files, manifest=manifest)


def dry_run_text(plan: UploadPlan, repo_id: str, revision: str | None) -> str:
    width = max(len(f.path_in_repo) for f in plan.files)
    lines = [f"dry run: would upload to dataset {repo_id} (revision {revision or 'main'}) in one "
             f"commit, {len(plan.files)} files, {plan.total_bytes} bytes; nothing was contacted",
             ""]
    lines += [f"  {f.path_in_repo:<{width}}  {f.size:>12}" for f in plan.files]
    lines += ["", "files under data/ on the Hub that this build does not produce are deleted in "
              "the same commit", "", f"----- {CARD} -----", plan.card().rstrip("\n")]
    return "\n".join(lines) + "\n"


def resolve_token() -> str:
    """HF_TOKEN, else the stored login; huggingface_hub.get_token() checks both in that order."""
    from huggingface_hub import get_token

    token = os.environ.get("HF_TOKEN") or get_token()
    if not token:
        raise PublishError(f"publishing needs a Hugging Face token: {TOKEN_HELP}")
    return token


def commit_message(manifest: BuildManifest) -> str:
    splits = ", ".join(f"{k} {v}" for k, v in manifest.splits.items())
    return (f"Upload {sum(manifest.splits.values())} validated CUDA kernels ({splits}), "
            f"cuda-kernel-data {manifest.tool_version}")


def push(plan: UploadPlan, repo_id: str, *, token: str, private: bool = False,
         revision: str | None = None, endpoint: str | None = None) -> PublishResult:
    """Create the repository (and branch) if needed, then one commit: the planned files plus
    deletions of shards under data/ that the plan does not contain."""
    import httpx2
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi
    from huggingface_hub.errors import HfHubHTTPError

    api = HfApi(endpoint=endpoint, token=token)
    step = "creating the repository"
    try:
        # private=None leaves an existing repository's visibility alone
        repo_url = api.create_repo(repo_id, repo_type="dataset", private=private or None,
                                   exist_ok=True)
        if private:
            # create_repo(exist_ok=True) keeps an existing repository as it is: a public one
            # would take the upload the user asked to keep private
            step = "checking the repository's visibility"
            if api.dataset_info(repo_id).private is False:
                raise PublishError(f"--private: dataset {repo_id!r} already exists and is "
                                   "public; nothing was uploaded (make it private on the Hub, "
                                   "or drop --private)")
        if revision:
            step = f"creating branch {revision!r}"
            api.create_branch(repo_id, branch=revision, repo_type="dataset", exist_ok=True)
        step = "listing the repository"
        planned = {f.path_in_repo for f in plan.files}
        remote = api.list_repo_files(repo_id, repo_type="dataset", revision=revision)
        stale = sorted(p for p in remote if p.startswith("data/") and p not in planned)
        ops: list = [CommitOperationAdd(path_in_repo=f.path_in_repo, path_or_fileobj=str(f.local))
                     for f in plan.files]
        ops += [CommitOperationDelete(path_in_repo=p) for p in stale]
        step = "uploading"
        info = api.create_commit(repo_id, ops, commit_message=commit_message(plan.manifest),
                                 repo_type="dataset", revision=revision)
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else "?"
        reason = str(exc).strip().splitlines()[0]
        raise PublishError(f"publishing to dataset {repo_id!r} failed while {step} "
                           f"(HTTP {status}): {reason}") from None
    except (httpx2.TransportError, OSError, ValueError, RuntimeError) as exc:
        # unreachable endpoint, a file vanishing mid-upload, a malformed answer
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise PublishError(f"publishing to dataset {repo_id!r} failed while {step}: "
                           f"{reason}") from None
    base = f"{repo_url.endpoint.rstrip('/')}/datasets/{repo_id}"
    url = f"{base}/tree/{revision}" if revision else base
    return PublishResult(url=url, commit_url=info.commit_url, uploaded=sorted(planned),
                         deleted=stale)
