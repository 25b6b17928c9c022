"""The Trainer subclass that computes the CuSeT objective (or a baseline) from chunked
per-token statistics, and the `train()` entry point that wires config, data and model.

No silent no-ops: a run whose first `training.noop_check_steps` optimizer steps (default 3, or
all of a shorter run) all have a loss of exactly 0 summed over every micro-batch and rank stops
with a `CusetError`. A zero loss means every target token got weight 0 (CuSeT/ProFit with every
confidence under tau and no CUDA token), so no gradient flows and the run would only burn time.
Later zero steps are not checked: once the model learns, a batch of all-hard tokens is a
legitimate zero.

Evaluation: `evaluate()` reports, on `data.eval_split`, the method's own loss (`eval_loss`, as
normalised in training) and, for every method, the plain NLL per response token (`eval_nll`) and
the share of response tokens that are the arg-max prediction (`eval_token_accuracy`).

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
from transformers import Trainer, TrainerCallback, TrainingArguments, set_seed
from transformers.trainer_utils import get_last_checkpoint

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
from .errors import CusetError, MissingSplitError
from .head import HeadRequest, find_head, head_request, unpack
from .logprobs import default_chunk_tokens, shift_targets
from .modeling import load_model, load_tokenizer, resolve_model_path, use_bf16
from .packing import PackedCollator, PackedDataset, count_samples

log = logging.getLogger("cuset")


def count_items(
    labels: torch.Tensor, normalize: str, seq_idx: torch.Tensor | None = None,
) -> torch.Tensor:
    """Target tokens (labels after the shift), or samples that have at least one (the examples
    of packed rows, told apart by `seq_idx`)."""
    valid = labels[..., 1:].ne(-100)
    if normalize == "tokens":
        return valid.sum()
    return valid.any(dim=-1).sum() if seq_idx is None else count_samples(labels, seq_idx)


class NoOpGuard(TrainerCallback):
    """Raises when the first `steps` optimizer steps of a run all have a loss of exactly 0."""

    def __init__(self, trainer: CusetTrainer, steps: int, report: DataReport | None = None):
        self.trainer = trainer
        self.steps = steps
        self.report = report
        self.seen = 0
        self.done = steps == 0
        self.error: str | None = None
        # loss mass, response tokens and CUDA tokens of the current optimizer step
        self._sums = torch.zeros(3, dtype=torch.float64)

    def add(self, result: losses.LossOutput) -> None:
        if self.done:
            return
        m = result.metrics
        self._sums += torch.tensor([
            result.per_sample.detach().abs().sum().item(),
            float(m["tokens"]), float(m["cuda_tokens"]),
        ], dtype=torch.float64)

    def on_step_end(self, args, state, control, **kwargs):  # type: ignore[override]
        if self.done:
            return
        sums = self._sums.to(args.device)
        if args.world_size > 1:
            sums = self.trainer.accelerator.reduce(sums, reduction="sum")
        self._sums = torch.zeros(3, dtype=torch.float64)
        self.seen += 1
        if sums[0].item() > 0:
            self.done = True
            return
        if self.seen >= self.steps or state.global_step >= state.max_steps:
            self.done = True
            # stop after this step is logged; CusetTrainer.train raises once the loop has ended
            self.error = self.explain(self.seen, int(sums[1].item()), int(sums[2].item()))
            control.should_training_stop = True
            control.should_log = True

    def explain(self, steps: int, tokens: int, cuda_tokens: int) -> str:
        cfg = self.trainer.loss_config
        head = (
            f"nothing to train: the loss was exactly 0 (no gradient) on the first {steps} "
            f"optimizer step(s) of method {cfg.method}"
        )
        r = self.report
        cut = (
            f"; data.max_length={r.max_length} left {len(r.no_cuda_tokens)} of {r.used} records "
            f"with no CUDA token (longest record {r.longest} tokens)"
            if r is not None and r.no_cuda_tokens else ""
        )
        if cfg.method == "cuset" and cfg.use_confidence:
            why = (
                f": no response token has confidence above loss.tau={cfg.tau} and {cuda_tokens} "
                f"of {tokens} are in the CUDA mask{cut}. Lower loss.tau (an untrained model's "
                "confidences are about 1/vocab) or raise data.max_length"
            )
        elif cfg.method == "profit":
            why = (
                f": no response token has confidence of at least loss.profit_tau={cfg.profit_tau}"
                f"{cut}. Lower loss.profit_tau (an untrained model's confidences are about "
                "1/vocab) or start from a trained model"
            )
        else:
            why = f" ({tokens} response tokens, {cuda_tokens} in the CUDA mask{cut}). Check loss.*"
        return head + why + " (training.noop_check_steps=0 turns this check off)"


class CusetTrainer(Trainer):
    loss_is_scaled_for_ga = True

    def __init__(
        self, *args: Any, loss_config: LossConfig, noop_check_steps: int = 3,
        data_report: DataReport | None = None, **kwargs: Any,
    ):
        super().__init__(*args, **kwargs)
        self.loss_config = loss_config
        self.head = find_head(self.model)
        # older transformers decide the accumulation scaling from this flag
        self.model_accepts_loss_kwargs = True
        self._parts: dict[str, torch.Tensor] = {}
        self.noop_guard = NoOpGuard(self, noop_check_steps, data_report)
        self.eval_report: DataReport | None = None
        self.add_callback(self.noop_guard)

    def train(self, *args: Any, **kwargs: Any):  # type: ignore[override]
        result = super().train(*args, **kwargs)
        if self.noop_guard.error:
            raise CusetError(self.noop_guard.error)
        return result

    # -- normalisation -------------------------------------------------------------------
    def get_batch_samples(self, epoch_iterator, num_batches, device):  # type: ignore[override]
        batches = []
        for _ in range(num_batches):
            try:
                batches.append(next(epoch_iterator))
            except StopIteration:
                break
        norm = self.loss_config.normalize
        n = sum((count_items(b["labels"], norm, b.get("seq_idx")) for b in batches), torch.tensor(0))
        n = n.reshape(1).to(device)
        if self.args.world_size > 1:
            n = self.accelerator.gather(n).sum()
        return batches, n.reshape(())

    # -- loss ----------------------------------------------------------------------------
    def _method_loss(self, model, inputs) -> tuple[losses.LossOutput, torch.Tensor, Any]:
        """The method's per-sample losses for a batch: (result, labels, model outputs)."""
        cfg = self.loss_config
        inputs = dict(inputs)
        labels = inputs.pop("labels")
        cuda = inputs.pop("cuda_mask").bool()
        # packed rows: the model gets the position ids, the loss also the example of each token
        seq_idx = inputs.pop("seq_idx", None)
        if seq_idx is not None:
            # transformers separates packed examples by their position ids only without a cache
            inputs["use_cache"] = False
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
        result = losses.compute(stats, loss_mask, cuda_t, cfg, seq_idx=seq_idx,
                                positions=inputs.get("position_ids"))
        return result, labels, outputs

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):  # type: ignore[override]
        cfg = self.loss_config
        result, labels, outputs = self._method_loss(model, inputs)
        if num_items_in_batch is None:
            num_items_in_batch = count_items(labels, cfg.normalize, inputs.get("seq_idx"))
        denom = torch.as_tensor(num_items_in_batch, device=result.per_sample.device).float().clamp_min(1)
        loss = result.per_sample.sum() / denom
        if model.training:
            loss = loss * self.accelerator.num_processes
            for k, v in result.metrics.items():
                self._parts[k] = self._parts.get(k, 0) + v.detach().float()
            self.noop_guard.add(result)
        return (loss, outputs) if return_outputs else loss

    # -- evaluation ----------------------------------------------------------------------
    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix: str = "eval"):  # type: ignore[override]
        """Method loss, plain NLL and token accuracy over the response tokens of the eval set."""
        loader = self.get_eval_dataloader(eval_dataset)
        model = self.model
        was_training = model.training
        model.eval()
        # method loss, its normaliser, NLL, correct arg-max, response tokens
        sums = torch.zeros(5, dtype=torch.float64, device=self.args.device)
        with torch.no_grad():
            for batch in loader:
                batch = self._prepare_inputs(batch)
                result, labels, _ = self._method_loss(model, batch)
                sums[0] += result.per_sample.sum().double()
                norm = self.loss_config.normalize
                sums[1] += count_items(labels, norm, batch.get("seq_idx")).double()
                sums[2:] += self._nll_and_accuracy(model, batch).to(sums)
        if self.args.world_size > 1:
            sums = self.accelerator.reduce(sums, reduction="sum")
        model.train(was_training)
        loss, items, nll, correct, tokens = sums.tolist()
        metrics = {
            f"{metric_key_prefix}_loss": loss / max(items, 1.0),
            f"{metric_key_prefix}_nll": nll / max(tokens, 1.0),
            f"{metric_key_prefix}_token_accuracy": correct / max(tokens, 1.0),
            f"{metric_key_prefix}_tokens": tokens,
        }
        self.log(metrics)
        self.control = self.callback_handler.on_evaluate(self.args, self.state, self.control, metrics)
        return metrics

    def _nll_and_accuracy(self, model, inputs) -> torch.Tensor:
        """[NLL sum, arg-max hits, tokens] from the final hidden states, through the output
        layer in chunks so full-vocabulary logits never exist for the whole batch."""
        inputs = dict(inputs)
        labels = inputs.pop("labels")
        inputs.pop("cuda_mask")
        inputs.pop("seq_idx", None)
        targets = shift_targets(labels)
        with head_request(self.head, HeadRequest(targets, capture_hidden=True)):
            hidden = model(**inputs).logits
        tgt = targets[targets.ne(-100)]
        chunk = self.loss_config.chunk_tokens or default_chunk_tokens(self.head.out_features)
        nll = torch.zeros((), dtype=torch.float64, device=hidden.device)
        hits = torch.zeros_like(nll)
        for s in range(0, hidden.shape[0], chunk):
            # calling the head module (no request: plain linear) keeps sharded weights gathered
            z = self.head(hidden[s : s + chunk]).float()
            t = tgt[s : s + chunk]
            nll += (torch.logsumexp(z, -1) - z.gather(1, t[:, None]).squeeze(1)).sum().double()
            hits += z.argmax(-1).eq(t).sum().double()
        return torch.stack([nll, hits, torch.tensor(float(tgt.numel()), device=nll.device).double()])

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


