"""Packing: rows of several examples give the same losses, gradients and logits as the examples
one per row, with position ids restarting and no attention across examples."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from cuset_testdata import corpus_records, write_dataset

from cuset.config import METHODS, load_config
from cuset.data import Collator, Example
from cuset.packing import PackedCollator, PackedDataset, plan_packs, regroup
from cuset.trainer import build_trainer

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "cuset" / "configs" / "tiny.yaml"


def _ex(i: int, n: int) -> Example:
    ids = list(range(100 * i, 100 * i + n))
    return Example(f"e{i}", ids, [-100, -100, *ids[2:]], [0, 0, 1] + [0] * (n - 3))


def test_plan_packs_greedy_in_order_and_long_alone():
    assert plan_packs([3, 4, 2, 9, 1, 1], 8) == [[0, 1], [2], [3], [4, 5]]
    assert plan_packs([8, 8], 8) == [[0], [1]]
    with pytest.raises(ValueError, match="max_length"):
        plan_packs([1], 0)


def test_rows_reset_positions_mask_first_labels_and_pad_as_own_sequence():
    ds = PackedDataset([_ex(0, 4), _ex(1, 5), _ex(2, 6)], max_length=9)
    assert ds.packs == [[0, 1], [2]]
    row = ds[0]
    assert row["position_ids"] == [0, 1, 2, 3, 0, 1, 2, 3, 4]
    assert row["seq_idx"] == [0] * 4 + [1] * 5
    # the second example's first token is not a target of the first one's last token
    assert row["labels"][4] == -100 and row["labels"][2:4] == [2, 3]
    batch = PackedCollator(pad_token_id=7)([ds[0], ds[1]])
    assert "attention_mask" not in batch
    assert batch["seq_idx"][1].tolist() == [2] * 6 + [-1] * 3
    assert batch["position_ids"][1].tolist() == [0, 1, 2, 3, 4, 5, 0, 1, 2]
    assert batch["input_ids"][1, 6:].tolist() == [7, 7, 7]
    assert batch["labels"][1, 6:].tolist() == [-100] * 3


def test_regroup_lays_examples_out_one_per_row_with_gradient():
    seq = torch.tensor([[0, 0, 1, 1, 1], [2, 2, -1, -1, -1]])
    pos = torch.tensor([[0, 1, 0, 1, 2], [0, 1, 0, 1, 2]])
    x = torch.arange(10, dtype=torch.float32).reshape(2, 5).requires_grad_()
    out = regroup(x, seq, pos, 3)
    assert out.tolist() == [[0, 1, 0], [2, 3, 4], [5, 6, 0]]
    out.sum().backward()
    assert x.grad.tolist() == [[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]]


@pytest.fixture(scope="module")
def tiny_model():
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from cuset.tiny import tiny_checkpoint

    path = tiny_checkpoint()
    torch.manual_seed(0)
    models = {impl: AutoModelForCausalLM.from_pretrained(path, attn_implementation=impl).eval()
              for impl in ("sdpa", "eager")}
    for m in models.values():
        # as in training (cuset.modeling.load_model): with a KV cache, transformers does not look
        # for restarting position ids
        m.config.use_cache = False
    return models, AutoTokenizer.from_pretrained(path)


@pytest.mark.parametrize("impl", ["sdpa", "eager"])
def test_packed_logits_equal_unpacked_and_do_not_see_other_examples(tiny_model, impl):
    models, tok = tiny_model
    model = models[impl]
    g = torch.Generator().manual_seed(1)
    seqs = [torch.randint(5, tok.vocab_size, (n,), generator=g) for n in (23, 40, 17)]
    ids = torch.cat(seqs)[None]
    pos = torch.cat([torch.arange(len(s)) for s in seqs])[None]
    with torch.no_grad():
        packed = model(input_ids=ids, position_ids=pos).logits[0]
        alone = [model(input_ids=s[None]).logits[0] for s in seqs]
        torch.testing.assert_close(packed, torch.cat(alone), atol=1e-5, rtol=1e-5)
        # change every token of the first example: the others' logits must not move
        other = ids.clone()
        other[0, :23] = torch.randint(5, tok.vocab_size, (23,), generator=g)
        moved = model(input_ids=other, position_ids=pos).logits[0]
    assert not torch.allclose(moved[:23], packed[:23])
    torch.testing.assert_close(moved[23:], packed[23:], atol=1e-6, rtol=0)


@pytest.fixture(scope="module")
def packing_data(tmp_path_factory):
    return write_dataset(corpus_records(), tmp_path_factory.mktemp("pack"))


def _loss_and_grads(trainer, batch) -> tuple[float, dict[str, torch.Tensor]]:
    model = trainer.model
    model.zero_grad(set_to_none=True)
    loss = trainer.compute_loss(model, batch)
    loss.backward()
    grads = {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}
    return loss.item(), grads


@pytest.mark.parametrize("normalize", ["tokens", "samples"])
@pytest.mark.parametrize("method", METHODS)
def test_packed_and_unpacked_batches_give_the_same_loss_and_gradient(
    method, normalize, packing_data, warm_model, tmp_path,
):
    # a short window, so CuSeT's windows would straddle examples if they were not clipped
    cfg = load_config(TINY, [
        f"data.path={packing_data}", f"training.output_dir={tmp_path}", "training.disable_tqdm=true",
        f"loss.method={method}", f"loss.normalize={normalize}", "loss.window=16",
        "loss.tau=0.3", "loss.profit_tau=0.3", "data.max_length=300", "lora.dropout=0.0",
        f"model.name_or_path={warm_model}", "training.report_to=[]",
    ])
    trainer, _ = build_trainer(cfg)
    trainer.model.train()
    if method == "asft":
        # move the adapter off its zero init so the KL to the reference is not 0
        torch.manual_seed(0)
        for n, p in trainer.model.named_parameters():
            if "lora_B" in n:
                p.data.normal_(0, 0.02)
    examples = trainer.train_dataset.examples
    packed_ds = PackedDataset(examples, max_length=3 * 300)
    assert len(packed_ds) < len(examples) and max(len(p) for p in packed_ds.packs) > 1
    unpacked = Collator(trainer.processing_class.pad_token_id)(
        [{"input_ids": e.input_ids, "labels": e.labels, "cuda_mask": e.cuda_mask} for e in examples]
    )
    packed = PackedCollator(trainer.processing_class.pad_token_id)(
        [packed_ds[i] for i in range(len(packed_ds))]
    )
    loss_u, grads_u = _loss_and_grads(trainer, unpacked)
    loss_p, grads_p = _loss_and_grads(trainer, packed)
    assert loss_u > 0
    assert abs(loss_p - loss_u) <= 1e-5 * max(1.0, abs(loss_u))
    assert grads_u.keys() == grads_p.keys() and grads_u
    norm_u = torch.sqrt(sum(g.double().pow(2).sum() for g in grads_u.values()))
    norm_p = torch.sqrt(sum(g.double().pow(2).sum() for g in grads_p.values()))
    assert norm_u > 0
    assert abs(norm_p - norm_u) <= 1e-5 * max(1.0, norm_u.item())
    for n in list(grads_u)[:4]:
        torch.testing.assert_close(grads_p[n], grads_u[n], atol=1e-5, rtol=1e-4)


def test_training_with_packing_runs_and_logs(packing_data, tmp_path):
    cfg = load_config(TINY, [
        f"data.path={packing_data}", f"training.output_dir={tmp_path}", "training.disable_tqdm=true",
        "data.max_length=1600", "data.packing=true", "training.max_steps=2",
        "training.report_to=[]", "training.eval_strategy=no",
    ])
    trainer, report = build_trainer(cfg)
    assert isinstance(trainer.train_dataset, PackedDataset)
    assert len(trainer.train_dataset) < report.used
    trainer.train()
    logs = [h for h in trainer.state.log_history if "loss" in h]
    assert len(logs) == 2 and all(h["loss"] > 0 for h in logs)
