"""From dataset shards to token batches: chat rendering, response labels and the CUDA mask.

Each record is rendered with the model's chat template and tokenized with character offsets.
The response's character spans are moved into the rendered text and turned into per-token
masks:

- labels: tokens that overlap the assistant turn, from the response's first character to the
  end of the turn (including the template's end-of-turn marker, which the model must learn to
  emit); everything before is -100.
- CUDA mask: labelled tokens that overlap a `kernel_body` or `launch_config` span by at least
  one character. Any-overlap, not containment, because BPE merges boundary characters into
  neighbouring tokens (` {`, `>>>(`, a leading space before `__global__`): requiring full
  containment would drop exactly the tokens that open and close a kernel, while a token that
  touches the region is one the model must produce to write it.

Sequences are truncated to `max_length` as a whole (ids, labels and mask together); with
`data.packing` they are then packed (`packing.py`), and the losses still see one sample at a time. Records whose spans cannot be
placed on response tokens are left out and reported by id.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from schemas import CUDA_MASK_KINDS

from .errors import CusetError, MissingSplitError

REQUIRED_COLUMNS = ("id", "messages", "response", "spans")


@dataclass
class Example:
    id: str
    input_ids: list[int]
    labels: list[int]
    cuda_mask: list[int]
    cuda_cut: bool = False
    """Truncation removed tokens of a kernel body or launch configuration."""
    full_length: int = 0
    """Tokens before truncation."""


@dataclass
class DataReport:
    total: int = 0
    used: int = 0
    truncated: list[str] = field(default_factory=list)
    dropped: dict[str, list[str]] = field(default_factory=dict)
    label_tokens: int = 0
    cuda_tokens: int = 0
    spans_cut: list[str] = field(default_factory=list)
    """Used records whose CUDA spans lost tokens to `max_length`."""
    no_cuda_tokens: list[str] = field(default_factory=list)
    """Used records left with no token in the CUDA mask (all their CUDA spans cut off)."""
    max_length: int | None = None
    longest: int = 0
    """Tokens in the longest rendered record before truncation."""

    def drop(self, reason: str, rec_id: str) -> None:
        self.dropped.setdefault(reason, []).append(rec_id)

    def summary(self) -> str:
        lines = [
            f"{self.used} of {self.total} records used; {len(self.truncated)} truncated; "
            f"{self.label_tokens} response tokens, {self.cuda_tokens} in the CUDA mask"
        ]
        for reason, ids in sorted(self.dropped.items()):
            shown = ", ".join(ids[:5]) + (f", ... (+{len(ids) - 5})" if len(ids) > 5 else "")
            lines.append(f"  left out ({reason}): {len(ids)}: {shown}")
        if self.spans_cut or self.no_cuda_tokens:
            lines.append(
                f"  warning: data.max_length={self.max_length} cuts the CUDA spans of "
                f"{len(self.spans_cut)} record(s), {len(self.no_cuda_tokens)} of them left with no "
                f"CUDA token (longest record: {self.longest} tokens); raise data.max_length"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total, "used": self.used, "truncated": self.truncated,
            "dropped": self.dropped, "label_tokens": self.label_tokens, "cuda_tokens": self.cuda_tokens,
            "spans_cut": self.spans_cut, "no_cuda_tokens": self.no_cuda_tokens,
            "max_length": self.max_length, "longest": self.longest,
        }


HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
"""`owner/name`: what a path that does not exist must look like to be tried on the Hub."""


def load_rows(path: str | Path, split: str = "train", max_samples: int | None = None) -> Any:
    """Load split `split` of a Hub-layout folder (`data/<split>-*.parquet`) or of a Hub dataset
    id, with `datasets.load_dataset`; `max_samples` keeps its first N rows."""
    import datasets

    name = str(path)
    if not Path(name).exists() and not HUB_ID.fullmatch(name):
        raise CusetError(f"dataset folder {name!r} does not exist (nor is it a Hub id owner/name)")
    try:
        dd = datasets.load_dataset(name)
    except Exception as e:  # datasets raises many types for a folder or id it cannot read
        where = "" if Path(name).exists() else " (no such folder; tried as a Hub dataset id)"
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CusetError(f"cannot load dataset {name!r}{where}: {msg}") from None
    if split not in dd:
        raise MissingSplitError(f"dataset {name!r} has no {split!r} split (it has: {', '.join(dd)})")
    rows = dd[split]
    missing = [c for c in REQUIRED_COLUMNS if c not in rows.column_names]
    if missing:
        hint = " (CuSeT needs the span annotation of the builder)" if "spans" in missing else ""
        raise CusetError(f"dataset {name!r} lacks the column(s) {', '.join(missing)}{hint}")
    if max_samples is not None and max_samples < len(rows):
        rows = rows.select(range(max_samples))
    return rows


def check_chat_template(tokenizer: Any, model_name: str) -> None:
    if not getattr(tokenizer, "chat_template", None):
        raise CusetError(
            f"the tokenizer of {model_name!r} has no chat template; give one with "
            "model.chat_template=<jinja text or file>"
        )
    if not getattr(tokenizer, "is_fast", False):
        raise CusetError(f"the tokenizer of {model_name!r} is not a fast tokenizer (offsets are needed)")


def _locate(full: str, response: str) -> tuple[int, int, int] | None:
    """Where the response sits in the rendered text: (start in full, first and end response
    char kept). Templates may strip the response's outer whitespace (Qwen3 does)."""
    start = full.rfind(response)
    if start >= 0:
        return start, 0, len(response)
    core = response.strip()
    if not core:
        return None
    start = full.rfind(core)
    if start < 0:
        return None
    lead = len(response) - len(response.lstrip())
    return start, lead, lead + len(core)


