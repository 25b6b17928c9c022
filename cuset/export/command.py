"""`python -m cuset export`: a trained run's adapter, or the adapter merged into its base model,
as a folder `from_pretrained` and vLLM load, optionally uploaded to the Hugging Face Hub.

Bad input (run folder, output folder, repository, token) prints one `error: ...` line and
returns 2.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from ..errors import CusetError
from ..warm_start import WARM_START_FILE, for_adapter, verify
from .source import RunWeights, base_model, find_weights
from .write import DTYPES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--run", required=True,
                        help="output folder of `cuset train` (its final/ or latest checkpoint-N/), "
                        "or one checkpoint folder")
    parser.add_argument("--out", required=True, help="folder to write (must not exist or be empty)")
    parser.add_argument("--merge", action="store_true",
                        help="merge the LoRA adapter into its base model and write the full model")
    parser.add_argument("--base-model",
                        help="base model of the adapter (default: the run config's model)")
    parser.add_argument("--dtype", default="auto", choices=DTYPES,
                        help="dtype of the merged model (default: the base model's)")
    parser.add_argument("--max-shard-size", default="5GB",
                        help="largest safetensors shard of a merged model (default: 5GB)")
    parser.add_argument("--overwrite", action="store_true", help="replace a non-empty --out folder")
    parser.add_argument("--push-to-hub", metavar="REPO",
                        help="upload the exported folder to this Hub model repository")
    parser.add_argument("--private", action="store_true",
                        help="create the Hub repository as private (with --push-to-hub)")
    parser.add_argument("--dry-run", action="store_true",
                        help="check the inputs and print what would be written; write nothing")


def _check_out(out: Path, weights: RunWeights, run: Path, overwrite: bool) -> None:
    if out.exists() and not out.is_dir():
        raise CusetError(f"--out {str(out)!r} exists and is not a folder")
    o, r = out.resolve(), run.resolve()
    if o == r or r in o.parents or o in r.parents or o == weights.folder.resolve():
        raise CusetError(f"--out {str(out)!r} overlaps the run folder {str(run)!r}")
    if out.is_dir() and any(out.iterdir()) and not overwrite:
        raise CusetError(f"--out {str(out)!r} exists and is not empty (pass --overwrite to replace it)")


def _readable(folder: Path) -> None:
    """Some writers create files private to their owner; an export is meant to be shared (an
    inference server often runs as another user), so give every file the umask's mode."""
    mask = os.umask(0)
    os.umask(mask)
    for p in folder.iterdir():
        if p.is_file():
            p.chmod(0o666 & ~mask)


def _plan(args: argparse.Namespace, weights: RunWeights, base: str | None, warm: Any) -> str:
    if weights.kind == "full":
        what = "the fully fine-tuned model"
    elif args.merge and warm is not None and warm.kind == "full":
        what = f"the adapter merged into the SFT model {warm.folder} it was trained on"
    elif args.merge and warm is not None:
        what = f"the adapter merged into {base} with the SFT adapter {warm.folder} merged first"
    elif args.merge:
        what = f"the adapter merged into {base}"
    elif warm is not None:
        what = (f"the LoRA adapter (it applies to the SFT weights of {warm.folder}, recorded in "
                f"{WARM_START_FILE}: cuset eval/analyze --adapter rebuild them, other loaders "
                "need --merge)")
    else:
        what = "the LoRA adapter"
    line = f"export {what} from {weights.folder} to {args.out}"
    if args.push_to_hub:
        line += f", then upload to {'private ' if args.private else ''}Hub repo {args.push_to_hub}"
    return line


def _write(args: argparse.Namespace, weights: RunWeights, base: str | None, warm: Any,
           tmp: Path) -> None:
    from . import write

    if weights.kind == "full":
        write.export_full(weights, tmp, dtype=args.dtype, max_shard_size=args.max_shard_size)
    elif args.merge:
        write.export_merged(weights, tmp, base, dtype=args.dtype,
                            max_shard_size=args.max_shard_size, warm=warm)
    else:
        write.export_adapter(weights, tmp, base, warm=warm)


def _export(args: argparse.Namespace) -> Path:
    from . import hub

    if args.private and not args.push_to_hub:
        raise CusetError("--private only applies with --push-to-hub REPO")
    if args.push_to_hub:
        hub.check_repo_id(args.push_to_hub)
    run, out = Path(args.run), Path(args.out)
    weights = find_weights(run)
    _check_out(out, weights, run, args.overwrite)
    base: str | None = None
    # a run warm-started from an SFT run (cuset grpo --init-from) trained its adapter on top
    # of those weights: they are rebuilt, never left out
    warm = for_adapter(weights.folder, weights.run_config) if weights.kind == "adapter" else None
    if warm is not None:
        verify(warm, f"the adapter in {str(weights.folder)!r}")
        if warm.kind == "full" and args.base_model:
            raise CusetError(f"--base-model: the adapter in {str(weights.folder)!r} was trained "
                             f"on top of the full SFT model {warm.folder!r}, not on a base model")
    if weights.kind == "adapter" and (args.merge or args.base_model) and \
            (warm is None or warm.kind == "adapter"):
        base = base_model(weights, args.base_model)
    elif args.merge and weights.kind == "full":
        print("[cuset export] the run is a full fine-tune: nothing to merge, exporting the model",
              file=sys.stderr)
    # before any heavy work: a missing token should not cost a merge
    token = hub.hub_token() if args.push_to_hub else None
    print(f"[cuset export] {_plan(args, weights, base, warm)}", file=sys.stderr, flush=True)
    if args.dry_run:
        return out

    # written next to the target and renamed, so a failed export leaves no half folder
    tmp = out.with_name(f".{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    try:
        _write(args, weights, base, warm, tmp)
        if out.exists():
            shutil.rmtree(out)
        _readable(tmp)
        tmp.rename(out)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"written: {out} ({', '.join(sorted(p.name for p in out.iterdir()))})")
    if args.push_to_hub:
        assert token is not None
        url = hub.push(out, args.push_to_hub, private=args.private, token=token)
        print(f"uploaded: {url}")
    return out


def run(args: argparse.Namespace) -> int:
    try:
        _export(args)
    except CusetError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry (`python -m cuset.export`); `python -m cuset export` is the same."""
    p = argparse.ArgumentParser(prog="python -m cuset export", description=__doc__.splitlines()[0])
    add_arguments(p)
    return run(p.parse_args(argv))
