"""The Trainer subclass that computes the CuSeT objective (or a baseline) from chunked
per-token statistics, and the `train()` entry point that wires config, data and model.

Normalisation: each micro-batch returns `sum of per-sample losses / N * world_size`, where N is
the number of target tokens (or samples) in the whole optimizer step: every micro-batch of the
accumulation and every rank (as transformers' `num_items_in_batch`). DDP averages gradients
over ranks, so the update equals one process seeing the whole step's batch.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import torch
from transformers import Trainer, TrainingArguments

from . import losses
from .config import LossConfig, TrainConfig, to_dict
from .data import (
    Collator,
    DataReport,
    TokenizedDataset,
    check_chat_template,
    load_rows,
    prepare,
    write_report,
)
from .errors import CusetError
from .head import HeadRequest, find_head, head_request, unpack
from .logprobs import shift_targets
from .modeling import load_model, load_tokenizer, resolve_model_path, use_bf16

log = logging.getLogger("cuset")


def count_items(labels: torch.Tensor, normalize: str) -> torch.Tensor:
    """Target tokens (labels after the shift), or samples that have at least one."""
    valid = labels[..., 1:].ne(-100)
    return valid.sum() if normalize == "tokens" else valid.any(dim=-1).sum()


class CusetTrainer(Trainer):
    loss_is_scaled_for_ga = True

    def __init__(self, *args: Any, loss_config: LossConfig, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.loss_config = loss_config
        self.head = find_head(self.model)
        # older transformers decide the accumulation scaling from this flag
        self.model_accepts_loss_kwargs = True
        self._parts: dict[str, torch.Tensor] = {}

    # -- normalisation -------------------------------------------------------------------
    def get_batch_samples(self, epoch_iterator, num_batches, device):  # type: ignore[override]
        batches = []
        for _ in range(num_batches):
            try:
                batches.append(next(epoch_iterator))
            except StopIteration:
                break
        n = sum((count_items(b["labels"], self.loss_config.normalize) for b in batches), torch.tensor(0))
        n = n.reshape(1).to(device)
        if self.args.world_size > 1:
            n = self.accelerator.gather(n).sum()
        return batches, n.reshape(())

    # -- loss ----------------------------------------------------------------------------
    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[override]
        cfg = self.loss_config
        inputs = dict(inputs)
        labels = inputs.pop("labels")
        cuda = inputs.pop("cuda_mask").bool()
        targets = shift_targets(labels)
        loss_mask = targets.ne(-100)
        cuda_t = torch.zeros_like(cuda)
        cuda_t[:, :-1] = cuda[:, 1:]
        cuda_t &= loss_mask
        top_k = cfg.eaft_top_k if cfg.method == "eaft" else 0

        ref_hidden = None
        if cfg.method == "asft":
            peft_model = self.accelerator.unwrap_model(model)
            with torch.no_grad(), peft_model.disable_adapter(), head_request(
                self.head, HeadRequest(targets, capture_hidden=True)
            ):
                ref_hidden = model(**inputs).logits.detach()

        req = HeadRequest(targets, top_k=top_k, ref_hidden=ref_hidden, chunk_tokens=cfg.chunk_tokens)
        with head_request(self.head, req):
            outputs = model(**inputs)
        stats = unpack(outputs.logits, top_k=top_k, has_ref=ref_hidden is not None)
        result = losses.compute(stats, loss_mask, cuda_t, cfg)

        if num_items_in_batch is None:
            num_items_in_batch = count_items(labels, cfg.normalize)
        denom = torch.as_tensor(num_items_in_batch, device=result.per_sample.device).float().clamp_min(1)
        loss = result.per_sample.sum() / denom
        if model.training:
            loss = loss * self.accelerator.num_processes
            for k, v in result.metrics.items():
                self._parts[k] = self._parts.get(k, 0) + v.detach().float()
        return (loss, outputs) if return_outputs else loss

    # -- logging -------------------------------------------------------------------------
    def log(self, logs: dict[str, float], *args: Any, **kwargs: Any) -> None:
        if "loss" in logs and self._parts:
            keys = sorted(self._parts)
            t = torch.stack([self._parts[k].to(self.args.device) for k in keys])
            if self.args.world_size > 1:
                t = self.accelerator.reduce(t, reduction="sum")
            logs.update(losses.summarize(dict(zip(keys, t.tolist(), strict=True))))
            self._parts = {}
        super().log(logs, *args, **kwargs)


def training_arguments(cfg: TrainConfig) -> TrainingArguments:
    t = cfg.training
    kw: dict[str, Any] = dict(
        output_dir=t.output_dir,
        learning_rate=t.learning_rate,
        num_train_epochs=t.num_train_epochs,
        max_steps=t.max_steps,
        per_device_train_batch_size=t.per_device_train_batch_size,
        gradient_accumulation_steps=t.gradient_accumulation_steps,
        lr_scheduler_type=t.lr_scheduler_type,
        warmup_steps=t.warmup,
        weight_decay=t.weight_decay,
        max_grad_norm=t.max_grad_norm,
        optim=t.optim,
        seed=t.seed,
        data_seed=t.seed,
        bf16=use_bf16(cfg),
        logging_steps=t.logging_steps,
        save_strategy=t.save_strategy,
        save_steps=t.save_steps,
        save_total_limit=t.save_total_limit,
        report_to=t.report_to or "none",
        dataloader_num_workers=t.dataloader_num_workers,
        disable_tqdm=t.disable_tqdm,
        remove_unused_columns=False,
        ddp_find_unused_parameters=False,
    )
    # transformers 5 renamed gradient to activation checkpointing; take whichever this one has
    ckpt = "activation_checkpointing" if "activation_checkpointing" in TrainingArguments.__dataclass_fields__ else "gradient_checkpointing"
    kw[ckpt] = cfg.model.gradient_checkpointing
    # non-reentrant: works with frozen LoRA bases and DDP without forcing input gradients
    kw[f"{ckpt}_kwargs"] = {"use_reentrant": False} if cfg.model.gradient_checkpointing else None
    if t.ddp_backend:
        kw["ddp_backend"] = t.ddp_backend
    if not torch.cuda.is_available():
        # without this, accelerate sees a CPU torchrun launch as a single process
        kw["use_cpu"] = True
    try:
        return TrainingArguments(**kw)
    except (ValueError, TypeError) as e:
        raise CusetError(f"invalid training settings: {e}") from None


def build_trainer(cfg: TrainConfig, rows: Any | None = None) -> tuple[CusetTrainer, DataReport]:
    """Load model, tokenizer and data; return a ready trainer and the data report."""
    if rows is None:
        if not cfg.data.path:
            raise CusetError("no dataset given: pass --data DIR or set data.path in the config")
        rows = load_rows(cfg.data.path, cfg.data.split)
    args = training_arguments(cfg)
    with args.main_process_first(local=True, desc="preparing the model"):
        # a builtin model is built once, by the first process of each machine
        path = resolve_model_path(cfg.model.name_or_path)
    tokenizer = load_tokenizer(cfg, path)
    check_chat_template(tokenizer, cfg.model.name_or_path)
    dataset, report = prepare(
        rows, tokenizer, max_length=cfg.data.max_length, system_prompt=cfg.data.system_prompt,
        progress=not cfg.training.disable_tqdm and args.process_index == 0,
    )
    model = load_model(cfg, path)
    trainer = CusetTrainer(
        model=model, args=args, train_dataset=dataset, data_collator=Collator(tokenizer.pad_token_id),
        processing_class=tokenizer, loss_config=cfg.loss,
    )
    return trainer, report


def train(cfg: TrainConfig, rows: Any | None = None) -> dict[str, Any]:
    trainer, report = build_trainer(cfg, rows)
    out = Path(cfg.training.output_dir)
    if trainer.args.process_index == 0:
        print(f"[cuset] data: {report.summary()}", flush=True)
        write_report(report, out)
        (out / "cuset_config.json").write_text(json.dumps(to_dict(cfg), indent=2, default=str))
    result = trainer.train()
    trainer.save_model(str(out / "final"))
    return {"train": result.metrics, "data": report.to_dict(), "log_history": trainer.state.log_history}


__all__ = ["CusetTrainer", "TokenizedDataset", "build_trainer", "train", "training_arguments"]