def training_arguments(cfg: TrainConfig, *, evaluate: bool = True) -> TrainingArguments:
    """`evaluate`: False when there is no eval set (evaluation is then off whatever the config)."""
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
        eval_strategy=t.eval_strategy if evaluate else "no",
        eval_steps=t.eval_steps,
        per_device_eval_batch_size=t.per_device_eval_batch_size or t.per_device_train_batch_size,
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


def resolve_checkpoint(value: str | None, output_dir: str | Path) -> str | None:
    """`latest`: the newest `checkpoint-*` in output_dir; else a checkpoint folder; None: none."""
    if value is None:
        return None
    if value == "latest":
        last = get_last_checkpoint(str(output_dir)) if Path(output_dir).is_dir() else None
        if last is None:
            raise CusetError(f"--resume: no checkpoint-* folder in {str(output_dir)!r} to resume from")
        return last
    p = Path(value)
    if not (p / "trainer_state.json").is_file():
        reason = "no such folder" if not p.is_dir() else "not a checkpoint (no trainer_state.json)"
        raise CusetError(f"--resume {value!r}: {reason}")
    return str(p)


def _eval_rows(cfg: TrainConfig) -> Any | None:
    if cfg.training.eval_strategy == "no" or cfg.data.eval_split is None or not cfg.data.path:
        return None
    try:
        return load_rows(cfg.data.path, cfg.data.eval_split)
    except MissingSplitError as e:
        print(f"[cuset] evaluation off: {e}", flush=True)
        return None


