"""Command line: `python -m cuset train --config FILE.yaml [--data DIR] [--method M] [key=value ...]`.

Bad input (config, dataset, model) prints one clear error line and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys

from .config import METHODS, load_config
from .errors import CusetError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m cuset", description="CuSeT trainer")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fine-tune a model on a dataset of the builder")
    t.add_argument("--config", required=True, help="YAML config (see cuset/configs/)")
    t.add_argument("--data", help="dataset folder in the Hub layout (overrides data.path)")
    t.add_argument("--method", choices=METHODS, help="loss (overrides loss.method)")
    t.add_argument("--output-dir", help="overrides training.output_dir")
    t.add_argument("overrides", nargs="*", metavar="key=value",
                   help="dotted config overrides, e.g. loss.tau=0.2 training.max_steps=10")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    overrides = list(args.overrides)
    if args.data:
        overrides.append(f"data.path={args.data}")
    if args.method:
        overrides.append(f"loss.method={args.method}")
    if args.output_dir:
        overrides.append(f"training.output_dir={args.output_dir}")
    try:
        cfg = load_config(args.config, overrides)
        from .trainer import train

        train(cfg)
    except CusetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0
