"""`cuset analyze` end to end on the tiny model: plots, statistics, the adapter path, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from cuset_testdata import corpus_records, make_record, write_dataset

from cuset.analysis.command import main
from cuset.analysis.confidence import load, sample_confidence
from cuset.data import load_rows, prepare

REPO = Path(__file__).resolve().parents[2]
TINY = str(REPO / "cuset" / "configs" / "tiny.yaml")
PNG = b"\x89PNG\r\n\x1a\n"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["--no-progress", *argv])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1, err
    return lines[0]


def test_analysis_of_a_warm_model(warm_model, cuda_dataset, tmp_path, capsys):
    out = tmp_path / "out"
    code, stdout, err = _run(capsys, "--model-path", str(warm_model), "--data", str(cuda_dataset),
                             "--out", str(out), "--plot-samples", "relu-0,warp_max-0")
    assert code == 0, err
    r = json.loads((out / "analysis.json").read_text())
    assert (out / "confidence_density.png").read_bytes()[:8] == PNG
    assert r["plots"]["windows"] == {"relu-0": "windows_relu-0.png", "warp_max-0": "windows_warp_max-0.png"}
    for name in r["plots"]["windows"].values():
        assert (out / name).read_bytes()[:8] == PNG

    # the token counts are those of the trainer's own tokenisation
    assert r["n_samples"] == 6 == r["data_report"]["used"]
    assert r["n_tokens"] == r["data_report"]["label_tokens"]
    assert r["n_tokens_sensitive"] == r["data_report"]["cuda_tokens"] > 0
    assert r["n_tokens"] == r["n_tokens_sensitive"] + r["n_tokens_neutral"]
    per = r["samples"]
    assert sum(s["n_tokens"] for s in per) == r["n_tokens"]
    assert sum(s["n_low_windows"] for s in per) == r["n_low_windows"]
    assert sum(s["n_low_windows_overlapping_sensitive"] for s in per) == r["n_low_windows_overlapping_sensitive"]
    assert sum(s["n_low_windows"] > 0 for s in per) == r["samples_with_low_window"]
    assert all(s["n_windows"] == s["n_tokens"] - 64 + 1 for s in per)

    # a trained model: confidences spread over (0, 1), and the threshold is the neutral mean
    assert 0.05 < r["mean_confidence_neutral"] < 0.95
    assert 0.05 < r["mean_confidence_sensitive"] < 0.95
    assert r["threshold"] == r["mean_confidence_neutral"]
    assert 0 < r["ks_statistic"] < 1 and 0 <= r["ks_pvalue"] <= 1
    assert 0 < r["sample_share_with_low_window"] <= 1
    assert 0 < r["low_window_overlap_share"] <= 1
    assert r["low_window_overlap_share"] == pytest.approx(
        r["n_low_windows_overlapping_sensitive"] / r["n_low_windows"])
    for s in per:  # a window of low mean exists exactly when the minimum is below the threshold
        assert (s["n_low_windows"] > 0) == (s["min_window_mean"] < r["threshold"])
    assert "Kolmogorov-Smirnov" in stdout and f"{r['ks_statistic']:.4f}" in stdout


def test_confidences_equal_the_softmax_of_plain_logits(warm_model, cuda_dataset):
    """The chunked head and the position shift give exactly p(y_t | x, y_<t) of the response."""
    from transformers import AutoModelForCausalLM

    loaded = load(str(warm_model), device=torch.device("cpu"))
    ds, _ = prepare(load_rows(cuda_dataset, "train"), loaded.tokenizer, max_length=512)
    ex = ds.examples[0]
    got = sample_confidence(loaded, ex)

    plain = AutoModelForCausalLM.from_pretrained(str(warm_model), dtype=torch.float32).eval()
    with torch.no_grad():
        logits = plain(input_ids=torch.tensor([ex.input_ids])).logits[0]
    logp = torch.log_softmax(logits.double(), -1)
    pos = [t for t in range(1, len(ex.labels)) if ex.labels[t] != -100]
    expect = np.array([logp[t - 1, ex.input_ids[t]].exp().item() for t in pos])
    np.testing.assert_allclose(got.confidence, expect, rtol=1e-4)
    assert got.sensitive.tolist() == [bool(ex.cuda_mask[t]) for t in pos]


def test_tiny_config_with_a_lora_adapter(cuda_dataset, tmp_path, capsys):
    from cuset.config import load_config
    from cuset.trainer import train

    cfg = load_config(TINY, [f"data.path={cuda_dataset}", f"training.output_dir={tmp_path / 'run'}",
                             "training.max_steps=2", "training.report_to=[]", "data.max_length=256",
                             "training.disable_tqdm=true"])
    train(cfg)
    adapter = tmp_path / "run" / "final"

    base_out, lora_out = tmp_path / "base", tmp_path / "lora"
    code, _, err = _run(capsys, "--config", TINY, "--data", str(cuda_dataset), "--out", str(base_out),
                        "--window", "100000", "--limit", "3", "--max-length", "1024")
    assert code == 0, err
    # the base model comes from the adapter's own config
    code, _, err = _run(capsys, "--adapter", str(adapter), "--data", str(cuda_dataset),
                        "--out", str(lora_out), "--window", "100000", "--limit", "3",
                        "--max-length", "1024")
    assert code == 0, err
    base = json.loads((base_out / "analysis.json").read_text())
    lora = json.loads((lora_out / "analysis.json").read_text())
    assert base["n_samples"] == lora["n_samples"] == 3
    assert lora["model"]["adapter"] == str(adapter)
    # responses shorter than the window: one window each
    assert all(s["n_windows"] == 1 for s in base["samples"])
    assert len(list(base_out.glob("windows_*.png"))) == 3
    assert base["n_tokens"] == lora["n_tokens"]
    assert base["mean_confidence_neutral"] != lora["mean_confidence_neutral"]


def test_model_folder_without_tokenizer(warm_model, cuda_dataset, tmp_path, capsys):
    bare = tmp_path / "bare"
    bare.mkdir()
    for f in ("config.json", "model.safetensors"):
        shutil.copy(Path(warm_model) / f, bare / f)
    code, _, err = _run(capsys, "--model-path", str(bare), "--data", str(cuda_dataset),
                        "--out", str(tmp_path / "o"))
    assert code == 2
    line = _error_line(err)
    assert str(bare) in line and "no tokenizer" in line
    assert not (tmp_path / "o").exists()


def test_unreadable_and_empty_datasets(tmp_path, capsys):
    code, _, err = _run(capsys, "--config", TINY, "--data", str(tmp_path / "nowhere"),
                        "--out", str(tmp_path / "o"))
    assert code == 2 and "does not exist" in _error_line(err)

    empty = tmp_path / "empty"
    (empty / "data").mkdir(parents=True)
    code, _, err = _run(capsys, "--config", TINY, "--data", str(empty), "--out", str(tmp_path / "o"))
    assert code == 2 and str(empty) in _error_line(err)


def test_dataset_without_cuda_spans(tmp_path, capsys):
    from cuset.tiny import corpus_programs

    recs = [make_record(n, t, spans=[], rec_id=n) for n, t in list(corpus_programs().items())[:2]]
    data = write_dataset(recs, tmp_path / "ds")
    code, _, err = _run(capsys, "--config", TINY, "--data", str(data), "--out", str(tmp_path / "o"))
    assert code == 2 and "kernel_body or launch_config" in _error_line(err)


def test_cuda_tokens_cut_away_by_truncation(tmp_path, capsys):
    data = write_dataset(corpus_records()[:2], tmp_path / "ds")
    # the prompt and the #include lines fit, the kernels do not
    code, _, err = _run(capsys, "--config", TINY, "--data", str(data), "--out", str(tmp_path / "o"),
                        "--max-length", "48")
    assert code == 2 and "no sample has a CUDA-sensitive response token" in _error_line(err)


def test_unknown_plot_sample_and_bad_window(cuda_dataset, tmp_path, capsys):
    code, _, err = _run(capsys, "--config", TINY, "--data", str(cuda_dataset), "--limit", "2",
                        "--out", str(tmp_path / "o"), "--plot-samples", "no-such-id")
    assert code == 2 and "no-such-id" in _error_line(err)
    code, _, err = _run(capsys, "--config", TINY, "--data", str(cuda_dataset),
                        "--out", str(tmp_path / "o"), "--window", "0")
    assert code == 2 and "--window" in _error_line(err)
