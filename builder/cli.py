"""`python -m builder run ...`: build the dataset, with a progress display and a summary;
`python -m builder publish ...`: push a built folder to the Hugging Face Hub."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from sources.licenses import parse_allowed

from .config import BuildConfig, default_workers
from .pipeline import BuildError, BuildResult, build
from .pipeline import Progress as PipelineProgress

EXIT_EMPTY = 3
"""Exit status of a build that ran but kept no record (2: it could not start or stopped)."""


class RichProgress(PipelineProgress):
    def __init__(self, console: Console):
        self._p = Progress(
            TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), console=console, transient=False,
        )
        self._tasks: dict[str, int] = {}
        self._p.start()

    def phase(self, name: str, total: int) -> None:
        self._tasks[name] = self._p.add_task(name, total=total)

    def advance(self, name: str, n: int = 1) -> None:
        self._p.advance(self._tasks[name], n)

    def done(self, name: str) -> None:
        pass

    def stop(self) -> None:
        self._p.stop()


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m builder", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="build the dataset")
    r.add_argument("--sources", default="builtin", help="comma-separated source names (default: builtin)")
    r.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    r.add_argument("--out", type=Path, default=Path("out/dataset"), help="output folder (default: ./out/dataset)")
    r.add_argument("--workers", type=int, default=default_workers(), help="Ray CPUs for a local cluster")
    r.add_argument("--limit", type=int, default=None, help="read at most N records")
    g = r.add_mutually_exclusive_group()
    g.add_argument("--resume", dest="resume", action="store_true", default=True,
                   help="reuse finished work from the stage cache (default)")
    g.add_argument("--fresh", dest="resume", action="store_false",
                   help="drop the stage cache and previous shards first")
    r.add_argument("--address", default=None, help="Ray cluster address (default: a local cluster)")
    r.add_argument("--executor", default="ray", choices=["ray", "local"],
                   help="ray (default) or local (in-process, no Ray; for debugging)")
    r.add_argument("--near-dup-threshold", type=float, default=0.85,
                   help="MinHash Jaccard at or above which records are near duplicates (>=1 disables)")
    r.add_argument("--gpu-per-validation", type=float, default=0.25,
                   help="on cuda: the share of a GPU each validation task holds (0 < x <= 1; "
                   "most of a check is nvcc on the CPU, so builds overlap runs)")
    r.add_argument("--quick", action="store_true",
                   help="one schedule and no sanitizer build per case (faster, weaker validation)")
    r.add_argument("--portable-only", action="store_true",
                   help="drop programs that rely on behaviour CUDA leaves undefined but GPUs "
                        "agree on (e.g. threads that exit before a barrier): kept by default, "
                        "with the note in validation.portability")
    r.add_argument("--format", default="program", choices=["program", "kernelbench"],
                   help="program (default): a standalone CUDA program per record; kernelbench: "
                        "the KernelBench problem as the prompt and a ModelNew answer (Python, "
                        "CUDA inline) as the response, verified by validators.kernelbench")
    r.add_argument("--cache-dir", type=Path, default=None, help="stage cache (default: <out>/.cache)")
    r.add_argument("--no-progress", action="store_true", help="no progress display")
    src = r.add_argument_group("sources (each flag goes to the source it names)")
    src.add_argument("--github-repos", default=None,
                     help="OWNER/NAME[@REF],... or @FILE (one per line) to crawl")
    src.add_argument("--github-query", default=None,
                     help="repository search: language:Cuda plus these words, by stars")
    src.add_argument("--github-max-repos", type=int, default=None, help="cap on searched repositories")
    src.add_argument("--github-ref", default=None, help="branch, tag or commit for every repository")
    src.add_argument("--github-refresh", action="store_true", default=None,
                     help="re-check finished repositories with conditional requests (304s)")
    src.add_argument("--github-cache-dir", type=Path, default=None,
                     help="HTTP cache and crawl state (default $CKD_CACHE_DIR/github)")
    src.add_argument("--github-api-url", default=None,
                     help="GitHub REST base URL (default $GITHUB_API_URL or https://api.github.com)")
    src.add_argument("--licenses", default=None,
                     help="SPDX ids allowed, for every source (default: MIT, BSD-2/3-Clause, "
                          "Apache-2.0, ISC, Unlicense, BSL-1.0, Zlib, CC0-1.0, CC-BY-4.0 and "
                          "other permissive ones); other records are refused at gather")
    src.add_argument("--hf-dataset", action="append", default=None,
                     help="a Hub dataset id or a local Parquet/JSONL file or folder (repeatable)")
    src.add_argument("--hf-columns", default=None,
                     help="generic column mapping, e.g. text=code,module=torch_code,license=lic")
    src.add_argument("--hf-split", default=None, help="dataset split to read (default: the dataset's)")
    src.add_argument("--hf-config", default=None, help="dataset configuration name")
    src.add_argument("--hf-limit", type=int, default=None, help="rows to read per dataset")
    src.add_argument("--hf-revision", default=None, help="dataset revision (branch, tag or commit)")
    src.add_argument("--hf-license", default=None, help="SPDX id overriding every row's licence")
    src.add_argument("--hf-streaming", default=None, action=argparse.BooleanOptionalAction,
                     help="stream rows (default: on for Hub ids, off for local files)")
    src.add_argument("--per-task", type=int, default=3, metavar="N",
                     help="AI CUDA Engineer archive: passing attempts kept per task, the fastest "
                          "recorded first (default 3)")
    src.add_argument("--kernelbench-dir", type=Path, default=None,
                     help="a folder of KernelBench-style PyTorch modules (Model, get_inputs, ...)")
    src.add_argument("--kernelbench-split", default=None, choices=["train", "test"],
                     help="split for KernelBench tasks (default: test, they are a benchmark)")
    src.add_argument("--local-dir", type=Path, default=None, help="a folder of .cu files and headers")
    src.add_argument("--local-license", default=None, help="SPDX id of --local-dir's code")
    llm = r.add_argument_group("LLM task synthesis (any OpenAI-compatible endpoint)")
    llm.add_argument("--llm-model", default=None,
                     help="model name; without it records that need an LLM are rejected")
    llm.add_argument("--llm-base-url", default=None,
                     help="endpoint, e.g. http://localhost:8000/v1 (default $OPENAI_BASE_URL)")
    llm.add_argument("--llm-key-env", default="OPENAI_API_KEY",
                     help="environment variable holding the API key (default OPENAI_API_KEY)")
    llm.add_argument("--llm-concurrency", type=int, default=8, help="requests in flight (default 8)")
    llm.add_argument("--llm-temperature", type=float, default=0.2)
    llm.add_argument("--llm-max-tokens", type=int, default=8192)
    llm.add_argument("--llm-timeout", type=float, default=180.0, help="seconds per request")
    llm.add_argument("--llm-retries", type=int, default=6, help="retries on 429/5xx/timeouts")
    llm.add_argument("--llm-cache-dir", type=Path, default=None,
                     help="response cache (default $CKD_CACHE_DIR/llm)")
    llm.add_argument("--llm-schema-retries", type=int, default=2,
                     help="re-asks after an invalid answer, with the problems fed back")
    llm.add_argument("--repair-rounds", type=int, default=1,
                     help="rounds of feeding a failed verdict back to the LLM (default 1)")
    llm.add_argument("--min-kernel-kept", type=float, default=0.9,
                     help="share of the original kernel text an LLM program must keep (default 0.9)")
    r.add_argument("--decontaminate", action="append", type=Path, default=[],
                   help="benchmark to keep out of the dataset: a KernelBench folder, CUDABench or "
                        "ComputeEval JSONL, TritonBench JSON (repeatable)")
    pub = sub.add_parser("publish", help="push a built dataset folder to the Hugging Face Hub")
    pub.add_argument("--dataset", type=Path, required=True,
                     help="a folder `python -m builder run` wrote (its --out)")
    pub.add_argument("--repo-id", required=True, help="ORG/NAME of the dataset repository")
    pub.add_argument("--private", action="store_true",
                     help="create the repository private; an existing public one is refused")
    pub.add_argument("--revision", default=None,
                     help="branch to commit to, created from main if missing (default: main)")
    pub.add_argument("--with-reports", action="store_true",
                     help="also upload build_report.md, funnel.png and rejections.jsonl")
    pub.add_argument("--dry-run", action="store_true",
                     help="print the files (paths in the repository, sizes) and the card; "
                          "contact nothing")
    return p


def source_options(args: argparse.Namespace, sources: list[str]) -> dict[str, dict]:
    """The per-source options the flags carry; a flag for a source not in --sources is an
    error the pipeline reports."""
    opts: dict[str, dict] = {}

    def put(source: str, key: str, value) -> None:
        if value is not None:
            opts.setdefault(source, {})[key] = value

    put("github", "repos", args.github_repos)
    put("github", "query", args.github_query)
    put("github", "max_repos", args.github_max_repos)
    put("github", "api_url", args.github_api_url)
    put("github", "ref", args.github_ref)
    put("github", "cache_dir", str(args.github_cache_dir) if args.github_cache_dir else None)
    put("github", "refresh", args.github_refresh)
    if "github" in sources:  # the crawl skips a refused repository before fetching its tree
        put("github", "licenses", args.licenses)
    if args.hf_dataset:
        put("hf", "dataset", args.hf_dataset[0] if len(args.hf_dataset) == 1 else args.hf_dataset)
    put("hf", "columns", args.hf_columns)
    put("hf", "split", args.hf_split)
    put("hf", "config", args.hf_config)
    put("hf", "limit", args.hf_limit)
    put("hf", "revision", args.hf_revision)
    put("hf", "license", args.hf_license)
    put("hf", "streaming", args.hf_streaming)
    put("kernelbench", "path", str(args.kernelbench_dir) if args.kernelbench_dir else None)
    put("kernelbench", "split", args.kernelbench_split)
    put("local", "path", str(args.local_dir) if args.local_dir else None)
    put("local", "license", args.local_license)
    return opts


def llm_config(args: argparse.Namespace):
    if not args.llm_model:
        return None
    from .llm import LLMConfig

    return LLMConfig(
        base_url=args.llm_base_url, model=args.llm_model, api_key_env=args.llm_key_env,
        temperature=args.llm_temperature, max_tokens=args.llm_max_tokens, timeout=args.llm_timeout,
        max_retries=args.llm_retries, concurrency=max(1, args.llm_concurrency),
        schema_retries=args.llm_schema_retries, cache_dir=args.llm_cache_dir,
    ).resolved()


def summary_table(res: BuildResult) -> Table:
    m = res.manifest
    t = Table(title=f"build summary: {res.out}  ({res.wall_seconds:.1f} s wall, backend {m.backend})")
    for col, just in (("stage", "left"), ("in", "right"), ("out", "right"), ("cached", "right"),
                      ("busy s", "right"), ("rejected (reason: count)", "left")):
        t.add_column(col, justify=just)
    for st in m.stages:
        rej = ", ".join(f"{k}: {v}" for k, v in sorted(st.rejected.items())) or "-"
        t.add_row(st.name, str(st.records_in), str(st.records_out), str(st.cached), f"{st.seconds:.1f}", rej)
    return t


def run(args: argparse.Namespace) -> int:
    err = Console(stderr=True)
    if args.limit is not None and args.limit < 0:
        err.print(f"error: --limit {args.limit}: must not be negative", markup=False)
        return 2
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    if args.llm_concurrency < 1:
        err.print(f"error: --llm-concurrency {args.llm_concurrency}: must be at least 1", markup=False)
        return 2
    try:
        parse_allowed(args.licenses)
    except ValueError as exc:
        err.print(f"error: --licenses {args.licenses!r}: {exc}", markup=False)
        return 2
    try:
        llm = llm_config(args)
    except Exception as exc:
        err.print(f"error: LLM settings: {exc}", markup=False)
        return 2
    cfg = BuildConfig(
        sources=sources,
        backend=args.backend,
        out=args.out,
        workers=args.workers,
        limit=args.limit,
        resume=args.resume,
        address=args.address,
        executor=args.executor,
        near_dup_threshold=args.near_dup_threshold,
        gpu_per_validation=args.gpu_per_validation,
        thorough=not args.quick,
        cache_dir=args.cache_dir,
        source_options=source_options(args, sources),
        llm=llm,
        repair_rounds=args.repair_rounds,
        min_kernel_kept=args.min_kernel_kept,
        decontaminate=list(args.decontaminate),
        licenses=args.licenses,
        per_task=args.per_task,
        portable_only=args.portable_only,
        format=args.format,
    )
    progress = None if args.no_progress else RichProgress(err)
    try:
        res = build(cfg, progress)
    except BuildError as exc:
        if progress:
            progress.stop()
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return 2
    except KeyboardInterrupt:
        if progress:
            progress.stop()
        err.print("interrupted: finished work is cached; run the same command again to resume",
                  markup=False)
        return 130
    if progress:
        progress.stop()
    out = Console()
    out.print(summary_table(res))
    m = res.manifest
    total_in = m.stages[0].records_in if m.stages else 0
    kept = sum(m.splits.values())
    out.print(f"records in {total_in}, kept {kept} ({', '.join(f'{k} {v}' for k, v in m.splits.items())}), "
              f"rejected {total_in - kept}; dataset: {res.out}", markup=False, highlight=False)
    for note in res.notes:
        out.print(f"note: {note}", markup=False, highlight=False)
    if kept == 0 and total_in > 0:
        # An empty dataset is never a success: say why every record went.
        reasons = Counter()
        for st in m.stages:
            for why, n in st.rejected.items():
                reasons[f"{st.name}: {why}"] += n
        listed = ", ".join(f"{why} {n}" for why, n in reasons.most_common())
        err.print(f"error: the build kept no record of {total_in} ({listed}); see "
                  f"{res.out / 'rejections.jsonl'}", markup=False, highlight=False, soft_wrap=True)
        return EXIT_EMPTY
    return 0


def publish(args: argparse.Namespace) -> int:
    from .publish import PublishError, check_repo_id, dry_run_text, plan_upload, push, resolve_token

    err = Console(stderr=True)
    try:
        repo_id = check_repo_id(args.repo_id)
        plan = plan_upload(args.dataset, with_reports=args.with_reports)
        if args.dry_run:
            sys.stdout.write(dry_run_text(plan, repo_id, args.revision))
            return 0
        # before any request, so a missing login costs nothing
        token = resolve_token()
        res = push(plan, repo_id, token=token, private=args.private, revision=args.revision)
    except PublishError as exc:
        err.print(f"error: {exc}", markup=False, highlight=False, soft_wrap=True)
        return 2
    print(f"uploaded {len(res.uploaded)} files ({plan.total_bytes} bytes) in one commit"
          + (f", deleted {len(res.deleted)} stale: {', '.join(res.deleted)}" if res.deleted else ""))
    print(f"commit: {res.commit_url}")
    print(res.url)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "run":
        return run(args)
    if args.command == "publish":
        return publish(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
