"""`python -m builder publish` on a real build: the dry run's file list and card, the uploaded
folder loading back with `datasets`, and the upload through the real `huggingface_hub` client
against the Hub stand-in on loopback (tests/hub_standin.py), LFS for the shards."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_standin import HubStandIn

from builder.cli import main

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "hf_standin_token"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A real (small) build: shards, card, manifest, and the builder's own leftovers."""
    out = tmp_path_factory.mktemp("build") / "dataset"
    assert main(["run", "--out", str(out), "--limit", "4", "--quick", "--executor", "local",
                 "--no-progress"]) == 0
    assert any((out / ".cache").rglob("*")), "the build should leave a stage cache to exclude"
    return out


def manifest_shards(folder: Path) -> list[dict]:
    return json.loads((folder / "manifest.json").read_text())["shards"]


def planned(folder: Path) -> list[str]:
    return ["README.md", "manifest.json", *sorted(s["path"] for s in manifest_shards(folder))]


@pytest.fixture
def hub(monkeypatch, no_login) -> Iterator[HubStandIn]:
    from huggingface_hub import constants

    with HubStandIn(lfs_patterns=["*.parquet"]) as s:
        monkeypatch.setattr(constants, "ENDPOINT", s.url)
        # the stand-in speaks LFS, not Xet's CAS protocol (see tests/hub_standin.py)
        monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        yield s


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("error: ")
    return err[0]


def test_dry_run_prints_the_exact_files_and_the_card_and_contacts_nothing(built, hub, capsys,
                                                                          monkeypatch):
    monkeypatch.delenv("HF_TOKEN")  # a dry run needs no token either
    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels", "--dry-run"]) == 0
    out = capsys.readouterr().out
    head, card = out.split("----- README.md -----\n")
    listed = [line.split() for line in head.splitlines() if line.startswith("  ")]
    assert [(p, int(n)) for p, n in listed] == [(p, (built / p).stat().st_size)
                                                for p in planned(built)]
    assert f"{len(listed)} files, {sum(int(n) for _, n in listed)} bytes" in head
    assert card == (built / "README.md").read_text()
    assert ".cache" not in head and "timings.json" not in head
    assert hub.requests == []


def test_upload_is_one_commit_of_exactly_the_planned_files(built, hub, capsys):
    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels", "--private"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1] == f"{hub.url}/datasets/me/kernels"

    assert len(hub.commits) == 1
    commit = hub.commits[0]
    shards = sorted(s["path"] for s in manifest_shards(built))
    assert sorted(commit.added) == sorted(planned(built)) and commit.deleted == []
    assert all(data == (built / p).read_bytes() for p, data in commit.added.items())
    assert sorted(commit.lfs_paths) == shards  # shards went through LFS, the rest inline
    assert not any(p.startswith(".cache") for p in hub.files)
    assert sorted(hub.files) == sorted(planned(built))
    assert hub.repos[("datasets", "me/kernels")].private

    # the Hub checked the card's metadata before anything was uploaded
    assert hub.validated_cards == [(built / "README.md").read_text()]
    oids = sorted(s["sha256"] for s in manifest_shards(built))
    posts = [r.path for r in hub.posts()]
    assert posts[:4] == ["/api/repos/create", "/api/validate-yaml",
                         "/api/datasets/me/kernels/preupload/main",
                         "/datasets/me/kernels.git/info/lfs/objects/batch"]
    assert sorted(posts[4:-1]) == [f"/lfs/{oid}/verify" for oid in oids]
    assert posts[-1] == "/api/datasets/me/kernels/commit/main"
    assert sorted(r.path for r in hub.requests if r.method == "PUT") == [f"/lfs/{o}" for o in oids]
    # (the client also GETs a public registry, /api/agent-harnesses, without the token)
    api = [r for r in hub.requests if r.path.startswith(("/api/repos/", "/api/validate-yaml",
                                                         "/api/datasets/"))]
    assert api and all(r.authorization == f"Bearer {TOKEN}" for r in api)


