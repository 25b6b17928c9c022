"""An output head that returns per-token target statistics instead of full logits.

It replaces the model's `lm_head` and holds the same weight Parameter under the same name
(`lm_head.weight`), so checkpoints, weight tying and LoRA's "all linear layers" (which skips the
output layer) are unchanged. Running inside the model's own forward matters for sharded
training: FSDP and DeepSpeed ZeRO-3 gather a module's parameters around its forward, so the
weight is complete here but not when read from outside.

Without a pending request it behaves as the linear layer it replaced (generation, evaluation).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from .errors import CusetError
from .logprobs import TokenStats, chunked_target_stats


@dataclass
class HeadRequest:
    targets: Tensor
    """[B, T] target id predicted at each position, -100 where there is none."""
    top_k: int = 0
    ref_hidden: Tensor | None = None
    """[N, H] reference final hidden states at the valid target positions (ASFT)."""
    capture_hidden: bool = False
    """Return the valid-position hidden states themselves (the reference pass of ASFT)."""
    chunk_tokens: int | None = None


class TokenStatsHead(nn.Module):
    def __init__(self, linear: nn.Linear):
        super().__init__()
        if getattr(linear, "bias", None) is not None:
            raise CusetError("the model's output layer has a bias, which the chunked head does not support")
        self.weight = linear.weight
        self.in_features = linear.in_features
        self.out_features = linear.out_features
        self.request: HeadRequest | None = None

    def forward(self, hidden: Tensor) -> Tensor:
        req = self.request
        if req is None:
            return nn.functional.linear(hidden, self.weight)
        valid = req.targets.ne(-100)
        if valid.shape != hidden.shape[:2]:
            raise RuntimeError(
                f"head request targets {tuple(valid.shape)} do not match hidden states "
                f"{tuple(hidden.shape[:2])}"
            )
        h = hidden[valid]
        if req.capture_hidden:
            return h
        logp, ent, kl = chunked_target_stats(
            h, self.weight, req.targets[valid], ref_hidden=req.ref_hidden, top_k=req.top_k,
            chunk_tokens=req.chunk_tokens,
        )
        packed = torch.zeros(*valid.shape, 3, dtype=torch.float32, device=hidden.device)
        packed = packed.index_put((valid,), torch.stack([logp, ent, kl], dim=-1))
        return packed


def install_head(model: nn.Module) -> TokenStatsHead:
    """Swap the causal LM's output layer for a `TokenStatsHead` (idempotent)."""
    out = model.get_output_embeddings()
    if isinstance(out, TokenStatsHead):
        return out
    if not isinstance(out, nn.Linear):
        raise CusetError(f"the model's output layer is {type(out).__name__}, not a linear layer")
    cfg = getattr(model, "config", None)
    if cfg is not None and getattr(cfg, "final_logit_softcapping", None):
        raise CusetError("models that soft-cap their logits are not supported by the chunked head")
    head = TokenStatsHead(out)
    model.set_output_embeddings(head)
    return head


def find_head(model: nn.Module) -> TokenStatsHead:
    for m in model.modules():
        if isinstance(m, TokenStatsHead):
            return m
    raise RuntimeError("the model has no TokenStatsHead; call install_head first")


@contextlib.contextmanager
def head_request(head: TokenStatsHead, req: HeadRequest) -> Iterator[None]:
    head.request = req
    try:
        yield
    finally:
        head.request = None


def unpack(packed: Tensor, *, top_k: int, has_ref: bool) -> TokenStats:
    return TokenStats(
        logprob=packed[..., 0],
        entropy=packed[..., 1] if top_k else None,
        kl=packed[..., 2] if has_ref else None,
    )
