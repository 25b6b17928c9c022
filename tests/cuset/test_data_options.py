"""`--data` as a folder or a Hub id, `data.max_samples`, and YAML's `no` in strategy keys."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

from cuset.config import load_config
from cuset.data import load_rows
from cuset.errors import CusetError
from cuset.trainer import build_trainer

TINY = Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml"


def test_local_folder_and_max_samples(cuda_dataset, tmp_path):
    assert len(load_rows(cuda_dataset, "train")) == 6
    assert load_rows(cuda_dataset, "train", max_samples=2)["id"] == load_rows(cuda_dataset)["id"][:2]
    assert len(load_rows(cuda_dataset, "train", max_samples=100)) == 6
    cfg = load_config(TINY, [f"data.path={cuda_dataset}", f"training.output_dir={tmp_path}",
                             "data.max_samples=3", "data.max_length=512"])
    _, report = build_trainer(cfg)
    assert report.total == 3
    with pytest.raises(CusetError, match="data.max_samples must be at least 1"):
        load_config(TINY, ["data.max_samples=0"])


def test_a_hub_id_reaches_load_dataset(cuda_dataset, monkeypatch):
    real = datasets.load_dataset
    asked = []

    def fake(name, *args, **kwargs):
        asked.append(name)
        return real(str(cuda_dataset))  # no network: the local copy stands in for the Hub

    monkeypatch.setattr(datasets, "load_dataset", fake)
    rows = load_rows("someone/cuda-kernels", "train", max_samples=4)
    assert asked == ["someone/cuda-kernels"] and len(rows) == 4


def test_hub_failures_and_bad_paths_are_one_line(monkeypatch, tmp_path):
    def offline(name, *args, **kwargs):
        raise ConnectionError(f"Couldn't reach '{name}' on the Hub\nmore detail")

    monkeypatch.setattr(datasets, "load_dataset", offline)
    with pytest.raises(CusetError, match=r"tried as a Hub dataset id\): Couldn.t reach") as err:
        load_rows("someone/missing")
    assert "\n" not in str(err.value)
    with pytest.raises(CusetError, match="does not exist"):
        load_rows(tmp_path / "nope")  # an absolute path is never a Hub id
    with pytest.raises(CusetError, match="does not exist"):
        load_rows("a/b/c")


def test_yaml_no_in_strategy_keys_means_no(tmp_path):
    f = tmp_path / "c.yaml"
    f.write_text("training:\n  save_strategy: no\n  eval_strategy: no\n")
    cfg = load_config(f)
    assert cfg.training.save_strategy == "no" and cfg.training.eval_strategy == "no"
    cfg = load_config(None, ["training.save_strategy=no", "training.eval_strategy=steps"])
    assert cfg.training.save_strategy == "no" and cfg.training.eval_strategy == "steps"
    assert load_config(TINY).training.save_strategy == "no"
    f.write_text("training:\n  save_strategy: yes\n")
    with pytest.raises(CusetError, match="save_strategy.*expected a string"):
        load_config(f)
    with pytest.raises(CusetError, match="eval_strategy must be no, steps or epoch"):
        load_config(None, ["training.eval_strategy=often"])
    f.write_text("loss:\n  use_region: no\n")  # other keys keep YAML's boolean
    assert load_config(f).loss.use_region is False
