"""Training end to end on a tiny model: every method, loss invariance, DDP, the CLI."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from cuset_testdata import corpus_records, write_dataset

from cuset.cli import main as cli_main
from cuset.config import METHODS, load_config
from cuset.trainer import build_trainer, train

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "cuset" / "configs" / "tiny.yaml"


def _cfg(out: Path, data: Path, *overrides: str):
    return load_config(TINY, [f"data.path={data}", f"training.output_dir={out}",
                              "training.disable_tqdm=true", *overrides])


@pytest.fixture(scope="module")
def four_records(tmp_path_factory):
    return write_dataset(corpus_records()[:4], tmp_path_factory.mktemp("four"))


@pytest.mark.parametrize("method", METHODS)
def test_every_method_trains_a_few_steps(method, cuda_dataset, warm_model, tmp_path):
    cfg = _cfg(tmp_path, cuda_dataset, f"loss.method={method}", "training.max_steps=3",
               "data.max_length=512", f"model.name_or_path={warm_model}")
    trainer, report = build_trainer(cfg)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == 3 and all(math.isfinite(h["loss"]) and h["loss"] > 0 for h in logs)
    moved = [n for n, p in trainer.model.named_parameters() if p.requires_grad and not torch.equal(p, before[n])]
    assert moved, "no trainable parameter changed"
    assert report.used == 6 and report.cuda_tokens > 0
    assert all(0 < h["mask/cuda_token_share"] < 1 for h in logs)
    if method == "cuset":
        for h in logs:
            assert 0 < h["mask/confidence_kept_share"] < 1
            assert 0 < h["mask/mean_sample_weight"] <= 1
            assert h["mask/mean_token_weight"] >= h["mask/cuda_token_share"]
    if method == "asft":
        assert logs[-1]["asft/mean_kl"] > 0  # the adapter has moved away from the reference
    if method == "profit":
        assert "mask/confidence_kept_share" in logs[0]


def _step_delta(cfg) -> dict[str, torch.Tensor]:
    trainer, _ = build_trainer(cfg)
    before = {n: p.detach().clone() for n, p in trainer.model.named_parameters()}
    trainer.train()
    return {n: p.detach() - before[n] for n, p in trainer.model.named_parameters()}


INVARIANCE = ("lora.enabled=false", "training.optim=sgd", "training.learning_rate=0.5",
              "training.max_steps=1", "training.max_grad_norm=0", "data.max_length=256",
              "training.report_to=[]")


@pytest.mark.parametrize("method", ["cuset", "sft"])
def test_batch_of_four_equals_four_accumulated_micro_batches(method, four_records, warm_model, tmp_path):
    warm = f"model.name_or_path={warm_model}"
    one = _step_delta(_cfg(tmp_path / "a", four_records, *INVARIANCE, f"loss.method={method}", warm,
                           "training.per_device_train_batch_size=4", "training.gradient_accumulation_steps=1"))
    acc = _step_delta(_cfg(tmp_path / "b", four_records, *INVARIANCE, f"loss.method={method}", warm,
                           "training.per_device_train_batch_size=1", "training.gradient_accumulation_steps=4"))
    assert sum(d.abs().sum().item() for d in one.values()) > 0
    for n in one:
        torch.testing.assert_close(one[n], acc[n], rtol=1e-4, atol=1e-7, msg=n)


def test_token_normalisation_differs_from_per_micro_batch_mean(four_records, tmp_path):
    # guards the test above: with samples-normalisation the update differs from token-normalisation
    tok = _step_delta(_cfg(tmp_path / "a", four_records, *INVARIANCE, "loss.method=sft",
                           "training.gradient_accumulation_steps=4"))
    smp = _step_delta(_cfg(tmp_path / "b", four_records, *INVARIANCE, "loss.method=sft",
                           "training.gradient_accumulation_steps=4", "loss.normalize=samples"))
    name = "lm_head.weight"
    ratio = (smp[name].norm() / tok[name].norm()).item()
    assert ratio > 10  # per-sample sums are hundreds of tokens long


@pytest.mark.slow
def test_two_process_ddp_equals_one_process(four_records, warm_model, tmp_path):
    from safetensors.torch import load_file

    common = [*INVARIANCE, "loss.method=cuset", "training.per_device_train_batch_size=1",
              f"model.name_or_path={warm_model}",
              "model.gradient_checkpointing=true"]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
           "-m", "cuset", "train", "--config", str(TINY), "--data", str(four_records),
           "--output-dir", str(tmp_path / "ddp"), *common, "training.gradient_accumulation_steps=2",
           "training.ddp_backend=gloo", "training.disable_tqdm=true"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    single = _cfg(tmp_path / "one", four_records, *common, "training.gradient_accumulation_steps=4")
    logs = train(single)["log_history"]
    assert 0 < logs[0]["mask/confidence_kept_share"] < 1  # the confidence mask is active
    # rank 0 logs the same globally reduced parts as the single process
    line = next(x for x in proc.stdout.splitlines() if "mask/confidence_kept_share" in x)
    assert f"'mask/cuda_token_share': '{logs[0]['mask/cuda_token_share']:.4g}'" in line
    a = load_file(tmp_path / "ddp" / "final" / "model.safetensors")
    b = load_file(tmp_path / "one" / "final" / "model.safetensors")
    assert a.keys() == b.keys()
    for n in a:
        torch.testing.assert_close(a[n], b[n], rtol=1e-4, atol=1e-6, msg=n)


def test_cli_trains_and_logs_to_tensorboard(cuda_dataset, tmp_path, capfd):
    out = tmp_path / "run"
    rc = cli_main(["train", "--config", str(TINY), "--data", str(cuda_dataset), "--method", "cuset",
                   "--output-dir", str(out), "training.max_steps=2", "data.max_length=512"])
    stdout, stderr = capfd.readouterr()
    assert rc == 0, stderr[-3000:]
    assert "6 of 6 records used" in stdout
    assert "mask/mean_sample_weight" in stdout + stderr
    assert "2/2" in stderr  # the progress bar
    assert (out / "data_report.json").is_file()
    assert (out / "final" / "adapter_config.json").is_file()
    events = list(out.rglob("events.out.tfevents.*"))
    assert events
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(events[0].parent))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    assert any(t.endswith("mask/confidence_kept_share") for t in tags)
    assert any(t.endswith("mask/mean_sample_weight") for t in tags)


def test_cli_errors_are_one_clear_line(cuda_dataset, tmp_path, capsys):
    assert cli_main(["train", "--config", str(TINY), "--data", str(cuda_dataset), "loss.windw=3"]) == 2
    err = capsys.readouterr().err
    assert "unknown config key 'loss.windw'" in err and "Traceback" not in err

    assert cli_main(["train", "--config", str(TINY), "--data", str(tmp_path / "missing")]) == 2
    assert "does not exist" in capsys.readouterr().err

    # a builder dataset whose records carry no spans
    no_spans = corpus_records()[:2]
    for r in no_spans:
        r.spans = []
    folder = write_dataset(no_spans, tmp_path / "no-spans")
    assert cli_main(["train", "--config", str(TINY), "--data", str(folder),
                     f"training.output_dir={tmp_path / 'o1'}"]) == 2
    err = capsys.readouterr().err
    assert "no record of the dataset has a kernel_body or launch_config span" in err

    bad = tmp_path / "bad.yaml"
    bad.write_text("training:\n  learnig_rate: 1\n")
    assert cli_main(["train", "--config", str(bad)]) == 2
    assert "training.learnig_rate" in capsys.readouterr().err

    # a model whose tokenizer has no chat template
    from cuset.modeling import resolve_model_path

    src = Path(resolve_model_path("builtin:tiny"))
    plain = tmp_path / "no-template"
    plain.mkdir()
    for f in src.iterdir():
        (plain / f.name).write_bytes(f.read_bytes())
    import json

    tc = json.loads((plain / "tokenizer_config.json").read_text())
    tc.pop("chat_template", None)
    (plain / "tokenizer_config.json").write_text(json.dumps(tc))
    (plain / "chat_template.jinja").unlink(missing_ok=True)
    rc = cli_main(["train", "--config", str(TINY), "--data", str(cuda_dataset),
                   f"model.name_or_path={plain}", f"training.output_dir={tmp_path / 'o'}"])
    assert rc == 2
    assert "has no chat template" in capsys.readouterr().err