def build_trainer(
    cfg: TrainConfig, rows: Any | None = None, eval_rows: Any | None = None,
) -> tuple[CusetTrainer, DataReport]:
    """Load model, tokenizer and data; return a ready trainer and the data report. With `rows`
    given, `eval_rows` is the eval set (None: no evaluation); otherwise both come from
    `data.path`."""
    if rows is None:
        if not cfg.data.path:
            raise CusetError("no dataset given: pass --data DIR or set data.path in the config")
        rows = load_rows(cfg.data.path, cfg.data.split, cfg.data.max_samples)
        eval_rows = _eval_rows(cfg)
    elif cfg.data.max_samples is not None:
        rows = list(rows)[: cfg.data.max_samples]
    args = training_arguments(cfg, evaluate=eval_rows is not None)
    with args.main_process_first(local=True, desc="preparing the model"):
        # a builtin model is built once, by the first process of each machine
        path = resolve_model_path(cfg.model.name_or_path)
    tokenizer = load_tokenizer(cfg, path)
    check_chat_template(tokenizer, cfg.model.name_or_path)
    progress = not cfg.training.disable_tqdm and args.process_index == 0
    dataset, report = prepare(
        rows, tokenizer, max_length=cfg.data.max_length, system_prompt=cfg.data.system_prompt,
        progress=progress,
    )
    eval_set = eval_report = None
    if eval_rows is not None:
        eval_set, eval_report = prepare(
            eval_rows, tokenizer, max_length=cfg.data.max_length,
            system_prompt=cfg.data.system_prompt, progress=progress,
        )
    # the adapter's random init happens here, before the Trainer seeds: seed it so two runs of
    # one config (an interrupted one and its rerun) start from the same weights
    set_seed(cfg.training.seed)
    model = load_model(cfg, path)
    collator: Any = Collator(tokenizer.pad_token_id)
    if cfg.data.packing:
        dataset = PackedDataset(dataset.examples, cfg.data.max_length)
        if eval_set is not None:
            eval_set = PackedDataset(eval_set.examples, cfg.data.max_length)
        collator = PackedCollator(tokenizer.pad_token_id)
    trainer = CusetTrainer(
        model=model, args=args, train_dataset=dataset, eval_dataset=eval_set,
        data_collator=collator, processing_class=tokenizer,
        loss_config=cfg.loss, noop_check_steps=cfg.training.noop_check_steps, data_report=report,
    )
    trainer.eval_report = eval_report
    return trainer, report


