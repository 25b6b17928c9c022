"""`python -m cuset eval`: arguments and the run. Bad input -> one line on stderr, exit 2; lines
of a `--completions` file that cannot be used -> one line each on stderr, the others evaluated,
exit 1."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import EvalError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", default="builtin",
                   help="builtin (the held-out split), a folder of tasks, a CUDABench JSONL file, "
                   "or kernelbench:DIR (a KernelBench checkout or a folder of problem files)")
    p.add_argument("--levels", help="kernelbench:DIR checkouts: comma-separated levels "
                   "(default: every level folder present)")
    p.add_argument("--completions", type=Path, help="evaluate completions generated elsewhere: "
                   'JSONL, one {"task": ..., "sample": ..., "completion": ...} a line '
                   "(instead of a model)")
    p.add_argument("--label", help="the model's name in the reports (default: the model, or "
                   "the completions file's name)")
    p.add_argument("--fast", action="store_true",
                   help="kernelbench: the verifier's quick check (one checking variant of three)")
    p.add_argument("--scale", default="smallest",
                   help="CUDABench rows a sample must pass: smallest, largest, all, or N (1 = smallest)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--n", type=int, help="samples per task (default 3; with --completions the "
                   "file decides)")
    p.add_argument("--k", default="1,3", help="comma-separated k values, each <= n (with "
                   "--completions a k above a task's samples is reported as not computable)")
    p.add_argument("--limit", type=int, help="only the first N tasks")
    p.add_argument("--out", type=Path, default=Path("out/eval"), help="output folder (resumable)")
    p.add_argument("--temperature", type=float, default=0.2)
    p.add_argument("--top-p", type=float, default=0.95)
    p.add_argument("--max-new-tokens", type=int, default=4096)
    p.add_argument("--batch-size", type=int, default=4, help="local model: prompts per generate()")
    p.add_argument("--workers", type=int, default=2, help="validation processes")
    p.add_argument("--base-url", help="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    p.add_argument("--model", help="model name at the endpoint")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY",
                   help="environment variable holding the endpoint's key")
    p.add_argument("--concurrency", type=int, default=8, help="endpoint requests in flight")
    p.add_argument("--model-path", help="local transformers checkpoint folder (or builtin:tiny)")
    p.add_argument("--adapter", help="LoRA adapter: a `cuset train` output folder")
    p.add_argument("--device", help="local model: where it runs (default: cuda when a GPU "
                   "answers, else cpu)")
    p.add_argument("--dtype", choices=["auto", "float32", "bfloat16", "float16"], default="auto",
                   help="local model: weights' dtype (auto: bfloat16 on a GPU that has it, "
                   "float16 on one that does not, float32 on the CPU)")
    p.add_argument("--reference-solutions", action="store_true",
                   help="validate each task's own reference program instead of sampling")
    p.add_argument("--quiet", action="store_true", help="no progress bar")


def _ks(text: str, n: int | None) -> tuple[int, ...]:
    """The k values; `n` None (completions: the samples per task are not known yet) checks only
    that each k is at least 1."""
    try:
        ks = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise EvalError(f"--k {text}: not a comma-separated list of integers") from None
    if not ks or ks[0] < 1:
        raise EvalError(f"--k {text}: every k must be at least 1")
    if n is not None and ks[-1] > n:
        raise EvalError(f"--k {text}: every k must be in 1..n (n = {n})")
    return ks


def _sampler(args: argparse.Namespace):
    from .samplers import EndpointSampler, LocalSampler

    if args.model_path and (args.base_url or args.model):
        raise EvalError("give either --base-url/--model or --model-path, not both")
    if args.model_path:
        return LocalSampler(args.model_path, adapter=args.adapter, temperature=args.temperature,
                            top_p=args.top_p, max_new_tokens=args.max_new_tokens,
                            batch_size=args.batch_size, device=args.device, dtype=args.dtype)
    if args.adapter:
        raise EvalError("--adapter needs --model-path")
    if not (args.base_url and args.model):
        raise EvalError("no model: give --base-url and --model, --model-path, "
                        "or --reference-solutions")
    return EndpointSampler(args.base_url, args.model, api_key_env=args.api_key_env,
                           temperature=args.temperature, top_p=args.top_p,
                           max_tokens=args.max_new_tokens, concurrency=args.concurrency)


def _check_completions_options(args: argparse.Namespace) -> None:
    if args.reference_solutions:
        raise EvalError("give either --completions or --reference-solutions, not both")
    if args.base_url or args.model or args.model_path:
        raise EvalError("--completions replaces the model: leave out --base-url, --model and "
                        "--model-path")
    if args.n is not None:
        raise EvalError("--n: with --completions the file decides the samples per task")


def run(args: argparse.Namespace) -> int:
    from .benchmarks import load_benchmark
    from .kernelbench import parse_levels
    from .report import headline, speed_table
    from .runner import RunOptions, run_eval

    skipped: list[str] = []
    try:
        if args.completions is not None:
            _check_completions_options(args)
        n = 3 if args.n is None else args.n
        for name in ("workers", "batch_size", "max_new_tokens"):
            if getattr(args, name) < 1:
                raise EvalError(f"--{name.replace('_', '-')} must be >= 1")
        if n < 1:
            raise EvalError("--n must be >= 1")
        if args.limit is not None and args.limit < 1:
            raise EvalError("--limit must be >= 1")
        if args.fast and not args.benchmark.startswith("kernelbench:"):
            raise EvalError(f"--fast is for --benchmark kernelbench:DIR, not {args.benchmark}")
        ks = (1,) if args.reference_solutions else _ks(
            args.k, None if args.completions is not None else n)
        backend = _backend(args.backend)
        tasks = load_benchmark(args.benchmark, args.scale, args.limit, parse_levels(args.levels))
        completions = None
        if args.completions is not None:
            from .completions import read_completions

            read = read_completions(args.completions, tasks)
            skipped = read.problems
            for line in skipped:  # before the run: a long evaluation should not hide them
                print(f"error: {line}", file=sys.stderr)
            completions = read.completions
            sampler = None
            label = args.label or args.completions.stem
        else:
            sampler = None if args.reference_solutions else _sampler(args)
            label = args.label or ("reference" if sampler is None else sampler.label)
        opts = RunOptions(out=args.out, n=n, ks=ks, backend=backend, workers=args.workers,
                          reference=args.reference_solutions, label=label,
                          progress=not args.quiet, fast=args.fast)
        notes = [f"{len(skipped)} lines of {args.completions} were skipped:\n\n"
                 + "\n".join(f"- {line}" for line in skipped)] if skipped else []
        summary = run_eval(tasks, sampler, opts, completions, notes)
    except EvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(headline(summary, label)))
    speed = speed_table(summary, label)
    if speed:
        print("\n".join(speed))
    print(f"{summary['n_tasks']} tasks, {summary['n_samples']} samples, backend "
          f"{summary['backend']}; details in {args.out / 'summary.md'}")
    if skipped:
        print(f"{len(skipped)} lines of {args.completions} skipped (listed on stderr and in "
              "summary.md)")
        return 1
    return 0


def _backend(name: str) -> str:
    from validators.backends import BackendUnavailable, get_backend

    try:
        return get_backend(name).name
    except BackendUnavailable as exc:
        raise EvalError(f"--backend {name}: {exc}") from None
