"""Padding-free packing: several examples per row, kept apart by position ids and `seq_idx`.

Rows are filled greedily in dataset order up to `max_length` tokens; an example that does not
fit starts the next row (one longer than `max_length` stays alone). Inside a row there is no
padding: `position_ids` restart at 0 at each example, and transformers turns position ids that
restart (with no 2D attention mask) into a block-diagonal causal mask for eager and sdpa, and
into per-sequence lengths for flash attention, so no token attends across examples.

Rows of one batch still differ in length. The collator pads them at the end with a block whose
positions also restart at 0: the model sees it as one more sequence, so no real token attends to
it, and an attention mask (which would switch transformers' packed-sequence detection off) is
never needed. Its labels are -100 and its `seq_idx` is -1.

The first label of every example is set to -100: in a row the previous example's last token
would otherwise be trained to predict it, while unpacked nothing predicts a sequence's first
token. `seq_idx` [B, T] numbers the examples of the whole batch 0..S-1; `regroup` uses it with
the position ids to lay per-token quantities out as [S, L] (one example per row, as unpacked),
so every method's masks, confidence windows and sample weights are computed per example.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor

from .data import Example


def plan_packs(lengths: Sequence[int], max_length: int) -> list[list[int]]:
    """Indices of the examples in each row: greedy, in order, rows of at most `max_length`
    tokens (an example longer than that gets a row of its own)."""
    if max_length < 1:
        raise ValueError(f"max_length must be at least 1 (got {max_length})")
    packs: list[list[int]] = []
    used = 0
    for i, n in enumerate(lengths):
        if packs and used + n <= max_length:
            packs[-1].append(i)
            used += n
        else:
            packs.append([i])
            used = n
    return packs


class PackedDataset(torch.utils.data.Dataset):
    """Rows of concatenated examples with `position_ids` and a per-row example index."""

    def __init__(self, examples: Sequence[Example], max_length: int):
        self.examples = list(examples)
        self.packs = plan_packs([len(e.input_ids) for e in self.examples], max_length)

    def __len__(self) -> int:
        return len(self.packs)

    def __getitem__(self, i: int) -> dict[str, Any]:
        ids: list[int] = []
        labels: list[int] = []
        cuda: list[int] = []
        pos: list[int] = []
        seq: list[int] = []
        for k, j in enumerate(self.packs[i]):
            ex = self.examples[j]
            n = len(ex.input_ids)
            ids += ex.input_ids
            labels += [-100, *ex.labels[1:]]
            cuda += ex.cuda_mask
            pos += range(n)
            seq += [k] * n
        return {"input_ids": ids, "labels": labels, "cuda_mask": cuda, "position_ids": pos,
                "seq_idx": seq}


@dataclass
class PackedCollator:
    """Batches packed rows without an attention mask (see the module docstring)."""

    pad_token_id: int

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, Tensor]:
        width = max(len(f["input_ids"]) for f in features)
        b = len(features)
        batch = {
            "input_ids": torch.full((b, width), self.pad_token_id, dtype=torch.long),
            "labels": torch.full((b, width), -100, dtype=torch.long),
            "cuda_mask": torch.zeros((b, width), dtype=torch.bool),
            "position_ids": torch.zeros((b, width), dtype=torch.long),
            "seq_idx": torch.full((b, width), -1, dtype=torch.long),
        }
        offset = 0
        for i, f in enumerate(features):
            n = len(f["input_ids"])
            batch["input_ids"][i, :n] = torch.tensor(f["input_ids"])
            batch["labels"][i, :n] = torch.tensor(f["labels"])
            batch["cuda_mask"][i, :n] = torch.tensor(f["cuda_mask"], dtype=torch.bool)
            batch["position_ids"][i, :n] = torch.tensor(f["position_ids"])
            batch["position_ids"][i, n:] = torch.arange(width - n)
            seq = torch.tensor(f["seq_idx"])
            batch["seq_idx"][i, :n] = seq + offset
            offset += int(seq.max()) + 1
        return batch


def regroup(x: Tensor, seq_idx: Tensor, positions: Tensor, samples: int) -> Tensor:
    """Move per-token values [B, T] of packed rows to [samples, L], example s in row s at its
    own positions (L = longest example); tokens with `seq_idx` -1 are dropped, empty places are
    zero (False). Differentiable in `x`."""
    keep = seq_idx.ge(0)
    rows, cols = seq_idx[keep], positions[keep]
    width = int(cols.max()) + 1 if cols.numel() else 1
    out = torch.zeros((samples, width), dtype=x.dtype, device=x.device)
    return out.index_put((rows, cols), x[keep])


def count_samples(labels: Tensor, seq_idx: Tensor) -> Tensor:
    """Examples of a packed batch that have at least one target token."""
    valid = labels[..., 1:].ne(-100)
    n = seq_idx[..., 1:][valid].unique().numel()
    return torch.tensor(n, dtype=torch.long, device=labels.device)