def _close_process_group() -> None:
    # Ranks that exit with a live gloo group abort in its pair threads' destructors
    # ("terminate called without an active exception"), failing a finished run.
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def train(cfg: TrainConfig, rows: Any | None = None, eval_rows: Any | None = None) -> dict[str, Any]:
    """Train, save `final/` and `trainer_state.json` (also when training stops with an error)."""
    out = Path(cfg.training.output_dir)
    checkpoint = resolve_checkpoint(cfg.training.resume_from_checkpoint, out)
    trainer, report = build_trainer(cfg, rows, eval_rows)
    if trainer.args.process_index == 0:
        print(f"[cuset] data: {report.summary()}", flush=True)
        write_report(report, out)
        if trainer.eval_report is not None:
            print(f"[cuset] eval data ({cfg.data.eval_split}): {trainer.eval_report.summary()}",
                  flush=True)
            write_report(trainer.eval_report, out, "eval_data_report.json")
        (out / "cuset_config.json").write_text(json.dumps(to_dict(cfg), indent=2, default=str))
        if checkpoint:
            print(f"[cuset] resuming from {checkpoint}", flush=True)
    try:
        result = trainer.train(resume_from_checkpoint=checkpoint)
    finally:
        trainer.save_state()
    trainer.save_model(str(out / "final"))
    _close_process_group()
    return {"train": result.metrics, "data": report.to_dict(), "log_history": trainer.state.log_history}


__all__ = [
    "CusetTrainer", "NoOpGuard", "TokenizedDataset", "build_trainer", "resolve_checkpoint", "train",
    "training_arguments",
]
