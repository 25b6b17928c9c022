from __future__ import annotations

import contextlib
import os

import pytest


@contextlib.contextmanager
def _cache_env(root):
    old = os.environ.get("CKD_CACHE_DIR")
    os.environ["CKD_CACHE_DIR"] = str(root)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("CKD_CACHE_DIR", None)
        else:
            os.environ["CKD_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def _cache_root(shared_dir):
    """One private cache for the run, shared by its xdist workers: the tiny checkpoint is built
    once, not once per worker, and so are the programs the eval and reward tests validate (a
    checkpoint is renamed into place, builds take a file lock)."""
    return shared_dir("cuset-cache")


@pytest.fixture(scope="module", autouse=True)
def _cuset_cache(_cache_root):
    """Keep the tiny checkpoint the tests build out of the user's cache; restored after each
    module so other packages' tests see the environment they started with."""
    with _cache_env(_cache_root):
        yield


@pytest.fixture(scope="session")
def cuda_dataset(tmp_path_factory, _cache_root):
    """A builder-layout dataset of the bundled CUDA programs (plus one test-split record)."""
    from cuset_testdata import corpus_records, make_record, write_dataset

    from cuset.tiny import corpus_programs

    recs = corpus_records()
    recs.append(make_record("relu", corpus_programs()["relu"], rec_id="held-out", split="test"))
    return write_dataset(recs, tmp_path_factory.mktemp("cuda-ds"))


@pytest.fixture(scope="session")
def warm_model(cuda_dataset, tmp_path_factory, _cache_root):
    """The tiny model after a short full SFT on the corpus, so token confidences are spread
    over (0, 1) as in an instruct model, rather than all near 1/vocab."""
    from pathlib import Path

    from cuset.config import load_config
    from cuset.trainer import train

    out = tmp_path_factory.mktemp("warm")
    cfg = load_config(Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml", [
        f"data.path={cuda_dataset}", f"training.output_dir={out}", "training.disable_tqdm=true",
        "loss.method=sft", "lora.enabled=false", "training.max_steps=40", "training.learning_rate=5e-3",
        "training.gradient_accumulation_steps=1", "data.max_length=512", "training.report_to=[]",
        "training.logging_steps=40",
    ])
    with _cache_env(_cache_root):
        train(cfg)
    return out / "final"


@pytest.fixture(scope="session")
def lora_run(cuda_dataset, tmp_path_factory, _cache_root):
    """A `cuset train` output folder: two LoRA steps on the tiny model at a learning rate high
    enough that the adapter changes greedy output (exported by test_export, the GRPO warm start
    of test_grpo)."""
    from pathlib import Path

    from cuset.config import load_config
    from cuset.trainer import train

    out = tmp_path_factory.mktemp("lora-run")
    cfg = load_config(Path(__file__).resolve().parents[2] / "cuset" / "configs" / "tiny.yaml", [
        f"data.path={cuda_dataset}", f"training.output_dir={out}", "training.disable_tqdm=true",
        "loss.method=sft", "training.max_steps=2", "training.learning_rate=2e-2",
        "training.gradient_accumulation_steps=1", "data.max_length=256", "training.report_to=[]",
        "training.save_strategy=steps", "training.save_steps=1",
    ])
    with _cache_env(_cache_root):
        train(cfg)
    return out
