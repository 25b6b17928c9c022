"""Training tokens per second with and without packing (`data.packing`) on the tiny model.

Both variants train one epoch over the same examples with `cuset/configs/tiny.yaml` (LoRA,
gradient checkpointing, sdpa, CPU): unpacked, each batch is right-padded to its longest example;
packed, examples are concatenated into rows of up to `--max-length` tokens with no padding
inside a row. Tokens per second counts the examples' own tokens (padding excluded), so the
figure is the useful throughput. Variants run alternately `--repeats` times after a warm-up
run; the best wall-clock time of each is reported.

    python benchmarks/bench_packing.py [--data DIR] [--copies 4] [--max-length 2048]
        [--batch-size 4] [--method cuset] [--repeats 2] [--threads N]

Without `--data` the records are the tiny model's bundled CUDA programs (593-1121 tokens).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TINY = REPO / "cuset" / "configs" / "tiny.yaml"


def _default_dataset(copies: int, folder: Path) -> Path:
    # the trainer tests' record builder: valid builder records of the bundled CUDA programs
    sys.path.insert(0, str(REPO / "tests" / "cuset"))
    from cuset_testdata import corpus_records, write_dataset

    return write_dataset(corpus_records(copies), folder)


def _run(data: Path, out: Path, packing: bool, args: argparse.Namespace) -> tuple[float, int, int]:
    """(seconds of the training loop, example tokens, rows) for one epoch."""
    from cuset.config import load_config
    from cuset.trainer import build_trainer

    cfg = load_config(TINY, [
        f"data.path={data}", f"training.output_dir={out}", "training.disable_tqdm=true",
        f"data.max_length={args.max_length}", f"data.packing={str(packing).lower()}",
        f"loss.method={args.method}", "training.max_steps=-1", "training.num_train_epochs=1",
        f"training.per_device_train_batch_size={args.batch_size}",
        "training.gradient_accumulation_steps=1", "training.report_to=[]",
        "training.eval_strategy=no", "training.logging_steps=1000",
        "training.noop_check_steps=0",
    ])
    trainer, report = build_trainer(cfg)
    examples = getattr(trainer.train_dataset, "examples", [])
    tokens = sum(len(e.input_ids) for e in examples)
    t0 = time.perf_counter()
    trainer.train()
    return time.perf_counter() - t0, tokens, len(trainer.train_dataset)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, help="a builder dataset folder (default: bundled corpus)")
    ap.add_argument("--copies", type=int, default=4, help="copies of the bundled corpus")
    ap.add_argument("--max-length", type=int, default=2048)
    ap.add_argument("--batch-size", type=int, default=4)
    ap.add_argument("--method", default="cuset")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    args = ap.parse_args(argv)

    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ.setdefault("CKD_CACHE_DIR", str(root / "cache"))
        data = args.data or _default_dataset(args.copies, root / "data")
        _run(data, root / "warmup", True, args)
        best: dict[bool, tuple[float, int, int]] = {}
        for r in range(args.repeats):
            for packing in (False, True):
                res = _run(data, root / f"run-{r}-{packing}", packing, args)
                if packing not in best or res[0] < best[packing][0]:
                    best[packing] = res
    (tu, tok, rows_u), (tp, _, rows_p) = best[False], best[True]
    print(f"method={args.method} max_length={args.max_length} batch={args.batch_size} "
          f"threads={torch.get_num_threads()} examples' tokens={tok}")
    print(f"{'':>10} {'rows':>6} {'seconds':>9} {'tokens/s':>10}")
    print(f"{'unpacked':>10} {rows_u:>6} {tu:>9.2f} {tok / tu:>10.0f}")
    print(f"{'packed':>10} {rows_p:>6} {tp:>9.2f} {tok / tp:>10.0f}")
    print(f"packed / unpacked tokens per second: {tu / tp:.2f}x")


if __name__ == "__main__":
    main()
