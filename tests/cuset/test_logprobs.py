"""Chunked per-token statistics equal the full-logits computation, values and gradients."""

from __future__ import annotations

import math

import pytest
import torch

from cuset.head import HeadRequest, head_request, install_head, unpack
from cuset.logprobs import chunked_target_stats, full_logits_target_stats, shift_targets


def _inputs(n=37, h=16, v=50, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    hid = torch.randn(n, h, generator=g, dtype=dtype)
    w = torch.randn(v, h, generator=g, dtype=dtype) * 0.5
    ref = hid + 0.3 * torch.randn(n, h, generator=g, dtype=dtype)
    tgt = torch.randint(0, v, (n,), generator=g)
    up_lp = torch.randn(n, generator=g)
    up_kl = torch.randn(n, generator=g)
    return hid, w, ref, tgt, up_lp, up_kl


@pytest.mark.parametrize("chunk", [1, 8, 37, 100])
@pytest.mark.parametrize("with_ref", [False, True])
def test_chunked_equals_full_values_and_grads(chunk, with_ref):
    hid, w, ref, tgt, up_lp, up_kl = _inputs()
    results = []
    for fn in ("chunked", "full"):
        h = hid.clone().requires_grad_(True)
        wt = w.clone().requires_grad_(True)
        kw = dict(ref_hidden=ref if with_ref else None, top_k=5)
        if fn == "chunked":
            lp, ent, kl = chunked_target_stats(h, wt, tgt, chunk_tokens=chunk, **kw)
        else:
            lp, ent, kl = full_logits_target_stats(h, wt, tgt, **kw)
        (lp * up_lp + kl * up_kl).sum().backward()
        results.append((lp.detach(), ent.detach(), kl.detach(), h.grad, wt.grad))
    for a, b in zip(*results, strict=True):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)
    if with_ref:
        assert results[0][2].abs().sum() > 0  # the KL is really computed


def test_logprob_matches_log_softmax_by_hand():
    # 2 tokens, vocab 3: logits [0, ln 2, ln 3] -> p = [1/6, 2/6, 3/6]
    w = torch.tensor([[0.0], [math.log(2)], [math.log(3)]])
    h = torch.ones(2, 1)
    lp, ent, _ = chunked_target_stats(h, w, torch.tensor([2, 0]), top_k=3, chunk_tokens=1)
    assert lp.tolist() == pytest.approx([math.log(0.5), math.log(1 / 6)], rel=1e-6)
    hand_entropy = -sum(p * math.log(p) for p in (1 / 6, 2 / 6, 3 / 6))
    assert ent.tolist() == pytest.approx([hand_entropy] * 2, rel=1e-6)


def test_topk_entropy_uses_only_top_k():
    # 20 equal top logits and 30 tiny ones: the top-20 softmax is uniform, entropy ln 20
    w = torch.cat([torch.full((20, 1), 5.0), torch.full((30, 1), -50.0)])
    _, ent, _ = chunked_target_stats(torch.ones(1, 1), w, torch.tensor([0]), top_k=20)
    assert ent.item() == pytest.approx(math.log(20), rel=1e-6)


def test_entropy_carries_no_gradient_and_weight_grad_optional():
    hid, w, _, tgt, _, _ = _inputs()
    h = hid.clone().requires_grad_(True)
    lp, ent, _ = chunked_target_stats(h, w, tgt, top_k=5, chunk_tokens=8)  # w frozen (LoRA case)
    assert not ent.requires_grad
    lp.sum().backward()
    assert h.grad is not None and w.grad is None


def test_bf16_hidden_states_match_full_path():
    hid, w, _, tgt, up, _ = _inputs(dtype=torch.bfloat16)
    outs = []
    for fn in (chunked_target_stats, full_logits_target_stats):
        h = hid.clone().requires_grad_(True)
        lp = fn(h, w, tgt)[0]
        (lp * up).sum().backward()
        outs.append((lp.detach(), h.grad.float()))
    torch.testing.assert_close(outs[0][0], outs[1][0], rtol=1e-3, atol=1e-3)
    torch.testing.assert_close(outs[0][1], outs[1][1], rtol=2e-2, atol=2e-2)


def test_head_inside_model_matches_hf_logits():
    from cuset.tiny import build_model

    torch.manual_seed(0)
    model = build_model(64, hidden_size=32)
    ids = torch.randint(0, 64, (2, 12))
    attn = torch.ones_like(ids)
    attn[1, 9:] = 0
    labels = ids.clone()
    labels[:, :4] = -100
    labels[1, 9:] = -100
    targets = shift_targets(labels)
    ref_logits = model(input_ids=ids, attention_mask=attn).logits.float()
    head = install_head(model)
    with head_request(head, HeadRequest(targets, top_k=4, chunk_tokens=5)):
        packed = model(input_ids=ids, attention_mask=attn).logits
    stats = unpack(packed, top_k=4, has_ref=False)
    valid = targets.ne(-100)
    expect = torch.log_softmax(ref_logits, -1).gather(-1, targets.clamp_min(0)[..., None])[..., 0]
    torch.testing.assert_close(stats.logprob[valid], expect[valid], rtol=1e-5, atol=1e-5)
    assert stats.logprob[~valid].abs().sum() == 0
    # with no pending request the head is the plain output layer again
    torch.testing.assert_close(model(input_ids=ids, attention_mask=attn).logits.float(), ref_logits)
    assert "lm_head.weight" in model.state_dict()


def test_tokens_a_mask_removes_get_exactly_zero_gradient_through_the_head():
    from cuset.losses import cuset_objective

    hid, w, _, tgt, _, _ = _inputs(n=12, v=40)
    h = hid.clone().requires_grad_(True)
    lp = chunked_target_stats(h, w, tgt, chunk_tokens=5)[0]
    loss_mask = torch.tensor([False, False] + [True] * 9 + [False])
    cuda = torch.zeros(12, dtype=torch.bool)
    cuda[4] = True
    # tau = 1 drops every token from the confidence mask: only the CUDA token keeps weight
    cuset_objective(lp[None], loss_mask[None], cuda[None], tau=1.0).sum().backward()
    nonzero = h.grad.abs().sum(-1) != 0
    assert nonzero.tolist() == [i == 4 for i in range(12)]


def test_head_keeps_tied_weights_and_checkpoints_load_as_plain_models(tmp_path):
    from transformers import AutoModelForCausalLM, Qwen2Config, Qwen2ForCausalLM

    cfg = Qwen2Config(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                      num_attention_heads=4, num_key_value_heads=2, tie_word_embeddings=True)
    model = Qwen2ForCausalLM(cfg)
    head = install_head(model)
    model.tie_weights()
    assert model.lm_head is head and head.weight is model.model.embed_tokens.weight
    model.save_pretrained(tmp_path)
    back = AutoModelForCausalLM.from_pretrained(tmp_path)
    assert isinstance(back.lm_head, torch.nn.Linear)
    torch.testing.assert_close(back.lm_head.weight, head.weight, rtol=0, atol=0)
