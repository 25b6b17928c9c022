"""Throughput of the LLM stage against an OpenAI-compatible stand-in with a fixed latency.

For each concurrency (default 1, 8, 32) a thread pool of that size makes `--calls` calls
through one `LLMClient` (fresh cache folder, so every call reaches the server), then the same
calls again with the cache warm. Prints calls/s, wall time and the ratio to the ideal: the
server answers each call after `--latency` seconds, so `calls` calls at concurrency `c` cannot
take less than ceil(calls / c) * latency.

    python benchmarks/bench_llm.py [--calls 64] [--latency 0.2] [--concurrency 1,8,32]
    python benchmarks/bench_llm.py --call mypkg.mymod:one_call   # another per-call function

A per-call function takes `(client, index)` and makes whatever LLM calls one record needs
(the default asks `LLMClient.structured` for a small pydantic model).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "builder"))

from openai_standin import Answer, StandIn  # noqa: E402

from builder.llm import LLMClient, LLMConfig, Usage  # noqa: E402

CallFn = Callable[[LLMClient, int], Usage]


class Launch(BaseModel):
    kernel: str
    grid: int
    block: int


def structured_call(client: LLMClient, index: int) -> Usage:
    messages = [
        {"role": "system", "content": "You answer with one JSON object."},
        {"role": "user", "content": f"Give the launch configuration of kernel number {index}."},
    ]
    return client.structured(messages, Launch).usage


def standin_answer(body: dict) -> Answer:
    question = body["messages"][-1]["content"]
    index = int(question.rsplit(" ", 1)[-1].rstrip("."))
    return Answer(content=json.dumps({"kernel": f"k{index}", "grid": 1 + index, "block": 256}))


def run_pool(client: LLMClient, call: CallFn, concurrency: int, calls: int) -> tuple[float, Usage]:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        usages = list(pool.map(lambda i: call(client, i), range(calls)))
    wall = time.perf_counter() - t0
    return wall, sum(usages, Usage())


def measure(url: str, call: CallFn, concurrency: int, calls: int, latency: float,
            model: str) -> list[dict]:
    ideal_wall = math.ceil(calls / concurrency) * latency
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-llm-") as cache:
        cfg = LLMConfig(model=model, base_url=url, concurrency=concurrency,
                        cache_dir=Path(cache), api_key_env="CKD_BENCH_NO_KEY")
        client = LLMClient(cfg)
        for label in ("cold", "cached"):
            wall, usage = run_pool(client, call, concurrency, calls)
            rows.append({
                "concurrency": concurrency,
                "pass": label,
                "calls": calls,
                "wall_s": wall,
                "calls_per_s": calls / wall,
                "ideal_calls_per_s": calls / ideal_wall if label == "cold" else None,
                "ratio": ideal_wall / wall if label == "cold" else None,
                "overhead_ms_per_round": (wall - ideal_wall) / math.ceil(calls / concurrency) * 1e3
                if label == "cold" else None,
                "requests": usage.calls - usage.cached_calls,
                "cached_calls": usage.cached_calls,
                "retries": usage.retries,
            })
    return rows


def load_call(spec: str) -> CallFn:
    module, _, name = spec.partition(":")
    if not name:
        raise SystemExit(f"--call {spec!r}: expected module:function")
    return getattr(importlib.import_module(module), name)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--calls", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.2, help="seconds the stand-in takes per call")
    ap.add_argument("--concurrency", default="1,8,32")
    ap.add_argument("--call", default=None, help="module:function(client, index) -> Usage")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON too")
    args = ap.parse_args(argv)
    call = load_call(args.call) if args.call else structured_call
    levels = [int(c) for c in args.concurrency.split(",")]

    rows: list[dict] = []
    with StandIn(respond=standin_answer, latency=args.latency) as srv:
        for c in levels:
            srv.max_in_flight = 0
            rows.extend(measure(srv.url, call, c, args.calls, args.latency, srv.model))
            rows[-2]["server_max_in_flight"] = srv.max_in_flight

    print(f"LLM stage against the stand-in: {args.calls} calls per row, "
          f"{args.latency * 1e3:.0f} ms per call at the server\n")
    head = (f"{'conc':>4} {'pass':>6} {'wall s':>8} {'calls/s':>9} {'ideal/s':>8} "
            f"{'ratio':>6} {'ovh ms/round':>12} {'in flight':>9} {'requests':>8}")
    print(head)
    print("-" * len(head))
    for r in rows:
        ideal = f"{r['ideal_calls_per_s']:.1f}" if r["ideal_calls_per_s"] else "-"
        ratio = f"{r['ratio']:.2f}" if r["ratio"] else "-"
        ovh = f"{r['overhead_ms_per_round']:.1f}" if r["overhead_ms_per_round"] is not None else "-"
        print(f"{r['concurrency']:>4} {r['pass']:>6} {r['wall_s']:>8.2f} {r['calls_per_s']:>9.1f} "
              f"{ideal:>8} {ratio:>6} {ovh:>12} {r.get('server_max_in_flight', '-'):>9} "
              f"{r['requests']:>8}")
    cold = {r["concurrency"]: r for r in rows if r["pass"] == "cold"}
    if 1 in cold:
        print()
        for c, r in cold.items():
            if c != 1:
                print(f"speed-up at concurrency {c} over 1: "
                      f"{r['calls_per_s'] / cold[1]['calls_per_s']:.1f}x (ideal {min(c, args.calls)}x)")
    if args.json:
        print(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
