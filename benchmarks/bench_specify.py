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
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "builder"))

from llm_scripts import LIU, add_answer, right_add  # noqa: E402
from openai_standin import StandIn, ok  # noqa: E402

from builder.executors import run_threaded  # noqa: E402
from builder.item import Envelope, Item  # noqa: E402
from builder.llm import LLMConfig  # noqa: E402
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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--records", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--concurrency", default="1,8,32")
    args = ap.parse_args(argv)
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
