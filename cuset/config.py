"""Training configuration: dataclasses loaded from YAML, with dotted `key=value` overrides.

A misspelt key is an error naming the key (silently ignoring it would train the wrong setup).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from .errors import CusetError

METHODS = ("sft", "dft", "eaft", "asft", "profit", "cuset")


@dataclass
class ModelConfig:
    name_or_path: str = "builtin:tiny"
    """A Hub id or local folder; `builtin:tiny` builds a tiny Qwen2 and a CUDA BPE tokenizer."""
    dtype: Literal["auto", "bfloat16", "float32"] = "auto"
    """`auto`: bfloat16 where the device supports it, else float32."""
    attn_implementation: str | None = "sdpa"
    chat_template: str | None = None
    """Jinja template (or a path to a file holding one) for tokenizers that have none."""
    trust_remote_code: bool = False
    gradient_checkpointing: bool = True


@dataclass
class LoraConfig:
    enabled: bool = True
    """False: full fine-tuning."""
    r: int = 8
    alpha: int = 16
    dropout: float = 0.05
    target_modules: str | list[str] = "all-linear"


@dataclass
class LossConfig:
    method: Literal["sft", "dft", "eaft", "asft", "profit", "cuset"] = "cuset"
    tau: float = 0.1
    """CuSeT confidence threshold (tokens with p > tau are kept)."""
    lam: float = 1.0
    """CuSeT weight added to tokens in a kernel body or launch configuration."""
    window: int = 256
    use_confidence: bool = True
    use_cuda_mask: bool = True
    use_region: bool = True
    profit_tau: float = 0.1
    eaft_top_k: int = 20
    eaft_alpha: float = 1.0
    asft_kl_weight: float = 0.1
    normalize: Literal["tokens", "samples"] = "tokens"
    """Divide the summed loss by the number of target tokens (the Hugging Face convention) or of
    samples (the paper's mean over samples), counted over all micro-batches and ranks of a step."""
    chunk_tokens: int | None = None
    """Tokens per log-probability chunk; None picks about 32M logits per chunk."""


@dataclass
class DataConfig:
    path: str | None = None
    """A folder in the Hub layout (`data/train-*.parquet`) or a Hub dataset id (`owner/name`),
    loaded with `datasets.load_dataset`."""
    split: str = "train"
    eval_split: str | None = "test"
    """Split evaluated during training (None: no evaluation); a dataset without it trains
    without evaluation, and says so."""
    max_samples: int | None = None
    """Use only the first N records of the training split (None: all)."""
    max_length: int = 4096
    system_prompt: str | None = None
    """Prepended as a system message when a record has none (None: leave messages as they are)."""
    packing: bool = False
    """Concatenate examples into rows of up to `max_length` tokens (greedy, in order), with
    position ids restarting at each example and no padding inside a row; attention, masks,
    confidence windows and sample weights stay per example."""


@dataclass
class TrainingConfig:
    output_dir: str = "runs/cuset"
    learning_rate: float = 1e-4
    num_train_epochs: float = 3.0
    max_steps: int = -1
    per_device_train_batch_size: int = 1
    gradient_accumulation_steps: int = 1
    lr_scheduler_type: str = "cosine"
    warmup: float = 0.1
    """A float in [0, 1): share of the steps used for linear warm-up; an integer: a step count."""
    weight_decay: float = 0.0
    max_grad_norm: float = 1.0
    optim: str = "adamw_torch"
    seed: int = 42
    bf16: Literal["auto", True, False] = "auto"
    logging_steps: int = 10
    save_strategy: str = "epoch"
    save_steps: int = 500
    save_total_limit: int | None = 2
    eval_strategy: str = "steps"
    """`no`, `steps` or `epoch`: plain NLL and token accuracy on `data.eval_split`."""
    eval_steps: int = 200
    per_device_eval_batch_size: int | None = None
    """None: the training micro-batch size."""
    resume_from_checkpoint: str | None = None
    """`latest` (the newest `checkpoint-*` in output_dir) or a checkpoint folder."""
    noop_check_steps: int = 3
    """Stop with an error if the first N optimizer steps all have zero loss (every target token
    masked out, so nothing is learnt); 0 turns the check off."""
    report_to: list[str] = field(default_factory=lambda: ["tensorboard"])
    ddp_backend: str | None = None
    dataloader_num_workers: int = 0
    disable_tqdm: bool = False


@dataclass
class TrainConfig:
    model: ModelConfig = field(default_factory=ModelConfig)
    lora: LoraConfig = field(default_factory=LoraConfig)
    loss: LossConfig = field(default_factory=LossConfig)
    data: DataConfig = field(default_factory=DataConfig)
    training: TrainingConfig = field(default_factory=TrainingConfig)


def _check_value(name: str, tp: Any, value: Any) -> Any:
    """Validate (and lightly coerce) one value against its annotation."""
    origin = typing.get_origin(tp)
    args = typing.get_args(tp)
    if origin is Literal:
        if value not in args:
            raise CusetError(f"config key {name!r}: {value!r} is not one of {list(args)}")
        return value
    if origin in (types.UnionType, typing.Union):
        if value is None and type(None) in args:
            return None
        errors = []
        for a in args:
            if a is type(None):
                continue
            try:
                return _check_value(name, a, value)
            except CusetError as e:
                errors.append(str(e))
        raise CusetError(f"config key {name!r}: {value!r} has the wrong type ({tp})")
    if origin is list:
        if not isinstance(value, list):
            raise CusetError(f"config key {name!r}: expected a list, got {value!r}")
        return [_check_value(name, args[0], v) for v in value]
    if tp is bool:
        if not isinstance(value, bool):
            raise CusetError(f"config key {name!r}: expected true/false, got {value!r}")
        return value
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise CusetError(f"config key {name!r}: expected an integer, got {value!r}")
        return value
    if tp is float:
        if isinstance(value, str):
            # YAML 1.1 reads `1e-4` (no dot) as a string
            try:
                value = float(value)
            except ValueError:
                pass
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise CusetError(f"config key {name!r}: expected a number, got {value!r}")
        return float(value)
    if tp is str:
        if not isinstance(value, str):
            raise CusetError(f"config key {name!r}: expected a string, got {value!r}")
        return value
    return value


STRATEGY_KEYS = frozenset({"training.save_strategy", "training.eval_strategy"})
"""Keys whose value `no` YAML 1.1 reads as False (`save_strategy: no`)."""


def _build(cls: type, data: dict[str, Any], prefix: str) -> Any:
    hints = typing.get_type_hints(cls)
    known = {f.name for f in dataclasses.fields(cls)}
    kwargs = {}
    for key, value in data.items():
        full = f"{prefix}{key}"
        if key not in known:
            raise CusetError(
                f"unknown config key {full!r} (known keys{' in ' + prefix[:-1] if prefix else ''}: "
                f"{', '.join(sorted(known))})"
            )
        tp = hints[key]
        if dataclasses.is_dataclass(tp):
            if not isinstance(value, dict):
                raise CusetError(f"config key {full!r} must be a mapping")
            kwargs[key] = _build(tp, value, f"{full}.")
        else:
            if full in STRATEGY_KEYS and value is False:
                value = "no"
            kwargs[key] = _check_value(full, tp, value)
    return cls(**kwargs)


def _parse_override(text: str) -> tuple[list[str], Any]:
    if "=" not in text:
        raise CusetError(f"override {text!r} is not of the form key=value (e.g. loss.tau=0.2)")
    key, raw = text.split("=", 1)
    # YAML gives numbers, booleans, lists and null the same spelling as in the config file.
    return key.strip().split("."), yaml.safe_load(raw) if raw.strip() else ""


def merge_overrides(data: dict[str, Any], overrides: list[str]) -> dict[str, Any]:
    for item in overrides:
        path, value = _parse_override(item)
        node = data
        for part in path[:-1]:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise CusetError(f"override {item!r}: {part!r} is not a section")
        node[path[-1]] = value
    return data


def config_from_dict(data: dict[str, Any]) -> TrainConfig:
    cfg = _build(TrainConfig, data, "")
    validate(cfg)
    return cfg


def read_config_data(path: str | Path | None, overrides: list[str] | None = None) -> dict[str, Any]:
    """A config file's sections (none for no file) with `key=value` overrides merged in; a
    missing file, bad YAML or a non-mapping is a CusetError naming the file."""
    data: dict[str, Any] = {}
    if path is not None:
        p = Path(path)
        if not p.is_file():
            raise CusetError(f"config file {str(p)!r} does not exist")
        try:
            loaded = yaml.safe_load(p.read_text())
        except yaml.YAMLError as e:
            raise CusetError(f"config file {str(p)!r} is not valid YAML: {e}") from None
        if loaded is not None and not isinstance(loaded, dict):
            raise CusetError(f"config file {str(p)!r} must hold a mapping of sections")
        data = loaded or {}
    return merge_overrides(data, overrides or [])


def load_config(path: str | Path | None, overrides: list[str] | None = None) -> TrainConfig:
    return config_from_dict(read_config_data(path, overrides))


def validate(cfg: TrainConfig) -> None:
    loss = cfg.loss
    if loss.window < 1:
        raise CusetError(f"loss.window must be at least 1 (got {loss.window})")
    if not 0.0 <= loss.tau <= 1.0 or not 0.0 <= loss.profit_tau <= 1.0:
        raise CusetError("loss.tau and loss.profit_tau are probabilities in [0, 1]")
    if loss.eaft_top_k < 2:
        raise CusetError(f"loss.eaft_top_k must be at least 2 (got {loss.eaft_top_k})")
    if loss.chunk_tokens is not None and loss.chunk_tokens < 1:
        raise CusetError("loss.chunk_tokens must be positive")
    if loss.method == "asft" and not cfg.lora.enabled:
        raise CusetError(
            "loss.method=asft needs lora.enabled=true: its reference policy is the model with its "
            "LoRA adapter disabled"
        )
    if cfg.data.max_length < 2:
        raise CusetError("data.max_length must be at least 2")
    if cfg.data.max_samples is not None and cfg.data.max_samples < 1:
        raise CusetError(f"data.max_samples must be at least 1 (got {cfg.data.max_samples})")
    t = cfg.training
    if t.eval_strategy not in ("no", "steps", "epoch"):
        raise CusetError(
            f"training.eval_strategy must be no, steps or epoch (got {t.eval_strategy!r})"
        )
    if t.eval_steps < 1:
        raise CusetError(f"training.eval_steps must be at least 1 (got {t.eval_steps})")
    if t.noop_check_steps < 0:
        raise CusetError(f"training.noop_check_steps must be 0 or more (got {t.noop_check_steps})")


def to_dict(cfg: TrainConfig) -> dict[str, Any]:
    return dataclasses.asdict(cfg)
