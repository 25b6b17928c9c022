"""Writing an export folder: the LoRA adapter as it is, or the adapter merged into its base model,
each with the tokenizer and chat template, in the layout `from_pretrained` and vLLM read."""

from __future__ import annotations

import inspect
import shutil
from pathlib import Path
from typing import Any

from ..errors import CusetError
from .source import RunWeights, base_model, trust_remote_code

DTYPES = ("auto", "float32", "bfloat16", "float16")


def _base_or_none(weights: RunWeights) -> str | None:
    try:
        return base_model(weights)
    except CusetError:
        return None


def _try_tokenizer(source: str | Path, trc: bool) -> Any | None:
    from transformers import AutoTokenizer

    try:
        return AutoTokenizer.from_pretrained(str(source), trust_remote_code=trc)
    except Exception:  # noqa: BLE001 - any loader failure means: try the next source
        return None


def load_tokenizer(weights: RunWeights, base: str | None) -> Any:
    """The tokenizer saved with the weights (it carries the chat template the run trained
    with); the base model's, with the run config's template, for folders saved without one."""
    trc = trust_remote_code(weights)
    tok = _try_tokenizer(weights.folder, trc)
    if tok is None:
        # looked up only now: resolving a builtin base model builds it
        base = base or (_base_or_none(weights) if weights.kind == "adapter" else None)
        tok = _try_tokenizer(base, trc) if base else None
    if tok is not None:
        template = weights.run_config.get("model", {}).get("chat_template")
        if not tok.chat_template and template:
            p = Path(template)
            tok.chat_template = p.read_text() if len(template) < 4096 and p.is_file() else template
        return tok
    raise CusetError(f"cannot load a tokenizer from {str(weights.folder)!r} or the base model {base!r}")


def _write_tokenizer(tok: Any, dest: Path) -> None:
    if not tok.chat_template:
        raise CusetError("the run's tokenizer has no chat template; set model.chat_template in the "
                         "run config or export from a run that trained with one")
    tok.save_pretrained(str(dest))


def export_adapter(weights: RunWeights, dest: Path, base: str | None = None, *,
                   warm: Any = None) -> None:
    """The adapter weights (safetensors) and config, the tokenizer and chat template; with a
    warm start (`cuset.warm_start.WarmStart`) its record, which cuset's loaders follow."""
    from ..warm_start import write as write_warm_start

    shutil.copyfile(weights.folder / "adapter_config.json", dest / "adapter_config.json")
    write_warm_start(warm, dest)
    st = weights.folder / "adapter_model.safetensors"
    if st.is_file():
        shutil.copyfile(st, dest / st.name)
    else:
        import torch
        from safetensors.torch import save_file

        state = torch.load(weights.folder / "adapter_model.bin", map_location="cpu", weights_only=True)
        save_file({k: v.contiguous() for k, v in state.items()}, str(dest / st.name),
                  metadata={"format": "pt"})
    _write_tokenizer(load_tokenizer(weights, base), dest)


def _torch_dtype(name: str) -> Any:
    import torch

    if name not in DTYPES:
        raise CusetError(f"--dtype must be one of {', '.join(DTYPES)} (got {name!r})")
    return "auto" if name == "auto" else getattr(torch, name)


def _load_causal_lm(path: str, dtype: str, trc: bool) -> Any:
    from transformers import AutoModelForCausalLM

    try:
        return AutoModelForCausalLM.from_pretrained(path, dtype=_torch_dtype(dtype), trust_remote_code=trc)
    except CusetError:
        raise
    except Exception as e:  # noqa: BLE001 - the loader raises many types for a bad folder
        raise CusetError(f"cannot load the model {path!r}: {e}") from None


def _save_model(model: Any, tok: Any, dest: Path, max_shard_size: str) -> None:
    # training turns the KV cache off; an exported model is for generation
    model.config.use_cache = True
    gen = getattr(model, "generation_config", None)
    if gen is not None:
        # without an eos id, generation (and vLLM) would not stop at the end of a turn
        if gen.eos_token_id is None:
            gen.eos_token_id = tok.eos_token_id
        if gen.pad_token_id is None:
            gen.pad_token_id = tok.pad_token_id
    kwargs: dict[str, Any] = {"max_shard_size": max_shard_size}
    # transformers 5 always writes safetensors and dropped the flag; older ones need it
    if "safe_serialization" in inspect.signature(model.save_pretrained).parameters:
        kwargs["safe_serialization"] = True
    model.save_pretrained(str(dest), **kwargs)


def export_merged(weights: RunWeights, dest: Path, base: str | None, *, dtype: str = "auto",
                  max_shard_size: str = "5GB", warm: Any = None) -> None:
    """Base model + adapter merged into plain weights (`merge_and_unload`). With a warm start
    (`cuset.warm_start.WarmStart`) the adapter goes on the policy the run started from: `base`
    with the SFT adapter merged, or the full SFT model."""
    from peft import PeftModel

    from ..warm_start import load_start_model

    tok = load_tokenizer(weights, base)
    trc = trust_remote_code(weights)
    if warm is not None:
        model = load_start_model(warm, base, f"the adapter in {str(weights.folder)!r}",
                                 dtype=_torch_dtype(dtype), trust_remote_code=trc)
        target = warm.folder if warm.kind == "full" else f"{base} + {warm.folder}"
    elif base is None:
        raise CusetError(f"no base model for the adapter in {str(weights.folder)!r}")
    else:
        model, target = _load_causal_lm(base, dtype, trc), base
    try:
        peft_model = PeftModel.from_pretrained(model, str(weights.folder))
    except Exception as e:  # noqa: BLE001 - a mismatched adapter fails in many ways
        raise CusetError(f"cannot apply the adapter {str(weights.folder)!r} to {target!r}: {e}") from None
    merged = peft_model.merge_and_unload()
    _save_model(merged, tok, dest, max_shard_size)
    _write_tokenizer(tok, dest)


def export_full(weights: RunWeights, dest: Path, *, dtype: str = "auto",
                max_shard_size: str = "5GB") -> None:
    """A fully fine-tuned model, re-saved for inference (KV cache on, safetensors)."""
    tok = load_tokenizer(weights, None)
    model = _load_causal_lm(str(weights.folder), dtype, trust_remote_code(weights))
    _save_model(model, tok, dest, max_shard_size)
    _write_tokenizer(tok, dest)
