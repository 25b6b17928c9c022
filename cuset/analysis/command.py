"""`python -m cuset analyze`: token confidences of a model on a dataset, by token kind.

Bad input (model, tokenizer, dataset, options) prints one `error: ...` line and returns 2.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import CusetError

if TYPE_CHECKING:
    import torch


def add_arguments(parser: argparse.ArgumentParser) -> None:
    m = parser.add_argument_group("model")
    m.add_argument("--model-path", help="a transformers causal LM folder with its tokenizer")
    m.add_argument("--adapter", help="a LoRA adapter folder written by `cuset train` (.../final)")
    m.add_argument("--config", help="a trainer YAML config: its model (e.g. builtin:tiny, when no "
                   "--model-path), chat template, max length and system prompt")
    m.add_argument("--device", default="auto", help="auto (cuda when available), cpu, cuda, cuda:1")
    m.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16"],
                   help="auto: bfloat16 on a GPU that supports it, else float32")
    m.add_argument("--max-length", type=int,
                   help="tokens per sample, longer ones truncated (default: config or 4096)")
    d = parser.add_argument_group("data")
    d.add_argument("--data", required=True, help="dataset folder written by the builder")
    d.add_argument("--split", default="train", help="train or test (default: train)")
    d.add_argument("--limit", type=int, help="analyse only the first N records")
    o = parser.add_argument_group("analysis")
    o.add_argument("--window", type=int, default=64, help="sliding-window length (stride 1)")
    o.add_argument("--plot-samples", help="comma-separated sample ids to plot (default: the first 3)")
    o.add_argument("--out", default="runs/analyze", help="output folder (default: runs/analyze)")
    o.add_argument("--no-progress", action="store_true", help="no progress bar")


def _adapter_base(adapter: str) -> str | None:
    p = Path(adapter) / "adapter_config.json"
    try:
        return json.loads(p.read_text()).get("base_model_name_or_path")
    except (OSError, ValueError):
        return None


def _dtype(name: str, device: torch.device) -> torch.dtype:
    import torch

    if name == "auto":
        bf16 = device.type == "cuda" and torch.cuda.is_bf16_supported()
        return torch.bfloat16 if bf16 else torch.float32
    return getattr(torch, name)


def _check_options(args: argparse.Namespace) -> None:
    if args.window < 1:
        raise CusetError(f"--window must be at least 1 (got {args.window})")
    if args.limit is not None and args.limit < 1:
        raise CusetError(f"--limit must be at least 1 (got {args.limit})")
    if args.max_length is not None and args.max_length < 2:
        raise CusetError(f"--max-length must be at least 2 (got {args.max_length})")
    if not (args.model_path or args.config or args.adapter):
        raise CusetError("no model given: pass --model-path DIR, --config FILE or --adapter DIR")


def _analyze(args: argparse.Namespace) -> dict[str, Any]:
    from ..config import load_config
    from ..data import check_chat_template, load_rows, prepare
    from ..modeling import resolve_model_path
    from .confidence import load, pick_device, sample_confidence
    from .report import analyze_samples, summary_table

    _check_options(args)
    cfg = load_config(args.config) if args.config else None
    model_path = args.model_path
    if model_path is None and cfg is not None:
        model_path = resolve_model_path(cfg.model.name_or_path)
    if model_path is None:
        model_path = _adapter_base(args.adapter)
        if model_path is None:
            raise CusetError(f"adapter folder {args.adapter!r} names no base model; pass --model-path")
    max_length = args.max_length or (cfg.data.max_length if cfg else 4096)

    rows = load_rows(args.data, args.split)
    if args.limit is not None:
        rows = rows.select(range(min(args.limit, len(rows))))
    if len(rows) == 0:
        raise CusetError(f"dataset {args.data!r} has no records in the {args.split!r} split")

    device = pick_device(args.device)
    loaded = load(
        model_path, adapter=args.adapter, device=device, dtype=_dtype(args.dtype, device),
        chat_template=cfg.model.chat_template if cfg else None,
        trust_remote_code=cfg.model.trust_remote_code if cfg else False,
    )
    check_chat_template(loaded.tokenizer, model_path)
    dataset, report = prepare(
        rows, loaded.tokenizer, max_length=max_length,
        system_prompt=cfg.data.system_prompt if cfg else None,
    )
    print(f"[cuset analyze] data: {report.summary()}", file=sys.stderr, flush=True)

    from tqdm.auto import tqdm

    samples = [
        sample_confidence(loaded, ex)
        for ex in tqdm(dataset.examples, desc="scoring", unit="sample", disable=args.no_progress)
    ]
    plot_ids = [s.strip() for s in args.plot_samples.split(",") if s.strip()] if args.plot_samples else None
    out = Path(args.out)
    result = analyze_samples(samples, out, window=args.window, plot_ids=plot_ids)
    result["data_report"] = report.to_dict()
    result["model"] = {"path": str(model_path), "adapter": args.adapter, "split": args.split,
                       "max_length": max_length}
    (out / "analysis.json").write_text(json.dumps(result, indent=2))
    print(summary_table(result))
    print(f"written: {out / 'analysis.json'}, {out / result['plots']['density']}, "
          f"{len(result['plots']['windows'])} window plot(s)")
    return result


def run(args: argparse.Namespace) -> int:
    try:
        _analyze(args)
    except CusetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m cuset.analysis`); `python -m cuset analyze` is the same."""
    p = argparse.ArgumentParser(prog="python -m cuset analyze", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))