def test_uploaded_repository_loads_with_datasets(built, hub, tmp_path):
    from datasets import load_dataset
    from huggingface_hub import DatasetCard

    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels"]) == 0
    clone = tmp_path / "clone"
    for path, data in hub.branch("datasets", "me/kernels").items():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        (clone / path).write_bytes(data)
    splits = json.loads((built / "manifest.json").read_text())["splits"]
    # the card's YAML header, read the way the Hub reads it, declares the splits' files
    (config,) = DatasetCard.load(clone / "README.md").data.configs
    declared = {f["split"]: str(clone / f["path"]) for f in config["data_files"]}
    assert sorted(declared) == sorted(splits)
    ds = load_dataset("parquet", data_files=declared, cache_dir=str(tmp_path / "hf-cache"))
    assert {k: ds[k].num_rows for k in ds} == splits
    assert all(row["split"] == name for name in ds for row in ds[name])
    # and the repository as a whole loads as the Hub would serve it
    whole = load_dataset(str(clone), cache_dir=str(tmp_path / "hf-cache"))
    assert {k: whole[k].num_rows for k in whole} == splits


def test_branch_and_stale_shards_of_an_earlier_publish(built, hub, capsys):
    assert main(["publish", "--dataset", str(built), "--repo-id", "org/k", "--revision", "v1"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == f"{hub.url}/datasets/org/k/tree/v1"
    repo = hub.repos[("datasets", "org/k")]
    assert sorted(repo.branches["main"]) == [".gitattributes"]
    assert sorted(repo.branches["v1"]) == sorted([".gitattributes", *planned(built)])

    # an earlier build with more shards, and a file someone added by hand
    repo.branches["v1"]["data/train-00001-of-00002.parquet"] = b"old"
    repo.branches["v1"]["notes.txt"] = b"kept"
    assert main(["publish", "--dataset", str(built), "--repo-id", "org/k", "--revision", "v1"]) == 0
    assert "deleted 1 stale: data/train-00001-of-00002.parquet" in capsys.readouterr().out
    assert len(hub.commits) == 2 and hub.commits[1].deleted == ["data/train-00001-of-00002.parquet"]
    assert sorted(repo.branches["v1"]) == sorted([".gitattributes", "notes.txt", *planned(built)])


def test_private_upload_into_an_existing_public_repository_is_refused(built, hub, capsys):
    from hub_standin import GITATTRIBUTES, Repo

    hub.repos[("datasets", "me/kernels")] = Repo(private=False,
                                                 branches={"main": {".gitattributes": GITATTRIBUTES}})
    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels", "--private"]) == 2
    assert one_error_line(capsys) == (
        "error: --private: dataset 'me/kernels' already exists and is public; nothing was "
        "uploaded (make it private on the Hub, or drop --private)")
    assert hub.commits == [] and hub.lfs_objects == {}
    # without --private it goes in, and the repository stays as it is
    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels"]) == 0
    assert len(hub.commits) == 1 and hub.repos[("datasets", "me/kernels")].private is False


def test_missing_token_is_a_clear_error_before_any_request(built, hub, capsys, monkeypatch):
    monkeypatch.delenv("HF_TOKEN")
    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels"]) == 2
    assert one_error_line(capsys) == ("error: publishing needs a Hugging Face token: set HF_TOKEN "
                                      "or run `hf auth login`")
    assert hub.requests == []


def test_refused_upload_names_the_repository_and_the_status(built, monkeypatch, no_login,
                                                            capsys):
    from huggingface_hub import constants

    with HubStandIn(fail_create=403) as s:
        monkeypatch.setattr(constants, "ENDPOINT", s.url)
        monkeypatch.setenv("HF_TOKEN", TOKEN)
        assert main(["publish", "--dataset", str(built), "--repo-id", "me/x"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("error: publishing to dataset 'me/x' failed while creating the "
                           "repository (HTTP 403)")
    assert s.commits == []


def _no_manifest(folder: Path, built: Path) -> None:
    shutil.copytree(built / "data", folder / "data")
    shutil.copy(built / "README.md", folder)


def _tampered_shard(folder: Path, built: Path) -> None:
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns(".cache"), dirs_exist_ok=True)
    shard = folder / manifest_shards(built)[0]["path"]
    shard.write_bytes(shard.read_bytes() + b"\0")


def _missing_shard(folder: Path, built: Path) -> None:
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns(".cache"), dirs_exist_ok=True)
    (folder / manifest_shards(built)[0]["path"]).unlink()


def _not_a_manifest(folder: Path, built: Path) -> None:
    (folder / "manifest.json").write_text('{"shards": "x"}')


def _escaping_shard(folder: Path, built: Path) -> None:
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns(".cache"), dirs_exist_ok=True)
    m = json.loads((folder / "manifest.json").read_text())
    m["shards"][0]["path"] = "../secret.parquet"
    (folder / "manifest.json").write_text(json.dumps(m))


@pytest.mark.parametrize(("make", "reason"), [
    (lambda f, b: None, "not a builder output (no manifest.json)"),
    (_no_manifest, "not a builder output (no manifest.json)"),
    (_not_a_manifest, "manifest.json is not a build manifest"),
    (_missing_shard, "is missing"),
    (_tampered_shard, "differs from the one manifest.json describes"),
    (_escaping_shard, "which is not a data/*.parquet path"),
], ids=["empty", "no-manifest", "bad-manifest", "missing-shard", "changed-shard", "escaping-path"])
def test_folder_that_is_not_a_build_is_a_clear_error(built, hub, tmp_path, capsys, make, reason):
    folder = tmp_path / "folder"
    folder.mkdir()
    make(folder, built)
    assert main(["publish", "--dataset", str(folder), "--repo-id", "me/kernels"]) == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: --dataset {folder}: ") and reason in line
    assert hub.requests == []


def test_bad_repo_id(built, capsys):
    assert main(["publish", "--dataset", str(built), "--repo-id", "kernels", "--dry-run"]) == 2
    assert "--repo-id 'kernels': expected ORG/NAME" in one_error_line(capsys)


def test_command_line_with_hf_endpoint(built, tmp_path):
    """The documented route: a real `python -m builder publish` process, pointed at the
    stand-in by HF_ENDPOINT, token from HF_TOKEN."""
    with HubStandIn(lfs_patterns=["*.parquet"]) as s:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
        env.update(HF_ENDPOINT=s.url, HF_TOKEN=TOKEN, HF_HUB_DISABLE_XET="1",
                   HF_HOME=str(tmp_path / "hf-home"))
        proc = subprocess.run([sys.executable, "-m", "builder", "publish", "--dataset", str(built),
                               "--repo-id", "me/kernels", "--with-reports"],
                              cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == f"{s.url}/datasets/me/kernels"
    reports = [n for n in ("build_report.md", "funnel.png", "rejections.jsonl") if (built / n).exists()]
    assert reports and sorted(s.files) == sorted(planned(built) + reports)
    for path, data in s.files.items():
        assert hashlib.sha256(data).digest() == hashlib.sha256((built / path).read_bytes()).digest()


def test_card_the_hub_refuses_is_a_clear_error_and_nothing_is_committed(built, hub, tmp_path,
                                                                        capsys):
    folder = tmp_path / "folder"
    shutil.copytree(built, folder, ignore=shutil.ignore_patterns(".cache"))
    card = (folder / "README.md").read_text()
    (folder / "README.md").write_text(card.replace("\n---\n", "\n", 1))  # front matter unclosed
    assert main(["publish", "--dataset", str(folder), "--repo-id", "me/kernels"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("error: publishing to dataset 'me/kernels' failed while uploading: "
                           "Invalid metadata in README.md")
    assert hub.commits == [] and hub.lfs_objects == {}


def test_endpoint_that_does_not_answer(built, monkeypatch, no_login, capsys):
    import socket

    from huggingface_hub import constants

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert main(["publish", "--dataset", str(built), "--repo-id", "me/kernels"]) == 2
    line = one_error_line(capsys)
    assert line.startswith("error: publishing to dataset 'me/kernels' failed while creating the "
                           "repository: ") and "refused" in line.lower()
