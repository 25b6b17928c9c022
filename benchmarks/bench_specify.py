"""Throughput of the builder's specify stage (the real `KernelSpecifier`: prompt, request,
answer checks, kernel fidelity) against the OpenAI-compatible stand-in with a fixed latency.

Each record is a real kernel (Liu-xiandong's elementwise `add`, one record id per copy so
nothing is shared) and the stand-in answers every request after `--latency` seconds with a
valid task and program. The stage runs the way `python -m builder run` runs it: through
`builder.executors.run_threaded` with `--llm-concurrency` threads, a fresh response cache per
row. The ideal wall time for `n` records at concurrency `c` is ceil(n / c) * latency; the ratio
is ideal / measured (1.0 = only the endpoint's latency counts). The `cpu-only` row is the
same stage answering from a warm cache: the checks' own cost per record, which caps the
throughput on a small machine.

    python benchmarks/bench_specify.py [--records 64] [--latency 0.2] [--concurrency 1,8,32]

`--prompt-tokens` measures instead what one kernel record's prompt costs, on the real files
of the five repositories in `../shared/data/github`: every kernel of every file is a record
(as the github source makes them, local headers in `files`), and its prompt (system and user
message, built by the real `KernelSpecifier.messages`) is built twice in the same run: with
every file whole (`ContextOptions(excerpt=False)`, what prompts held before excerpts) and as
the focus kernel's excerpt (the default). Tokens are counted with tiktoken's `cl100k_base`
when it loads offline, else estimated as characters / 4 (the header says which).

    python benchmarks/bench_specify.py --prompt-tokens [--data ../shared/data/github]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "builder"))

from llm_scripts import LIU, add_answer, right_add  # noqa: E402
from openai_standin import StandIn, ok  # noqa: E402

from builder.executors import run_threaded  # noqa: E402
from builder.item import Envelope, Item  # noqa: E402
from builder.llm import LLMConfig  # noqa: E402
from builder.llm.context import ContextOptions  # noqa: E402
from builder.llm.specify import KernelSpecifier  # noqa: E402
from builder.stages import Specify  # noqa: E402
from schemas import Provenance, RawRecord  # noqa: E402


def records(n: int) -> list[Envelope]:
    text = (LIU / "elementwise" / "elementwise_add.cu").read_text()
    return [Envelope(item=Item(raw=RawRecord(
        id=f"bench/elementwise_add_{i:04d}.cu#add", text=text, focus="add", kind="kernel",
        provenance=Provenance(source="bench", origin="bench", license="Apache-2.0"))))
        for i in range(n)]


def run(url: str, concurrency: int, n: int, cache: Path) -> tuple[float, int]:
    llm = LLMConfig(model="scripted", base_url=url, cache_dir=cache, concurrency=concurrency)
    stage = Specify([KernelSpecifier(llm)])
    envs = records(n)
    t0 = time.perf_counter()
    done = list(run_threaded([stage], envs, None, threads=concurrency))
    wall = time.perf_counter() - t0
    return wall, sum(e.item.alive for e in done)


def token_counter() -> tuple[str, Callable[[str], int]]:
    try:
        import tiktoken

        enc = tiktoken.get_encoding("cl100k_base")  # needs its BPE file: cached or downloadable
        return "tiktoken cl100k_base", lambda text: len(enc.encode(text, disallowed_special=()))
    except Exception:
        return "estimate: characters / 4", lambda text: (len(text) + 3) // 4


def repo_records(folder: Path) -> list[RawRecord]:
    """One record per kernel of each file, as `sources.github.records` makes them."""
    from sources.files import KernelFile, scan_tree
    from sources.local.tree import LocalTree

    out = []
    for kf in scan_tree(LocalTree(folder / "files")):
        if not isinstance(kf, KernelFile):
            continue
        for kernel in kf.kernels:
            out.append(RawRecord(
                id=f"github/{folder.name.replace('__', '/')}/{kf.path}#{kernel}", text=kf.text,
                focus=kernel, kind="kernel", files=dict(kf.includes.files),
                meta={"kernels_in_file": str(len(kf.kernels))},
                provenance=Provenance(source="github", origin=kf.path, license="MIT",
                                      path=kf.path)))
    return out


def prompt_tokens(data: Path) -> None:
    how, count = token_counter()
    llm = LLMConfig(model="bench", base_url="http://127.0.0.1:9/v1")
    before = KernelSpecifier(llm, context=ContextOptions(excerpt=False))
    after = KernelSpecifier(llm)

    def tokens(spec: KernelSpecifier, item: Item) -> int:
        return sum(count(m["content"]) for m in spec.messages(item))

    print(f"prompt tokens per kernel record ({how}), before = whole file and headers, "
          "after = the focus kernel's excerpt")
    print(f"{'repository':<36} {'records':>7} {'before':>9} {'after':>9} {'ratio':>6}   "
          f"{'multi-kernel files: records':>27} {'before':>9} {'after':>9} {'ratio':>6}")
    totals = [0, 0, 0, 0, 0, 0]
    worst: list[tuple[int, int, str]] = []
    for folder in sorted(p for p in data.iterdir() if (p / "files").is_dir()):
        rows = [0, 0, 0, 0, 0, 0]
        for raw in repo_records(folder):
            item = Item(raw=raw)
            b, a = tokens(before, item), tokens(after, item)
            multi = int(raw.meta["kernels_in_file"]) > 1
            rows[0] += 1
            rows[1] += b
            rows[2] += a
            if multi:
                rows[3] += 1
                rows[4] += b
                rows[5] += a
            worst.append((b, a, raw.id))
        totals = [t + r for t, r in zip(totals, rows, strict=True)]
        print_row(folder.name.replace("__", "/"), rows)
    print_row("all", totals)
    print("\nlargest prompts before (tokens before -> after):")
    for b, a, rid in sorted(worst, reverse=True)[:5]:
        print(f"  {b:>7} -> {a:>6}  ({b / max(a, 1):.1f}x)  {rid}")


def print_row(name: str, r: list[int]) -> None:
    def per(total: int, n: int) -> str:
        return f"{total / n:>9.0f}" if n else f"{'-':>9}"

    def ratio(b: int, a: int) -> str:
        return f"{b / a:>6.2f}" if a else f"{'-':>6}"

    print(f"{name:<36} {r[0]:>7} {per(r[1], r[0])} {per(r[2], r[0])} {ratio(r[1], r[2])}   "
          f"{r[3]:>27} {per(r[4], r[3])} {per(r[5], r[3])} {ratio(r[4], r[5])}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", default="1,8,32")
    ap.add_argument("--prompt-tokens", action="store_true",
                    help="measure prompt tokens per record before/after excerpts instead")
    ap.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "github")
    args = ap.parse_args(argv)
    if args.prompt_tokens:
        if not args.data.is_dir():
            sys.exit(f"needs the repositories at {args.data}")
        prompt_tokens(args.data)
        return
    if not LIU.is_dir():
        sys.exit(f"needs the real kernel at {LIU}")
    levels = [int(c) for c in args.concurrency.split(",")]
    n = args.records
    print(f"specify stage, {n} records, stand-in latency {args.latency * 1000:.0f} ms per call")
    print(f"{'concurrency':>11} {'wall s':>8} {'records/s':>10} {'ideal/s':>8} {'ratio':>6} {'kept':>5} {'in flight':>9}")
    with StandIn(default=ok(add_answer(right_add())), latency=args.latency) as srv, \
            tempfile.TemporaryDirectory() as tmp:
        for c in levels:
            srv.max_in_flight = 0
            wall, kept = run(srv.url, c, n, Path(tmp) / f"c{c}")
            ideal = math.ceil(n / c) * args.latency
            print(f"{c:>11} {wall:>8.2f} {n / wall:>10.1f} {n / ideal:>8.1f} {ideal / wall:>6.2f} "
                  f"{kept:>5} {srv.max_in_flight:>9}")
        # The same stage from a warm cache: no waiting at all, only the checks.
        c = max(levels)
        wall, kept = run(srv.url, c, n, Path(tmp) / f"c{c}")
        print(f"{'cpu-only':>11} {wall:>8.2f} {n / wall:>10.1f} {'-':>8} {'-':>6} {kept:>5} {'-':>9}")


if __name__ == "__main__":
    main()
