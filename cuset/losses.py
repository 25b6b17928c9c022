"""The CuSeT objective and its baselines, as per-sample sums over response tokens.

Every method maps the shared per-token statistics (`TokenStats`: log-probability of the target
token, and where needed the top-K entropy or the KL to the reference) plus the response-token
mask `[B, T]` and the CUDA mask `[B, T]` to a per-sample loss `[B]`. The trainer sums these and
divides by the number of target tokens (or samples) of the whole optimizer step, so
gradient accumulation and data parallelism do not change the objective.

Per-token weights built from probabilities (confidence, entropy, sample weights) are detached:
the paper's `sg(.)`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import torch
from torch import Tensor

from .config import LossConfig
from .logprobs import TokenStats
from .packing import regroup


@dataclass
class LossOutput:
    per_sample: Tensor
    """[B] loss of each sample (sum over its response tokens, times its weight)."""
    metrics: dict[str, Tensor] = field(default_factory=dict)
    """Detached sums for logging; ratios are formed after summing over micro-batches."""


def _base_metrics(loss_mask: Tensor, cuda_mask: Tensor) -> dict[str, Tensor]:
    has = loss_mask.any(dim=1)
    return {
        "tokens": loss_mask.sum().float(),
        "samples": has.sum().float(),
        "cuda_tokens": (cuda_mask & loss_mask).sum().float(),
    }


def _nll_sum(logprob: Tensor, weight: Tensor, loss_mask: Tensor) -> Tensor:
    # torch.where rather than multiplication so padding (logprob 0, weight 0) stays exactly 0
    return torch.where(loss_mask, -weight * logprob, torch.zeros_like(logprob)).sum(dim=1)


def sft(stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig) -> LossOutput:
    """`-sum_t log p_t` over response tokens."""
    ones = torch.ones_like(stats.logprob)
    return LossOutput(_nll_sum(stats.logprob, ones, loss_mask), _base_metrics(loss_mask, cuda_mask))


def dft(stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig) -> LossOutput:
    """`-sum_t sg(p_t) log p_t`."""
    p = stats.logprob.detach().exp()
    m = _base_metrics(loss_mask, cuda_mask)
    m["token_weight_sum"] = (p * loss_mask).sum()
    return LossOutput(_nll_sum(stats.logprob, p, loss_mask), m)


def eaft(stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig) -> LossOutput:
    """`-sum_t (H_t / ln K)^alpha log p_t`, H_t the entropy of the top-K softmax (detached)."""
    if stats.entropy is None:
        raise ValueError("eaft needs the top-K entropy in TokenStats")
    w = (stats.entropy.detach() / math.log(cfg.eaft_top_k)).clamp_min(0.0) ** cfg.eaft_alpha
    m = _base_metrics(loss_mask, cuda_mask)
    m["token_weight_sum"] = (w * loss_mask).sum()
    return LossOutput(_nll_sum(stats.logprob, w, loss_mask), m)


def asft(stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig) -> LossOutput:
    """DFT plus `kl_weight * KL(pi_ref || pi_theta)` at every response token."""
    if stats.kl is None:
        raise ValueError("asft needs the per-token KL to the reference in TokenStats")
    out = dft(stats, loss_mask, cuda_mask, cfg)
    kl = torch.where(loss_mask, stats.kl, torch.zeros_like(stats.kl))
    out.per_sample = out.per_sample + cfg.asft_kl_weight * kl.sum(dim=1)
    out.metrics["kl_sum"] = kl.detach().sum()
    return out


def profit(stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig) -> LossOutput:
    """`-sum_t 1[sg(p_t) >= tau] log p_t`."""
    keep = (stats.logprob.detach().exp() >= cfg.profit_tau) & loss_mask
    m = _base_metrics(loss_mask, cuda_mask)
    m["kept_confidence"] = keep.sum().float()
    return LossOutput(_nll_sum(stats.logprob, keep.to(stats.logprob.dtype), loss_mask), m)


def window_means(conf: Tensor, loss_mask: Tensor, window: int) -> Tensor:
    """`C_t`: mean confidence over the window of size `window` around each response token.

    Windows run over the sample's response tokens only (their rank r = 1..n among the masked
    positions), from `max(1, r - floor(l/2))` to `min(n, r + ceil(l/2) - 1)`; a response shorter
    than the window uses all of it. Returns [B, T] float64, zero off the response.
    """
    c = torch.where(loss_mask, conf.detach().double(), torch.zeros((), dtype=torch.float64, device=conf.device))
    n = loss_mask.sum(dim=1, keepdim=True)
    rank = loss_mask.long().cumsum(dim=1)
    csum = c.cumsum(dim=1)
    # prefix[b, k] = sum of the first k response confidences; every position with rank k holds
    # that same cumulative sum, so the scatter's duplicate writes agree.
    prefix = torch.zeros(c.shape[0], c.shape[1] + 1, dtype=torch.float64, device=c.device)
    prefix.scatter_(1, rank, csum)
    lo = (rank - window // 2).clamp_min(1)
    hi = torch.minimum(rank + (window + 1) // 2 - 1, n)
    short = n < window
    lo = torch.where(short, torch.ones_like(lo), lo)
    hi = torch.where(short, n.expand_as(hi), hi)
    lo = torch.where(loss_mask, lo, torch.ones_like(lo))
    hi = torch.where(loss_mask, hi, torch.ones_like(hi))
    total = prefix.gather(1, hi) - prefix.gather(1, lo - 1)
    means = total / (hi - lo + 1).double()
    return torch.where(loss_mask, means, torch.zeros_like(means))


def sample_weights(conf: Tensor, loss_mask: Tensor, window: int) -> Tensor:
    """`w_n = 1 - min_t C_t` over the response tokens (1 for a sample without any)."""
    means = window_means(conf, loss_mask, window)
    big = torch.full_like(means, math.inf)
    lowest = torch.where(loss_mask, means, big).amin(dim=1)
    return torch.where(loss_mask.any(dim=1), 1.0 - lowest, torch.ones_like(lowest))


def _cuset_parts(
    logprobs: Tensor, loss_mask: Tensor, cuda_mask: Tensor, *, tau: float, lam: float, window: int,
    use_confidence: bool, use_cuda_mask: bool, use_region: bool,
) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    loss_mask = loss_mask.bool()
    cuda_mask = cuda_mask.bool() & loss_mask
    conf = logprobs.detach().exp()
    # A part that is switched off drops out of M_t: without the confidence mask every response
    # token counts once, without the CUDA mask no token gets the extra lambda.
    keep = (conf > tau) & loss_mask if use_confidence else loss_mask
    m = keep.to(logprobs.dtype)
    if use_cuda_mask:
        m = m + lam * cuda_mask.to(logprobs.dtype)
    if use_region:
        w = sample_weights(conf, loss_mask, window).to(logprobs.dtype)
    else:
        w = torch.ones(logprobs.shape[0], dtype=logprobs.dtype, device=logprobs.device)
    per_sample = w * _nll_sum(logprobs, m, loss_mask)
    return per_sample, keep, m, w


def cuset_objective(
    logprobs: Tensor,
    loss_mask: Tensor,
    cuda_mask: Tensor,
    tau: float = 0.1,
    lam: float = 1.0,
    window: int = 256,
    use_confidence: bool = True,
    use_cuda_mask: bool = True,
    use_region: bool = True,
) -> Tensor:
    """Each sample's `w_n * sum_t M_t * (-log p_t)` over its response tokens ([B]).

    `logprobs` [B, T] are the log-probabilities of the target tokens; `loss_mask` marks response
    tokens and `cuda_mask` tokens in a kernel body or launch configuration ([B, T] bool).
    `M_t = 1[c_t > tau] + lam * 1[cuda_t]` with `c_t = exp(logprob_t)` (no gradient);
    `w_n = 1 - min_t C_t` with `C_t` the windowed mean confidence (see `window_means`).
    Switched off: `use_region` gives `w_n = 1`; `use_cuda_mask` leaves the confidence mask
    alone; `use_confidence` replaces `1[c_t > tau]` by 1 (both off: every response token once).
    """
    return _cuset_parts(
        logprobs, loss_mask, cuda_mask, tau=tau, lam=lam, window=window,
        use_confidence=use_confidence, use_cuda_mask=use_cuda_mask, use_region=use_region,
    )[0]


def cuset(stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig) -> LossOutput:
    per_sample, keep, m, w = _cuset_parts(
        stats.logprob, loss_mask, cuda_mask, tau=cfg.tau, lam=cfg.lam, window=cfg.window,
        use_confidence=cfg.use_confidence, use_cuda_mask=cfg.use_cuda_mask, use_region=cfg.use_region,
    )
    metrics = _base_metrics(loss_mask.bool(), cuda_mask.bool())
    has = loss_mask.bool().any(dim=1)
    metrics["kept_confidence"] = keep.sum().float()
    metrics["token_weight_sum"] = torch.where(loss_mask.bool(), m.detach(), torch.zeros_like(m)).sum()
    metrics["sample_weight_sum"] = torch.where(has, w.detach(), torch.zeros_like(w)).sum()
    return LossOutput(per_sample, metrics)


LOSSES: dict[str, Callable[[TokenStats, Tensor, Tensor, LossConfig], LossOutput]] = {
    "sft": sft, "dft": dft, "eaft": eaft, "asft": asft, "profit": profit, "cuset": cuset,
}


def compute(
    stats: TokenStats, loss_mask: Tensor, cuda_mask: Tensor, cfg: LossConfig,
    seq_idx: Tensor | None = None, positions: Tensor | None = None,
) -> LossOutput:
    """The method's per-sample losses. Packed rows (`seq_idx` [B, T], the batch-wide example of
    each token, -1 for padding; `positions` its offset in that example) are first laid out one
    example per row, so masks, windows and sample weights never cross examples and
    `per_sample` has one entry per example."""
    loss_mask, cuda_mask = loss_mask.bool(), cuda_mask.bool()
    if seq_idx is not None:
        if positions is None:
            raise ValueError("packed batches need the position ids with seq_idx")
        samples = int(seq_idx.max()) + 1 if seq_idx.numel() else 0

        def per_example(x: Tensor | None) -> Tensor | None:
            return None if x is None else regroup(x, seq_idx, positions, samples)

        stats = TokenStats(per_example(stats.logprob), per_example(stats.entropy),
                           per_example(stats.kl))
        loss_mask, cuda_mask = per_example(loss_mask), per_example(cuda_mask)
    return LOSSES[cfg.method](stats, loss_mask, cuda_mask, cfg)


def summarize(metrics: dict[str, float]) -> dict[str, float]:
    """Turn summed metrics into the logged shares and means."""
    tokens = metrics.get("tokens", 0.0)
    samples = metrics.get("samples", 0.0)
    out: dict[str, float] = {}
    if tokens:
        out["mask/cuda_token_share"] = metrics.get("cuda_tokens", 0.0) / tokens
        if "kept_confidence" in metrics:
            out["mask/confidence_kept_share"] = metrics["kept_confidence"] / tokens
        if "token_weight_sum" in metrics:
            out["mask/mean_token_weight"] = metrics["token_weight_sum"] / tokens
        if "kl_sum" in metrics:
            out["asft/mean_kl"] = metrics["kl_sum"] / tokens
    if samples and "sample_weight_sum" in metrics:
        out["mask/mean_sample_weight"] = metrics["sample_weight_sum"] / samples
    return out
