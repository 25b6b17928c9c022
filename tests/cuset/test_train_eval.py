"""Evaluation during training: the test split's plain NLL and token accuracy for every method."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
import torch
from cuset_testdata import corpus_records, write_dataset

from cuset.config import METHODS, load_config
from cuset.data import Collator, load_rows, prepare
from cuset.modeling import load_tokenizer, resolve_model_path
from cuset.trainer import build_trainer, train

TINY = Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml"


def _cfg(out: Path, data: Path, *overrides: str):
    return load_config(TINY, [f"data.path={data}", f"training.output_dir={out}",
                              "training.disable_tqdm=true", "training.report_to=[]",
                              "data.max_length=512", *overrides])


@pytest.mark.parametrize("method", METHODS)
def test_eval_metrics_are_logged_for_every_method(method, cuda_dataset, tmp_path):
    logs = train(_cfg(tmp_path, cuda_dataset, f"loss.method={method}", "training.max_steps=2",
                      "training.eval_steps=1", "loss.profit_tau=0.0"))["log_history"]
    evals = [h for h in logs if "eval_nll" in h]
    assert [h["step"] for h in evals] == [1, 2]
    for h in evals:
        assert math.isfinite(h["eval_loss"]) and 0 < h["eval_nll"] < 20
        assert 0 <= h["eval_token_accuracy"] <= 1 and h["eval_tokens"] > 0
    if method == "sft":  # SFT's own loss is the plain NLL: two independent computations agree
        for h in evals:
            assert h["eval_loss"] == pytest.approx(h["eval_nll"], rel=1e-5)
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert sum("eval_nll" in h for h in state["log_history"]) == 2


def test_eval_matches_full_logits(cuda_dataset, tmp_path):
    """NLL and accuracy against full-vocabulary logits from the plain model."""
    trainer, _ = build_trainer(_cfg(tmp_path, cuda_dataset, "loss.chunk_tokens=7"))
    got = trainer.evaluate()
    cfg = _cfg(tmp_path, cuda_dataset)
    tok = load_tokenizer(cfg, resolve_model_path(cfg.model.name_or_path))
    ds, _ = prepare(load_rows(cuda_dataset, "test"), tok, max_length=512)
    batch = Collator(tok.pad_token_id)([ds[i] for i in range(len(ds))])
    with torch.no_grad():
        logits = trainer.model(input_ids=batch["input_ids"],
                               attention_mask=batch["attention_mask"]).logits[:, :-1].float()
    tgt = batch["labels"][:, 1:]
    m = tgt.ne(-100)
    nll = torch.nn.functional.cross_entropy(logits[m], tgt[m])
    acc = logits[m].argmax(-1).eq(tgt[m]).float().mean()
    assert got["eval_nll"] == pytest.approx(nll.item(), rel=1e-5)
    assert got["eval_token_accuracy"] == pytest.approx(acc.item(), abs=1e-9)
    assert got["eval_tokens"] == m.sum().item()


def test_eval_strategy_no_and_missing_split(cuda_dataset, tmp_path, capsys):
    logs = train(_cfg(tmp_path / "a", cuda_dataset, "training.max_steps=2", "training.eval_steps=1",
                      "training.eval_strategy=no"))["log_history"]
    assert not any("eval_nll" in h for h in logs)

    train_only = write_dataset(corpus_records()[:2], tmp_path / "train-only")
    logs = train(_cfg(tmp_path / "b", train_only, "training.max_steps=1",
                      "training.eval_steps=1"))["log_history"]
    assert not any("eval_nll" in h for h in logs)
    assert "evaluation off: dataset" in capsys.readouterr().out
