"""No silent no-op runs: truncation that cuts CUDA spans is reported, a run whose every target
token is masked stops with a clear error, and tiny.yaml trains for real."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from cuset_testdata import corpus_records

from cuset.cli import main as cli_main
from cuset.config import load_config
from cuset.data import encode_record, prepare
from cuset.errors import CusetError
from cuset.tiny import build_tokenizer
from cuset.trainer import build_trainer, train
from schemas import record_to_row

TINY = Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml"


def _cfg(out: Path, data: Path, *overrides: str):
    return load_config(TINY, [f"data.path={data}", f"training.output_dir={out}",
                              "training.disable_tqdm=true", "training.report_to=[]",
                              "training.eval_strategy=no", "data.max_length=512", *overrides])


def test_report_counts_records_whose_cuda_spans_truncation_cuts():
    tok = build_tokenizer()
    rows = [record_to_row(r) for r in corpus_records()]
    full = [encode_record(r, tok, 10**6)[0] for r in rows]
    # a length inside every response but before each record's last CUDA token
    first_label = max(next(i for i, x in enumerate(e.labels) if x != -100) for e in full)
    last_cuda = min(int(np.flatnonzero(e.cuda_mask)[-1]) for e in full)
    first_cuda = min(int(np.flatnonzero(e.cuda_mask)[0]) for e in full)
    assert first_label + 2 < last_cuda
    _, report = prepare(rows, tok, max_length=last_cuda)
    assert len(report.spans_cut) == len(rows) and report.used == len(rows)
    assert report.longest == max(e.full_length for e in full)
    assert "cuts the CUDA spans of 6 record(s)" in report.summary()
    assert "raise data.max_length" in report.summary()
    assert json.loads(json.dumps(report.to_dict()))["spans_cut"] == report.spans_cut

    assert first_label + 2 < first_cuda  # room for responses with no CUDA token left
    _, cut = prepare(rows, tok, max_length=first_label + 2)
    assert len(cut.no_cuda_tokens) == len(rows) and cut.cuda_tokens == 0
    assert "6 of them left with no CUDA token" in cut.summary()

    _, whole = prepare(rows, tok, max_length=10**6)
    assert not whole.spans_cut and not whole.no_cuda_tokens and "warning" not in whole.summary()


@pytest.mark.parametrize("method,setting", [
    ("cuset", "loss.tau"),  # confidences ~1/vocab < tau, and the CUDA mask switched off
    ("profit", "loss.profit_tau"),
])
def test_fully_masked_run_stops_with_the_setting_to_change(method, setting, cuda_dataset, tmp_path):
    cfg = _cfg(tmp_path, cuda_dataset, f"loss.method={method}", "loss.use_cuda_mask=false",
               "training.max_steps=6", "training.noop_check_steps=2")
    with pytest.raises(CusetError, match=f"loss was exactly 0.*{setting}") as err:
        train(cfg)
    assert "\n" not in str(err.value)
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == 2  # stopped at the end of the window, not at max_steps
    assert [h["loss"] for h in state["log_history"] if "loss" in h] == [0.0, 0.0]


def test_the_check_is_what_stops_it(cuda_dataset, tmp_path):
    # the same fully masked run with the check off trains to the end with a zero loss
    cfg = _cfg(tmp_path, cuda_dataset, "loss.method=profit", "training.max_steps=3",
               "training.noop_check_steps=0")
    logs = train(cfg)["log_history"]
    assert [h["loss"] for h in logs if "loss" in h] == [0.0, 0.0, 0.0]


def test_cli_exits_2_with_one_line(cuda_dataset, tmp_path, capfd):
    rc = cli_main(["train", "--config", str(TINY), "--data", str(cuda_dataset), "--method", "profit",
                   "--output-dir", str(tmp_path), "training.disable_tqdm=true", "training.report_to=[]",
                   "training.max_steps=2", "data.max_length=512"])
    err = capfd.readouterr().err
    assert rc == 2
    line = next(x for x in err.splitlines() if x.startswith("error:"))
    assert "loss.profit_tau" in line and "Traceback" not in err


def test_normal_run_is_not_stopped(cuda_dataset, tmp_path):
    # untrained model, default tau: the confidence term keeps nothing but the CUDA mask does
    trainer, _ = build_trainer(_cfg(tmp_path, cuda_dataset, "training.max_steps=3"))
    trainer.train()
    assert trainer.state.global_step == 3 and trainer.noop_guard.done
    assert trainer.noop_guard.seen == 1  # one non-zero step settles it


def test_tiny_config_trains_for_real_and_leaves_its_state(cuda_dataset, tmp_path):
    """tiny.yaml as shipped (only the step count raised): a non-zero loss that falls."""
    cfg = load_config(TINY, [f"data.path={cuda_dataset}", f"training.output_dir={tmp_path}",
                             "training.disable_tqdm=true", "training.report_to=[]",
                             "training.max_steps=12"])
    train(cfg)
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    loss = [h["loss"] for h in state["log_history"] if "loss" in h]
    assert len(loss) == 12 and min(loss) > 0
    # 6 records, 2 per step: steps 1-3 and 10-12 are each one pass over the same records
    first, last = np.mean(loss[:3]), np.mean(loss[-3:])
    print(f"tiny.yaml on the corpus: first epoch mean loss {first:.4f}, fourth {last:.4f}")
    assert last < first
    nll = [h["eval_nll"] for h in state["log_history"] if "eval_nll" in h]
    assert len(nll) == 6 and nll[-1] < nll[0]
