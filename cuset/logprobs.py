"""Per-token log-probabilities of the target tokens, computed in chunks from final hidden states.

Full-vocabulary fp32 logits for a 4096-token sequence and a 152k vocabulary take 2.5 GB, and
autograd would keep that plus the softmax gradient alive. Here the logits of one chunk of
tokens exist at a time: the forward keeps only the log-sum-exp per token, and the backward
recomputes each chunk's logits to form the gradient `g * (onehot - softmax)`.

The same pass yields the per-token quantities that need the whole vocabulary: the entropy of
the top-K softmax (EAFT, no gradient) and KL(pi_ref || pi_theta) against reference hidden
states pushed through the same output matrix (ASFT; gradient `p_theta - p_ref`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

DEFAULT_LOGIT_BUDGET = 1 << 25
"""Logits per chunk when no chunk size is given (128 MB in fp32)."""


def default_chunk_tokens(vocab_size: int) -> int:
    return max(1, DEFAULT_LOGIT_BUDGET // max(1, vocab_size))


def _logits(h: Tensor, weight: Tensor) -> Tensor:
    return (h.to(weight.dtype) @ weight.t()).float()


def _topk_entropy(z: Tensor, k: int) -> Tensor:
    top = z.topk(min(k, z.shape[-1]), dim=-1).values
    logq = torch.log_softmax(top, dim=-1)
    return -(logq.exp() * logq).sum(-1)


class _ChunkedTargetStats(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h, weight, targets, ref_h, chunk, top_k):  # type: ignore[override]
        n = h.shape[0]
        f32 = dict(dtype=torch.float32, device=h.device)
        logp = torch.empty(n, **f32)
        lse = torch.empty(n, **f32)
        entropy = torch.zeros(n, **f32)
        kl = torch.zeros(n, **f32)
        ref_lse = torch.empty(n if ref_h is not None else 0, **f32)
        with torch.no_grad(), torch.autocast(h.device.type, enabled=False):
            for s in range(0, n, chunk):
                e = min(n, s + chunk)
                z = _logits(h[s:e], weight)
                picked = z.gather(1, targets[s:e, None]).squeeze(1)
                if top_k:
                    entropy[s:e] = _topk_entropy(z, top_k)
                if ref_h is None:
                    # log-sum-exp in place: z is not needed afterwards
                    m = z.amax(dim=-1)
                    lse_c = z.sub_(m[:, None]).exp_().sum(dim=-1).log_().add_(m)
                else:
                    lse_c = torch.logsumexp(z, dim=-1)
                lse[s:e] = lse_c
                logp[s:e] = picked - lse_c
                if ref_h is not None:
                    zr = _logits(ref_h[s:e], weight)
                    ref_lse_c = torch.logsumexp(zr, dim=-1)
                    ref_lse[s:e] = ref_lse_c
                    log_ref = zr - ref_lse_c[:, None]
                    kl[s:e] = (log_ref.exp() * (log_ref - (z - lse_c[:, None]))).sum(-1)
        ctx.chunk = chunk
        ctx.has_ref = ref_h is not None
        ctx.save_for_backward(h, weight, targets, lse, ref_h if ref_h is not None else h, ref_lse)
        # one call: each call replaces the previous set of non-differentiable outputs
        ctx.mark_non_differentiable(*([entropy] if ref_h is not None else [entropy, kl]))
        return logp, entropy, kl

    @staticmethod
    def backward(ctx, g_logp, g_entropy, g_kl):  # type: ignore[override]
        h, weight, targets, lse, ref_h, ref_lse = ctx.saved_tensors
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        grad_h = torch.empty_like(h) if need_h else None
        grad_w = torch.zeros(weight.shape, dtype=torch.float32, device=weight.device) if need_w else None
        use_kl = ctx.has_ref and g_kl is not None
        n = h.shape[0]
        with torch.autocast(h.device.type, enabled=False):
            for s in range(0, n, ctx.chunk):
                e = min(n, s + ctx.chunk)
                # in place throughout: one chunk-sized buffer (two with a reference)
                p = _logits(h[s:e], weight).sub_(lse[s:e, None]).exp_()
                gl = g_logp[s:e] if g_logp is not None else torch.zeros(e - s, device=h.device)
                # d logp / dz = onehot - p;  d KL(ref || theta) / dz = p - p_ref
                if use_kl:
                    gk = g_kl[s:e, None]
                    p_ref = _logits(ref_h[s:e], weight).sub_(ref_lse[s:e, None]).exp_()
                    grad_z = p.mul_(gk - gl[:, None]).sub_(p_ref.mul_(gk))
                    del p_ref
                else:
                    grad_z = p.mul_(-gl[:, None])
                grad_z.scatter_add_(1, targets[s:e, None], gl[:, None])
                grad_z = grad_z.to(weight.dtype)
                if need_h:
                    grad_h[s:e] = (grad_z @ weight).to(h.dtype)
                if need_w:
                    grad_w += (grad_z.t() @ h[s:e].to(weight.dtype)).float()
        if grad_w is not None:
            grad_w = grad_w.to(weight.dtype)
        return grad_h, grad_w, None, None, None, None


def chunked_target_stats(
    hidden: Tensor,
    weight: Tensor,
    targets: Tensor,
    *,
    ref_hidden: Tensor | None = None,
    top_k: int = 0,
    chunk_tokens: int | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """Log-probability of `targets` under `softmax(hidden @ weight.T)`, for flat token rows.

    `hidden` [N, H], `weight` [V, H], `targets` [N] (valid vocabulary ids). Returns fp32
    `(logprob [N], topk_entropy [N], kl [N])`: the entropy is zeros unless `top_k`, the KL zeros
    unless `ref_hidden` [N, H] is given. Gradients flow to `hidden` and `weight` through
    `logprob` and `kl`; the entropy carries none.
    """
    chunk = chunk_tokens or default_chunk_tokens(weight.shape[0])
    return _ChunkedTargetStats.apply(hidden, weight, targets, ref_hidden, chunk, top_k)


@dataclass
class TokenStats:
    """Per-token quantities aligned with the prediction positions `[B, T]` (zeros elsewhere)."""

    logprob: Tensor
    entropy: Tensor | None = None
    kl: Tensor | None = None


def shift_targets(labels: Tensor) -> Tensor:
    """`targets[:, t]` is the token predicted at position t, i.e. `labels[:, t + 1]` (-100: none)."""
    out = torch.full_like(labels, -100)
    out[:, :-1] = labels[:, 1:]
    return out


def full_logits_target_stats(
    hidden: Tensor, weight: Tensor, targets: Tensor, *, ref_hidden: Tensor | None = None, top_k: int = 0
) -> tuple[Tensor, Tensor, Tensor]:
    """The reference implementation that materialises all logits (for tests and benchmarks)."""
    z = _logits(hidden, weight)
    logq = torch.log_softmax(z, dim=-1)
    logp = logq.gather(1, targets[:, None]).squeeze(1)
    entropy = _topk_entropy(z.detach(), top_k) if top_k else torch.zeros_like(logp)
    if ref_hidden is not None:
        log_ref = torch.log_softmax(_logits(ref_hidden, weight), dim=-1).detach()
        kl = (log_ref.exp() * (log_ref - logq)).sum(-1)
    else:
        kl = torch.zeros_like(logp)
    return logp, entropy, kl
