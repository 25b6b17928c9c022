"""`python -m cuset eval`: arguments and the run. Bad input -> one line on stderr, exit 2."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .errors import EvalError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--benchmark", default="builtin",
                   help="builtin (the held-out split), a folder of tasks, or a CUDABench JSONL file")
    p.add_argument("--scale", default="smallest",
                   help="CUDABench rows a sample must pass: smallest, largest, all, or N (1 = smallest)")
    p.add_argument("--backend", default="auto", choices=("auto", "cpu", "cuda"))
    p.add_argument("--n", type=int, default=3, help="samples per task")
    p.add_argument("--k", default="1,3", help="comma-separated k values, each <= n")
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


def _ks(text: str, n: int) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(x) for x in text.split(",") if x.strip()}))
    except ValueError:
        raise EvalError(f"--k {text}: not a comma-separated list of integers") from None
    if not ks or ks[0] < 1 or ks[-1] > n:
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


def run(args: argparse.Namespace) -> int:
    from .benchmarks import load_benchmark
    from .report import headline
    from .runner import RunOptions, run_eval

    try:
        for name in ("n", "workers", "batch_size", "max_new_tokens"):
            if getattr(args, name) < 1:
                raise EvalError(f"--{name.replace('_', '-')} must be >= 1")
        if args.limit is not None and args.limit < 1:
            raise EvalError("--limit must be >= 1")
        ks = (1,) if args.reference_solutions else _ks(args.k, args.n)
        backend = _backend(args.backend)
        tasks = load_benchmark(args.benchmark, args.scale, args.limit)
        sampler = None if args.reference_solutions else _sampler(args)
        label = "reference" if sampler is None else sampler.label
        opts = RunOptions(out=args.out, n=args.n, ks=ks, backend=backend, workers=args.workers,
                          reference=args.reference_solutions, label=label,
                          progress=not args.quiet)
        summary = run_eval(tasks, sampler, opts)
    except EvalError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(headline(summary, label)))
    print(f"{summary['n_tasks']} tasks, {summary['n_samples']} samples, backend "
          f"{summary['backend']}; details in {args.out / 'summary.md'}")
    return 0


def _backend(name: str) -> str:
    from validators.backends import BackendUnavailable, get_backend

    try:
        return get_backend(name).name
    except BackendUnavailable as exc:
        raise EvalError(f"--backend {name}: {exc}") from None
