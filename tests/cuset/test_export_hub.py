"""`cuset export --push-to-hub` against the Hub stand-in on loopback (tests/hub_standin.py),
driven by the real `huggingface_hub` client (create the repo, pre-upload, one commit with the
files inline)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from hub_standin import HubStandIn

from cuset.config import load_config
from cuset.export import main

TINY = Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml"


@pytest.fixture(scope="module")
def lora_run(cuda_dataset, tmp_path_factory) -> Path:
    from cuset.trainer import train

    out = tmp_path_factory.mktemp("hub-run")
    train(load_config(TINY, [
        f"data.path={cuda_dataset}", f"training.output_dir={out}", "training.disable_tqdm=true",
        "loss.method=sft", "training.max_steps=1", "training.gradient_accumulation_steps=1",
        "data.max_length=128",
        "training.report_to=[]",
    ]))
    return out


@pytest.fixture
def hub(monkeypatch, no_login) -> Iterator[HubStandIn]:
    from huggingface_hub import constants

    with HubStandIn() as s:
        # HF_ENDPOINT, as a user points the client at a mirror, read when the client loaded
        monkeypatch.setattr(constants, "ENDPOINT", s.url)
        monkeypatch.setenv("HF_TOKEN", "hf_standin_token")
        yield s


def test_push_uploads_every_exported_file(lora_run, hub, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--run", str(lora_run), "--out", str(out), "--push-to-hub", "me/tiny-lora",
                 "--private"]) == 0
    assert f"uploaded: {hub.url}/me/tiny-lora" in capsys.readouterr().out
    local = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "adapter_model.safetensors" in local
    assert hub.files == local
    # the client may also GET informational endpoints; the upload is these three calls
    posts = hub.posts()
    assert [r.path for r in posts] == ["/api/repos/create", "/api/models/me/tiny-lora/preupload/main",
                                       "/api/models/me/tiny-lora/commit/main"]
    assert all(r.authorization == "Bearer hf_standin_token" for r in posts)
    create = json.loads(posts[0].body)
    assert create["name"] == "tiny-lora" and create["organization"] == "me"
    assert create.get("visibility") == "private" or create.get("private") is True


def test_missing_token_is_one_line_before_any_work(lora_run, no_login, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--run", str(lora_run), "--out", str(out), "--merge",
                 "--push-to-hub", "me/tiny"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == ("error: --push-to-hub needs a Hugging Face token: set HF_TOKEN or run "
                       "`hf auth login`")
    assert not out.exists()


def test_rejected_upload_is_one_line_and_keeps_the_export(lora_run, monkeypatch, no_login,
                                                          tmp_path, capsys):
    from huggingface_hub import constants

    out = tmp_path / "out"
    with HubStandIn(fail_create=403) as s:
        monkeypatch.setattr(constants, "ENDPOINT", s.url)
        monkeypatch.setenv("HF_TOKEN", "hf_standin_token")
        assert main(["--run", str(lora_run), "--out", str(out), "--push-to-hub", "me/x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: upload to the Hub repository 'me/x' failed (")
    assert "export is kept in" in err
    assert (out / "adapter_model.safetensors").is_file()
    assert s.repos == {} and s.commits == []
