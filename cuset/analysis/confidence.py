"""Per-token confidence c_t = p(y_t | x, y_<t) of each response token under a model.

Records are tokenised by `cuset.data.prepare` exactly as for training (chat template, response
labels through the end-of-turn marker, the any-overlap CUDA mask, truncation to `max_length`),
so "response token" and "CUDA-sensitive" mean here what they mean to the CuSeT loss. The
log-probabilities come from the trainer's chunked head, which never materialises the logits of
a whole sequence (a 152k vocabulary times 4096 tokens would not fit on a CPU).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..data import Example
from ..errors import CusetError
from ..head import HeadRequest, find_head, head_request, install_head
from ..logprobs import shift_targets

TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "tokenizer.model", "vocab.json")


@dataclass
class SampleConfidence:
    id: str
    confidence: np.ndarray
    """[n] c_t of each response token, in order."""
    sensitive: np.ndarray
    """[n] bool: the token is in the CUDA mask (kernel_body or launch_config)."""


@dataclass
class LoadedModel:
    model: torch.nn.Module
    tokenizer: Any
    device: torch.device


def has_tokenizer(folder: str | Path) -> bool:
    p = Path(folder)
    return any((p / f).is_file() for f in TOKENIZER_FILES)


def pick_device(name: str) -> torch.device:
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        return torch.device(name)
    except RuntimeError as e:
        raise CusetError(f"unknown device {name!r}: {e}") from None


def load(
    model_path: str, *, adapter: str | None = None, device: torch.device,
    dtype: torch.dtype = torch.float32, chat_template: str | None = None,
    trust_remote_code: bool = False,
) -> LoadedModel:
    """The causal LM of `model_path` (plus a LoRA adapter from `cuset train`) in eval mode."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    mp = Path(model_path)
    if not mp.is_dir():
        raise CusetError(f"model folder {model_path!r} does not exist")
    # the trainer saves the tokenizer next to the adapter; the base folder may lack one
    tok_dir = mp if has_tokenizer(mp) else Path(adapter) if adapter and has_tokenizer(adapter) else None
    if tok_dir is None:
        raise CusetError(
            f"model folder {model_path!r} has no tokenizer (none of {', '.join(TOKENIZER_FILES)})"
        )
    try:
        tok = AutoTokenizer.from_pretrained(str(tok_dir), trust_remote_code=trust_remote_code)
    except Exception as e:  # transformers raises many types for a broken tokenizer
        raise CusetError(f"cannot load the tokenizer of {str(tok_dir)!r}: {e}") from None
    if chat_template:
        p = Path(chat_template)
        tok.chat_template = p.read_text() if len(chat_template) < 4096 and p.is_file() else chat_template
    if adapter is not None and not (Path(adapter) / "adapter_config.json").is_file():
        raise CusetError(f"adapter folder {adapter!r} has no adapter_config.json")
    warm = None
    if adapter is not None:
        from ..warm_start import for_adapter, load_start_model, same_base

        warm = for_adapter(Path(adapter))
        if warm is not None and warm.kind == "adapter" and not same_base(warm, model_path):
            raise CusetError(f"adapter folder {adapter!r} was trained on top of "
                             f"{warm.base_model!r} with the SFT adapter {warm.folder!r} merged, "
                             f"not on {model_path!r}")
    if warm is not None:
        # the adapter was trained on top of an SFT warm start: rebuild that policy first
        model = load_start_model(warm, str(mp), f"adapter folder {adapter!r}", dtype=dtype,
                                 trust_remote_code=trust_remote_code)
    else:
        try:
            model = AutoModelForCausalLM.from_pretrained(
                str(mp), dtype=dtype, trust_remote_code=trust_remote_code
            )
        except Exception as e:
            raise CusetError(f"cannot load the model {model_path!r}: {e}") from None
    # before LoRA, as in training: the adapter's module names then match the trained ones
    install_head(model)
    if adapter is not None:
        from peft import PeftModel

        try:
            model = PeftModel.from_pretrained(model, adapter)
        except Exception as e:
            raise CusetError(f"cannot load the adapter {adapter!r}: {e}") from None
    model.to(device).eval()
    return LoadedModel(model, tok, device)


@torch.no_grad()
def sample_confidence(loaded: LoadedModel, ex: Example) -> SampleConfidence:
    """Confidences of the labelled tokens of one tokenised example."""
    ids = torch.tensor([ex.input_ids], device=loaded.device)
    labels = torch.tensor([ex.labels], device=loaded.device)
    targets = shift_targets(labels)
    with head_request(find_head(loaded.model), HeadRequest(targets)):
        packed = loaded.model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits
    logp = packed[0, :, 0]
    valid = targets[0].ne(-100)
    # position t predicts token t + 1: the mask of the predicted token is cuda_mask[t + 1]
    cuda = torch.tensor(ex.cuda_mask[1:] + [0], device=loaded.device).bool()
    conf = logp[valid].exp().double().cpu().numpy()
    return SampleConfidence(ex.id, conf, cuda[valid].cpu().numpy())

