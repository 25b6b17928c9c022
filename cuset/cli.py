"""Command line: `python -m cuset train|grpo|eval|analyze|export ...`.

`train --config FILE.yaml [--data DIR|OWNER/NAME] [--method M] [--resume [CKPT]] [key=value ...]`;
`grpo` (reinforcement learning on verified rewards, `cuset.grpo`); `eval` (pass@k, see `cuset.eval`); `analyze` (token confidence, `cuset.analysis.command`);
`export` (adapter or merged model, `cuset.export`).

Bad input (config, dataset, model) prints one clear error line and exits with status 2.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from .config import METHODS, load_config
from .errors import CusetError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m cuset", description="CuSeT trainer")
    sub = p.add_subparsers(dest="command", required=True)
    t = sub.add_parser("train", help="fine-tune a model on a dataset of the builder")
    t.add_argument("--config", required=True, help="YAML config (see cuset/configs/)")
    t.add_argument("--data", help="dataset folder in the Hub layout, or a Hub dataset id "
                   "owner/name (overrides data.path)")
    t.add_argument("--method", choices=METHODS, help="loss (overrides loss.method)")
    t.add_argument("--output-dir", help="overrides training.output_dir")
    t.add_argument("--resume", nargs="?", const="latest", metavar="CKPT",
                   help="continue from the newest checkpoint-* in the output folder, or from CKPT "
                   "(overrides training.resume_from_checkpoint)")
    t.add_argument("overrides", nargs="*", metavar="key=value",
                   help="dotted config overrides, e.g. loss.tau=0.2 training.max_steps=10")
    from .grpo import add_arguments as grpo_arguments

    grpo_arguments(sub.add_parser("grpo", help="GRPO on rewards from the validation service"))
    from .eval.command import add_arguments as eval_arguments

    eval_arguments(sub.add_parser("eval", help="pass@k of a model (or of the references) on a benchmark"))
    a = sub.add_parser("analyze", help="token-confidence analysis of a model on a dataset")
    analysis = _analysis()
    if analysis is not None:
        analysis.add_arguments(a)
    x = sub.add_parser("export", help="write the adapter or the merged model of a run")
    export = _export()
    if export is not None:
        export.add_arguments(x)
    return p


def _analysis():
    """`cuset.analysis.command`, or None when it is not installed: `train` and `eval` must work
    without it."""
    try:
        from .analysis import command
    except ModuleNotFoundError as exc:
        if exc.name in ("cuset.analysis", "cuset.analysis.command"):
            return None
        raise
    return command


def _export():
    """`cuset.export`, or None when it is not installed (as `_analysis`)."""
    try:
        return importlib.import_module(f"{__package__}.export")
    except ModuleNotFoundError as exc:
        if exc.name == f"{__package__}.export":
            return None
        raise


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["analyze"] and _analysis() is None:
        print("error: analyze is not available (cuset.analysis.command is missing)", file=sys.stderr)
        return 2
    if argv[:1] == ["export"] and _export() is None:
        print("error: export is not available (cuset.export is missing)", file=sys.stderr)
        return 2
    args = parser.parse_args(argv)
    if args.command == "eval":
        from .eval.command import run as run_eval

        return run_eval(args)
    if args.command == "grpo":
        from .grpo import run as run_grpo

        return run_grpo(args)
    if args.command == "analyze":
        return _analysis().run(args)
    if args.command == "export":
        return _export().run(args)
    overrides = list(args.overrides)
    if args.resume and "=" in args.resume and not os.path.exists(args.resume):
        # `--resume key=value ...`: argparse gave the optional CKPT the first override
        overrides.insert(0, args.resume)
        args.resume = "latest"
    if args.data:
        overrides.append(f"data.path={args.data}")
    if args.method:
        overrides.append(f"loss.method={args.method}")
    if args.output_dir:
        overrides.append(f"training.output_dir={args.output_dir}")
    if args.resume:
        overrides.append(f"training.resume_from_checkpoint={args.resume}")
    try:
        cfg = load_config(args.config, overrides)
        from .trainer import train

        train(cfg)
    except CusetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        # A finished rank must not die in the interpreter's teardown: gloo's and other
        # libraries' C++ threads are destroyed there in an order that sometimes aborts
        # ("terminate called without an active exception"), failing a run whose outputs are
        # all written. Everything is saved and the process group is closed by now.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
    return 0
