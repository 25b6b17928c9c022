"""YAML configs: the paper's setups load, unknown keys and bad values are named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cuset.config import load_config
from cuset.errors import CusetError

CONFIGS = Path(__file__).resolve().parents[2] / "cuset" / "configs"
PAPER = ["qwen2.5-coder-7b-instruct", "deepseek-coder-6.7b-instruct", "seed-coder-8b-instruct",
         "qwen3-4b", "qwen3-14b", "qwen2.5-coder-32b-instruct"]


@pytest.mark.parametrize("name", PAPER)
def test_paper_configs_hold_the_paper_hyperparameters(name):
    cfg = load_config(CONFIGS / f"{name}.yaml")
    assert cfg.lora.enabled and (cfg.lora.r, cfg.lora.alpha, cfg.lora.dropout) == (8, 16, 0.05)
    assert cfg.lora.target_modules == "all-linear"
    assert cfg.training.learning_rate == 1e-4 and cfg.training.num_train_epochs == 3
    assert cfg.data.max_length == 4096 and cfg.training.per_device_train_batch_size == 1
    assert (cfg.loss.method, cfg.loss.tau, cfg.loss.lam, cfg.loss.window) == ("cuset", 0.1, 1.0, 256)
    assert cfg.training.bf16 == "auto"


def test_overrides_are_typed_and_dotted():
    cfg = load_config(CONFIGS / "tiny.yaml", ["loss.tau=0.25", "loss.use_region=false",
                                              "training.learning_rate=2e-5", "lora.target_modules=[q_proj,v_proj]"])
    assert cfg.loss.tau == 0.25 and cfg.loss.use_region is False
    assert cfg.training.learning_rate == 2e-5
    assert cfg.lora.target_modules == ["q_proj", "v_proj"]


@pytest.mark.parametrize("override,message", [
    ("loss.windw=3", "unknown config key 'loss.windw'"),
    ("optimizer.lr=3", "unknown config key 'optimizer'"),
    ("loss.method=lora", "'loss.method': 'lora' is not one of"),
    ("loss.window=0", "loss.window must be at least 1"),
    ("training.max_steps=many", "'training.max_steps': expected an integer"),
    ("loss.use_region=maybe", "'loss.use_region': expected true/false"),
    ("no_equals_sign", "not of the form key=value"),
])
def test_bad_keys_and_values_are_named(override, message):
    with pytest.raises(CusetError, match=message.replace("(", r"\(")):
        load_config(CONFIGS / "tiny.yaml", [override])


def test_asft_needs_lora():
    with pytest.raises(CusetError, match="asft needs lora.enabled"):
        load_config(CONFIGS / "tiny.yaml", ["loss.method=asft", "lora.enabled=false"])


def test_launch_configs_are_valid_for_accelerate():
    from accelerate.commands.config.config_args import load_config_from_file

    kinds = {}
    for f in sorted((CONFIGS / "accelerate").glob("*.yaml")):
        c = load_config_from_file(str(f))
        kinds[f.stem] = c.distributed_type.value
        ds = (c.deepspeed_config or {}).get("deepspeed_config_file")
        if ds:
            stage = json.loads((CONFIGS.parents[1] / ds).read_text())["zero_optimization"]["stage"]
            assert f.stem.endswith(str(stage))
    assert kinds == {"ddp": "MULTI_GPU", "fsdp": "FSDP", "deepspeed_zero2": "DEEPSPEED",
                     "deepspeed_zero3": "DEEPSPEED"}