def encode_record(
    row: dict[str, Any], tokenizer: Any, max_length: int, system_prompt: str | None = None
) -> tuple[Example | None, str | None, bool]:
    """Tokenize one row. Returns (example, reason it was left out, whether it was truncated)."""
    rec_id = str(row["id"])
    messages = [{"role": m["role"], "content": m["content"]} for m in row["messages"]]
    response = row["response"]
    if not messages or messages[-1]["role"] != "assistant" or messages[-1]["content"] != response:
        return None, "last_message_is_not_the_response", False
    if system_prompt is not None and messages[0]["role"] != "system":
        messages.insert(0, {"role": "system", "content": system_prompt})
    cuda_spans = [
        (int(s["start"]), int(s["end"])) for s in row["spans"] or []
        if s["kind"] in CUDA_MASK_KINDS and int(s["end"]) > int(s["start"])
    ]
    if not cuda_spans:
        return None, "no_cuda_spans", False
    if any(e > len(response) for _, e in cuda_spans):
        return None, "span_past_end_of_response", False

    full = tokenizer.apply_chat_template(messages, tokenize=False)
    where = _locate(full, response)
    if where is None:
        return None, "response_not_found_in_rendered_text", False
    start, keep_lo, keep_hi = where
    resp_lo = start
    resp_hi = start + keep_hi - keep_lo
    label_end = max(len(full.rstrip()), resp_hi)

    enc = tokenizer(full, add_special_tokens=False, return_offsets_mapping=True)
    ids = list(enc["input_ids"])
    offs = np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2)
    a, b = offs[:, 0], offs[:, 1]
    labelled = ((a < label_end) & (b > resp_lo)) | ((a == b) & (a >= resp_lo) & (a < label_end))

    cuda = np.zeros(len(ids), dtype=bool)
    for s, e in cuda_spans:
        s2, e2 = max(s, keep_lo), min(e, keep_hi)
        if e2 <= s2:
            return None, "span_outside_rendered_response", False
        fs, fe = start + s2 - keep_lo, start + e2 - keep_lo
        hit = labelled & (a < fe) & (b > fs)
        if not hit.any():
            return None, "span_not_on_response_tokens", False
        cuda |= hit

    truncated = len(ids) > max_length
    n = min(len(ids), max_length)
    labels = [t if lab else -100 for t, lab in zip(ids[:n], labelled[:n], strict=True)]
    # position 0 is never predicted, so at least one labelled token after it is needed
    if not any(x != -100 for x in labels[1:]):
        return None, "no_response_tokens_within_max_length", truncated
    ex = Example(rec_id, ids[:n], labels, cuda[:n].astype(int).tolist(), bool(cuda[n:].any()),
                 len(ids))
    return ex, None, truncated


