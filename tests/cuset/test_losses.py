"""Every loss against values worked out by hand on small tensors."""

from __future__ import annotations

import itertools
import math

import pytest
import torch

from cuset.config import LossConfig
from cuset.logprobs import TokenStats
from cuset.losses import compute, cuset_objective, sample_weights, window_means

# One sample: 2 prompt tokens, 6 response tokens, 2 padding positions.
PROMPT_P = [0.01, 0.02]  # low confidences that would change every window if they leaked in
RESP_P = [0.9, 0.05, 0.5, 0.2, 0.8, 0.6]
RESP_CUDA = [False, False, True, True, False, False]


def _sample(pad: int = 2):
    probs = PROMPT_P + RESP_P + [1.0] * pad
    lp = torch.log(torch.tensor(probs, dtype=torch.float64))
    lp[len(PROMPT_P) + len(RESP_P):] = 0.0  # padding carries logprob 0, as the head returns
    mask = torch.tensor([False] * 2 + [True] * 6 + [False] * pad)
    # the prompt is marked CUDA on purpose: the response mask must win
    cuda = torch.tensor([True, True] + RESP_CUDA + [False] * pad)
    return lp, mask, cuda


def _hand_windows_l4() -> list[float]:
    c = RESP_P
    # l = 4: window of rank r is [max(1, r-2), min(6, r+1)] (1-based)
    return [
        (c[0] + c[1]) / 2,                 # r=1: [1, 2] (clipped at the start)
        (c[0] + c[1] + c[2]) / 3,          # r=2: [1, 3]
        (c[0] + c[1] + c[2] + c[3]) / 4,   # r=3: [1, 4]
        (c[1] + c[2] + c[3] + c[4]) / 4,   # r=4: [2, 5]
        (c[2] + c[3] + c[4] + c[5]) / 4,   # r=5: [3, 6]
        (c[3] + c[4] + c[5]) / 3,          # r=6: [4, 6] (clipped at the end)
    ]


def test_window_means_clip_at_both_ends():
    lp, mask, _ = _sample()
    got = window_means(lp.exp(), mask[None], 4)[0]
    assert got[mask].tolist() == pytest.approx(_hand_windows_l4(), abs=1e-12)
    assert got[~mask].abs().sum() == 0


def test_window_odd_length():
    lp, mask, _ = _sample()
    c = RESP_P
    # l = 3: [r-1, r+1]
    hand = [(c[0] + c[1]) / 2] + [(c[i - 1] + c[i] + c[i + 1]) / 3 for i in range(1, 5)] + [(c[4] + c[5]) / 2]
    assert window_means(lp.exp(), mask[None], 3)[0][mask].tolist() == pytest.approx(hand, abs=1e-12)
    # l = 1: each token alone
    assert window_means(lp.exp(), mask[None], 1)[0][mask].tolist() == pytest.approx(c, abs=1e-12)


@pytest.mark.parametrize("window", [7, 8, 256])
def test_response_shorter_than_window_uses_whole_response(window):
    lp, mask, _ = _sample()
    got = window_means(lp.exp(), mask[None], window)[0][mask]
    mean = sum(RESP_P) / 6
    assert got.tolist() == pytest.approx([mean] * 6, abs=1e-12)
    w = sample_weights(lp.exp()[None], mask[None], window)
    assert w.item() == pytest.approx(1 - mean, abs=1e-12)


def _hand_cuset(conf_on: bool, cuda_on: bool, region_on: bool, tau=0.1, lam=1.0) -> float:
    total = 0.0
    for p, cu in zip(RESP_P, RESP_CUDA, strict=True):
        m = (1.0 if p > tau else 0.0) if conf_on else 1.0
        if cuda_on and cu:
            m += lam
        total += m * -math.log(p)
    w = 1 - min(_hand_windows_l4()) if region_on else 1.0
    return w * total


@pytest.mark.parametrize("conf_on,cuda_on,region_on", list(itertools.product([True, False], repeat=3)))
def test_cuset_objective_every_ablation(conf_on, cuda_on, region_on):
    lp, mask, cuda = _sample()
    got = cuset_objective(lp[None], mask[None], cuda[None], tau=0.1, lam=1.0, window=4,
                          use_confidence=conf_on, use_cuda_mask=cuda_on, use_region=region_on)
    assert got.shape == (1,)
    assert got.item() == pytest.approx(_hand_cuset(conf_on, cuda_on, region_on), rel=1e-12)


