"""Loading the model and tokenizer, installing the chunked head, wrapping with LoRA."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from .config import TrainConfig
from .errors import CusetError
from .head import install_head

BUILTIN_PREFIX = "builtin:"


def resolve_model_path(name: str) -> str:
    if name.startswith(BUILTIN_PREFIX):
        which = name[len(BUILTIN_PREFIX):]
        if which != "tiny":
            raise CusetError(f"unknown builtin model {name!r} (known: builtin:tiny)")
        from .tiny import tiny_checkpoint

        return str(tiny_checkpoint())
    return name


def bf16_supported() -> bool:
    return torch.cuda.is_available() and torch.cuda.is_bf16_supported()


def use_bf16(cfg: TrainConfig) -> bool:
    if cfg.training.bf16 == "auto":
        return bf16_supported()
    return bool(cfg.training.bf16)


def model_dtype(cfg: TrainConfig) -> torch.dtype:
    d = cfg.model.dtype
    if d == "auto":
        # LoRA keeps the frozen base in bf16 (the paper's setup); full fine-tuning keeps fp32
        # master weights and trains under bf16 autocast.
        return torch.bfloat16 if use_bf16(cfg) and cfg.lora.enabled else torch.float32
    return getattr(torch, d)


def load_tokenizer(cfg: TrainConfig, path: str) -> Any:
    from transformers import AutoTokenizer

    try:
        tok = AutoTokenizer.from_pretrained(path, trust_remote_code=cfg.model.trust_remote_code)
    except Exception as e:
        raise CusetError(f"cannot load the tokenizer of {cfg.model.name_or_path!r}: {e}") from None
    tmpl = cfg.model.chat_template
    if tmpl:
        p = Path(tmpl)
        tok.chat_template = p.read_text() if len(tmpl) < 4096 and p.is_file() else tmpl
    if tok.pad_token_id is None:
        tok.pad_token = tok.eos_token
    return tok


def load_model(cfg: TrainConfig, path: str) -> torch.nn.Module:
    from transformers import AutoModelForCausalLM

    kwargs: dict[str, Any] = {"dtype": model_dtype(cfg), "trust_remote_code": cfg.model.trust_remote_code}
    if cfg.model.attn_implementation:
        kwargs["attn_implementation"] = cfg.model.attn_implementation
    try:
        model = AutoModelForCausalLM.from_pretrained(path, **kwargs)
    except Exception as e:
        raise CusetError(f"cannot load the model {cfg.model.name_or_path!r}: {e}") from None
    model.config.use_cache = False
    install_head(model)
    if cfg.lora.enabled:
        model = apply_lora(model, cfg)
    return model


def apply_lora(model: torch.nn.Module, cfg: TrainConfig) -> torch.nn.Module:
    from peft import LoraConfig, get_peft_model

    lc = LoraConfig(
        r=cfg.lora.r, lora_alpha=cfg.lora.alpha, lora_dropout=cfg.lora.dropout,
        target_modules=cfg.lora.target_modules, task_type="CAUSAL_LM", bias="none",
    )
    return get_peft_model(model, lc)