class TokenizedDataset(torch.utils.data.Dataset):
    def __init__(self, examples: Sequence[Example]):
        self.examples = list(examples)

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict[str, Any]:
        ex = self.examples[i]
        return {"input_ids": ex.input_ids, "labels": ex.labels, "cuda_mask": ex.cuda_mask}


def prepare(
    rows: Iterable[dict[str, Any]], tokenizer: Any, *, max_length: int = 4096,
    system_prompt: str | None = None, progress: bool = False,
) -> tuple[TokenizedDataset, DataReport]:
    rows = list(rows)
    report = DataReport(total=len(rows), max_length=max_length)
    if rows and not any(
        s["kind"] in CUDA_MASK_KINDS for r in rows for s in (r.get("spans") or [])
    ):
        raise CusetError(
            "no record of the dataset has a kernel_body or launch_config span; CuSeT's CUDA mask "
            "needs the builder's span annotation"
        )
    it: Iterable[dict[str, Any]] = rows
    if progress:
        from tqdm.auto import tqdm

        it = tqdm(rows, desc="tokenizing", unit="rec")
    examples = []
    for row in it:
        ex, reason, truncated = encode_record(row, tokenizer, max_length, system_prompt)
        if truncated:
            report.truncated.append(str(row["id"]))
        if ex is None:
            report.drop(reason or "unknown", str(row["id"]))
            continue
        examples.append(ex)
        if ex.cuda_cut:
            report.spans_cut.append(ex.id)
            if not any(ex.cuda_mask):
                report.no_cuda_tokens.append(ex.id)
        report.longest = max(report.longest, ex.full_length)
        report.label_tokens += sum(1 for x in ex.labels if x != -100)
        report.cuda_tokens += sum(ex.cuda_mask)
    report.used = len(examples)
    if not examples:
        raise CusetError("no usable record in the dataset:\n" + report.summary())
    return TokenizedDataset(examples), report


@dataclass
class Collator:
    """Right-pads a batch: ids with the pad id, labels with -100, masks with 0."""

    pad_token_id: int

    def __call__(self, features: list[dict[str, Any]]) -> dict[str, torch.Tensor]:
        width = max(len(f["input_ids"]) for f in features)
        batch = {
            "input_ids": torch.full((len(features), width), self.pad_token_id, dtype=torch.long),
            "attention_mask": torch.zeros((len(features), width), dtype=torch.long),
            "labels": torch.full((len(features), width), -100, dtype=torch.long),
            "cuda_mask": torch.zeros((len(features), width), dtype=torch.bool),
        }
        for i, f in enumerate(features):
            n = len(f["input_ids"])
            batch["input_ids"][i, :n] = torch.tensor(f["input_ids"])
            batch["attention_mask"][i, :n] = 1
            batch["labels"][i, :n] = torch.tensor(f["labels"])
            batch["cuda_mask"][i, :n] = torch.tensor(f["cuda_mask"], dtype=torch.bool)
        return batch


def write_report(report: DataReport, out_dir: str | Path, name: str = "data_report.json") -> Path:
    p = Path(out_dir) / name
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(report.to_dict(), indent=2))
    return p