def test_cuset_defaults_full_value():
    # all three parts on; M = [1, 0, 2, 2, 1, 1], w = 1 - 0.3875 (the r=4 window)
    lp, mask, cuda = _sample()
    nll = [-math.log(p) for p in RESP_P]
    hand = (1 - 0.3875) * (nll[0] + 0 + 2 * nll[2] + 2 * nll[3] + nll[4] + nll[5])
    got = cuset_objective(lp[None], mask[None], cuda[None], window=4)
    assert got.item() == pytest.approx(hand, rel=1e-12)


def test_lambda_scales_cuda_tokens():
    lp, mask, cuda = _sample()
    got = cuset_objective(lp[None], mask[None], cuda[None], lam=0.5, window=4, use_region=False)
    assert got.item() == pytest.approx(_hand_cuset(True, True, False, lam=0.5), rel=1e-12)


def test_batch_with_padding_equals_rows_alone():
    lp, mask, cuda = _sample(pad=0)
    lp2, mask2, cuda2 = _sample(pad=5)
    width = lp2.shape[0]
    short = torch.zeros(width, dtype=lp.dtype)
    short[: lp.shape[0]] = lp
    m1 = torch.zeros(width, dtype=torch.bool)
    m1[: mask.shape[0]] = mask
    c1 = torch.zeros(width, dtype=torch.bool)
    c1[: cuda.shape[0]] = cuda
    # the second row: a different response (shifted confidences) with a long padding tail
    lp2 = lp2.clone()
    lp2[2:8] = torch.log(torch.tensor([0.3, 0.4, 0.05, 0.9, 0.7, 0.02], dtype=torch.float64))
    batch = cuset_objective(torch.stack([short, lp2]), torch.stack([m1, mask2]), torch.stack([c1, cuda2]), window=4)
    alone0 = cuset_objective(lp[None], mask[None], cuda[None], window=4)
    alone1 = cuset_objective(lp2[None], mask2[None], cuda2[None], window=4)
    assert batch.tolist() == pytest.approx([alone0.item(), alone1.item()], rel=1e-12)


def test_sample_without_response_tokens_is_zero():
    lp = torch.log(torch.full((1, 5), 0.3, dtype=torch.float64))
    mask = torch.zeros(1, 5, dtype=torch.bool)
    assert cuset_objective(lp, mask, mask.clone()).item() == 0.0


@pytest.mark.parametrize("conf_on,cuda_on,region_on", list(itertools.product([True, False], repeat=3)))
def test_cuset_gradients_zero_exactly_where_masked(conf_on, cuda_on, region_on):
    lp, mask, cuda = _sample()
    x = lp[None].clone().requires_grad_(True)
    cuset_objective(x, mask[None], cuda[None], window=4, use_confidence=conf_on,
                    use_cuda_mask=cuda_on, use_region=region_on).sum().backward()
    g = x.grad[0]
    w = 1 - min(_hand_windows_l4()) if region_on else 1.0
    expected = [0.0, 0.0]
    for p, cu in zip(RESP_P, RESP_CUDA, strict=True):
        m = (1.0 if p > 0.1 else 0.0) if conf_on else 1.0
        m += 1.0 if cuda_on and cu else 0.0
        expected.append(-w * m)
    expected += [0.0, 0.0]
    # confidence and weights carry no gradient: d loss / d logprob_t = -w * M_t exactly
    assert g.tolist() == pytest.approx(expected, rel=1e-12, abs=0)
    removed = [i for i, e in enumerate(expected) if e == 0.0]
    assert all(g[i].item() == 0.0 for i in removed)
    if conf_on and not cuda_on:
        assert 3 in removed  # the p=0.05 token is cut by the confidence mask


def _stats(with_entropy=None, with_kl=None):
    lp, mask, cuda = _sample()
    return TokenStats(lp[None], with_entropy, with_kl), mask[None], cuda[None]


def test_sft_sum_of_response_nll():
    stats, mask, cuda = _stats()
    out = compute(stats, mask, cuda, LossConfig(method="sft"))
    assert out.per_sample.item() == pytest.approx(sum(-math.log(p) for p in RESP_P), rel=1e-12)
    assert out.metrics["tokens"].item() == 6
    assert out.metrics["cuda_tokens"].item() == 2


