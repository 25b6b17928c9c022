"""`--resume`: a run interrupted after a checkpoint and resumed matches an uninterrupted run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from transformers import TrainerCallback

from cuset.cli import main as cli_main
from cuset.config import load_config
from cuset.errors import CusetError
from cuset.trainer import build_trainer, resolve_checkpoint, train

TINY = Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml"
COMMON = ("training.disable_tqdm=true", "training.report_to=[]", "training.eval_strategy=no",
          "data.max_length=512", "training.max_steps=4", "training.gradient_accumulation_steps=1",
          "training.save_strategy=steps", "training.save_steps=2", "training.save_total_limit=null",
          "training.lr_scheduler_type=cosine")


class Interrupted(Exception):
    pass


class StopAfterSave(TrainerCallback):
    """Plays a killed job: dies right after the checkpoint of step 2 is on disk."""

    def on_save(self, args, state, control, **kwargs):
        if state.global_step == 2:
            raise Interrupted


def _losses(out: Path) -> list[tuple[int, float]]:
    state = json.loads((out / "trainer_state.json").read_text())
    return [(h["step"], h["loss"]) for h in state["log_history"] if "loss" in h]


def test_resumed_run_continues_steps_and_loss_curve(cuda_dataset, tmp_path):
    whole = tmp_path / "whole"
    train(load_config(TINY, [f"data.path={cuda_dataset}", f"training.output_dir={whole}", *COMMON]))

    cut = tmp_path / "cut"
    cfg = load_config(TINY, [f"data.path={cuda_dataset}", f"training.output_dir={cut}", *COMMON])
    trainer, _ = build_trainer(cfg)
    trainer.add_callback(StopAfterSave)
    with pytest.raises(Interrupted):
        trainer.train()
    assert sorted(p.name for p in cut.glob("checkpoint-*")) == ["checkpoint-2"]

    rc = cli_main(["train", "--config", str(TINY), "--data", str(cuda_dataset), "--output-dir",
                   str(cut), "--resume", *COMMON])
    assert rc == 0
    expected, got = _losses(whole), _losses(cut)
    assert [s for s, _ in got] == [1, 2, 3, 4] == [s for s, _ in expected]
    for (_, a), (_, b) in zip(expected, got, strict=True):
        assert b == pytest.approx(a, rel=1e-5)
    assert json.loads((cut / "trainer_state.json").read_text())["global_step"] == 4


def test_resume_from_an_explicit_checkpoint_folder(cuda_dataset, tmp_path):
    first = tmp_path / "first"
    train(load_config(TINY, [f"data.path={cuda_dataset}", f"training.output_dir={first}", *COMMON,
                             "training.max_steps=2"]))
    again = tmp_path / "again"
    out = train(load_config(TINY, [
        f"data.path={cuda_dataset}", f"training.output_dir={again}", *COMMON,
        f"training.resume_from_checkpoint={first / 'checkpoint-2'}"]))
    assert [h["step"] for h in out["log_history"] if "loss" in h] == [1, 2, 3, 4]


def test_resume_errors_name_the_folder(tmp_path, capsys):
    with pytest.raises(CusetError, match="no checkpoint-\\* folder in"):
        resolve_checkpoint("latest", tmp_path)
    with pytest.raises(CusetError, match="no such folder"):
        resolve_checkpoint(str(tmp_path / "nope"), tmp_path)
    with pytest.raises(CusetError, match="not a checkpoint"):
        resolve_checkpoint(str(tmp_path), tmp_path)
    assert resolve_checkpoint(None, tmp_path) is None
    rc = cli_main(["train", "--config", str(TINY), "--data", str(tmp_path), "--output-dir",
                   str(tmp_path), "--resume"])
    assert rc == 2 and "no checkpoint-* folder" in capsys.readouterr().err