def test_dft_weights_by_detached_probability():
    stats, mask, cuda = _stats()
    x = stats.logprob.clone().requires_grad_(True)
    out = compute(TokenStats(x), mask, cuda, LossConfig(method="dft"))
    assert out.per_sample.item() == pytest.approx(sum(-p * math.log(p) for p in RESP_P), rel=1e-12)
    out.per_sample.sum().backward()
    assert x.grad[0].tolist() == pytest.approx([0, 0] + [-p for p in RESP_P] + [0, 0], rel=1e-12, abs=0)


def test_eaft_weights_by_normalised_topk_entropy():
    stats, mask, cuda = _stats()
    k = 20
    # entropies chosen as fractions of ln K so the weights are 1, 1/2, 1/4, 0, 3/4, 1/10
    fr = [1.0, 0.5, 0.25, 0.0, 0.75, 0.1]
    ent = torch.zeros(1, 10, dtype=torch.float64)
    ent[0, 2:8] = torch.tensor(fr, dtype=torch.float64) * math.log(k)
    ent[0, :2] = 5.0  # prompt entropies must not count
    out = compute(TokenStats(stats.logprob, entropy=ent), mask, cuda, LossConfig(method="eaft", eaft_top_k=k))
    hand = sum(f * -math.log(p) for f, p in zip(fr, RESP_P, strict=True))
    assert out.per_sample.item() == pytest.approx(hand, rel=1e-12)
    out2 = compute(TokenStats(stats.logprob, entropy=ent), mask, cuda,
                   LossConfig(method="eaft", eaft_top_k=k, eaft_alpha=2.0))
    assert out2.per_sample.item() == pytest.approx(
        sum(f * f * -math.log(p) for f, p in zip(fr, RESP_P, strict=True)), rel=1e-12)


def test_asft_is_dft_plus_weighted_kl():
    stats, mask, cuda = _stats()
    kl_vals = [0.2, 0.0, 1.5, 0.1, 0.3, 0.05]
    kl = torch.zeros(1, 10, dtype=torch.float64)
    kl[0, 2:8] = torch.tensor(kl_vals, dtype=torch.float64)
    kl[0, 0] = 9.0  # prompt
    kl_t = kl.clone().requires_grad_(True)
    out = compute(TokenStats(stats.logprob, kl=kl_t), mask, cuda, LossConfig(method="asft", asft_kl_weight=0.1))
    hand = sum(-p * math.log(p) for p in RESP_P) + 0.1 * sum(kl_vals)
    assert out.per_sample.item() == pytest.approx(hand, rel=1e-12)
    out.per_sample.sum().backward()
    assert kl_t.grad[0].tolist() == pytest.approx([0, 0] + [0.1] * 6 + [0, 0], rel=1e-12, abs=0)


def test_profit_keeps_tokens_at_or_above_tau():
    stats, mask, cuda = _stats()
    x = stats.logprob.clone().requires_grad_(True)
    out = compute(TokenStats(x), mask, cuda, LossConfig(method="profit", profit_tau=0.5))
    # kept: 0.9, 0.5 (equal to tau counts: >=), 0.8, 0.6
    hand = -(math.log(0.9) + math.log(0.5) + math.log(0.8) + math.log(0.6))
    assert out.per_sample.item() == pytest.approx(hand, rel=1e-12)
    assert out.metrics["kept_confidence"].item() == 4
    out.per_sample.sum().backward()
    assert x.grad[0].tolist() == [0, 0, -1, 0, -1, 0, -1, -1, 0, 0]


def test_cuset_through_compute_reports_parts():
    stats, mask, cuda = _stats()
    out = compute(stats, mask, cuda, LossConfig(method="cuset", window=4))
    assert out.per_sample.item() == pytest.approx(_hand_cuset(True, True, True), rel=1e-12)
    assert out.metrics["kept_confidence"].item() == 5
    assert out.metrics["sample_weight_sum"].item() == pytest.approx(1 - 0.3875, rel=1e-12)
    assert out.metrics["token_weight_sum"].item() == pytest.approx(1 + 0 + 2 + 2 + 1 + 1)
