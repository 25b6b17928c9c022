"""Load on the validation service over loopback: throughput and latency with warm caches, then
with cold ones.

    python benchmarks/bench_service.py                       # 200 requests, concurrency 16
    python benchmarks/bench_service.py --requests 50 --workers 2 --concurrency 8
    python benchmarks/bench_service.py --ray --requests 50    # the same through Ray Serve
    python benchmarks/bench_service.py --rewards --requests 32 --concurrency 2   # cost per reward

Starts `python -m validators serve --backend cpu` twice: once on the usual cache (warmed first
with one pass over the programs), once on a fresh `CKD_CACHE_DIR` (removed at the end), where
the first request for each program builds it and computes its reference outputs. The requests
are the reference programs of a few small built-in tasks, round robin, sent by the service's
async client (which retries 429s honouring Retry-After; retries are counted, and a request's
latency includes them). Errors: requests that failed or whose verdict was not `passed`.

`--rewards`: the cost of one reward, before and after issue 21 side by side in one run, on
warm caches. Through `/v1/score` (one completion per request, the reference programs round
robin) on a server with `--score-check fast` (what the reward path ran before) and one with
`--score-check thorough` (the default now); both draw a fresh case per check. Then, in this
process on the same programs, the engine's check with the fresh seed kept per task (before)
and drawn per check with its reference not cached (after), to show what the new fresh case
costs by itself.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TASKS = ("clamp", "relu", "elu", "gelu", "dot_product", "l2_norm", "gather", "inclusive_scan")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(args: argparse.Namespace, env: dict[str, str],
          *extra: str) -> tuple[subprocess.Popen, str, float]:
    import httpx

    port = _free_port()
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "validators", "serve", "--backend", "cpu", "--port", str(port),
         "--workers", str(args.workers), "--queue", str(args.queue), "--log-level", "warning",
         *(["--ray"] if args.ray else []), *extra],
        cwd=ROOT, env=env)
    url = f"http://127.0.0.1:{port}"
    while time.monotonic() - started < 900:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/healthz", timeout=2).status_code == 200:
                return proc, url, time.monotonic() - started
        except httpx.TransportError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the server did not start in 15 minutes")


class Tally:
    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.errors: list[str] = []
        self.retries = 0


async def load(url: str, programs: dict[str, str], n: int, concurrency: int) -> tuple[Tally, float]:
    import httpx

    from validators.client import AsyncValidationClient, ServiceError

    tally = Tally()
    names = list(programs)
    jobs = iter(range(n))

    class Counting(httpx.AsyncHTTPTransport):
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            resp = await super().handle_async_request(request)
            if resp.status_code in (429, 503):
                tally.retries += 1
            return resp

    async with AsyncValidationClient(url, retries=50, backoff=0.05, max_backoff=2.0,
                                     transport=Counting()) as client:
        async def runner() -> None:
            for i in jobs:
                name = names[i % len(names)]
                t0 = time.monotonic()
                try:
                    r = await client.validate(programs[name], task_id=name)
                    if r["status"] != "passed":
                        tally.errors.append(f"{name}: {r['status']} {r['reason'][:80]}")
                except (ServiceError, httpx.HTTPError) as exc:
                    tally.errors.append(f"{name}: {exc}")
                tally.latencies.append(time.monotonic() - t0)

        t0 = time.monotonic()
        await asyncio.gather(*(runner() for _ in range(concurrency)))
        return tally, time.monotonic() - t0


async def score_load(url: str, programs: dict[str, str], n: int,
                     concurrency: int) -> tuple[Tally, float]:
    """`n` score requests of one completion each; a reward other than full is an error."""
    import httpx

    from validators.client import AsyncValidationClient, ServiceError

    tally = Tally()
    names = list(programs)
    jobs = iter(range(n))
    async with AsyncValidationClient(url, retries=50, backoff=0.05, max_backoff=2.0) as client:
        async def runner() -> None:
            for i in jobs:
                name = names[i % len(names)]
                t0 = time.monotonic()
                try:
                    answer = await client.score(name, [f"```cuda\n{programs[name]}\n```"],
                                                batch_size=1)
                    item = answer["results"][0]
                    if item["status"] != "passed":
                        tally.errors.append(f"{name}: {item['status']} {item['reason'][:80]}")
                except (ServiceError, httpx.HTTPError) as exc:
                    tally.errors.append(f"{name}: {exc}")
                tally.latencies.append(time.monotonic() - t0)

        t0 = time.monotonic()
        await asyncio.gather(*(runner() for _ in range(concurrency)))
        return tally, time.monotonic() - t0


def rewards(args: argparse.Namespace, programs: dict[str, str]) -> None:
    env = dict(os.environ)
    for check in ("fast", "thorough"):
        proc, url, startup = start(args, env, "--score-check", check)
        try:
            asyncio.run(score_load(url, programs, len(programs), 1))  # warm the caches
            tally, seconds = asyncio.run(score_load(url, programs, args.requests,
                                                    args.concurrency))
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(120)
        lat = tally.latencies
        print(f"score {check:8s}  {seconds / len(lat) * 1000:7.0f} ms wall per reward "
              f"({args.concurrency} at a time)  mean latency {statistics.fmean(lat) * 1000:7.0f} "
              f"ms  errors {len(tally.errors)}")
        for e in tally.errors[:5]:
            print(f"      error: {e}")
    fresh_seed_cost(programs, rounds=max(1, args.requests // len(programs)))


def fresh_seed_cost(programs: dict[str, str], rounds: int) -> None:
    """The engine alone (one process, fast check): fresh seed per task vs per check."""
    from schemas import Program
    from sources.builtin import load_all
    from validators.backends import get_backend
    from validators.build_cache import BuildCache
    from validators.engine import Engine
    from validators.reference import ReferenceRunner
    from validators.service.pool import _published

    tasks = {t.name: t for t, _ in load_all().tasks if t.name in programs}
    backend = get_backend("cpu")
    engines = {
        "per task": Engine(backend, cache=BuildCache(), fresh_per_check=False),
        "per check": Engine(backend, cache=BuildCache(), fresh_per_check=True,
                            references=ReferenceRunner(persist=_published)),
    }
    for label, engine in engines.items():
        for name in programs:  # warm: builds and the published cases' references
            engine.check(tasks[name], Program(source=programs[name]), thorough=False)
        times = []
        for _ in range(rounds):
            for name in programs:
                t0 = time.monotonic()
                r = engine.check(tasks[name], Program(source=programs[name]), thorough=False)
                times.append(time.monotonic() - t0)
                assert r.passed, r.reason
        print(f"engine fresh seed {label:9s}  {statistics.fmean(times) * 1000:7.0f} ms mean per "
              f"check, median {statistics.median(times) * 1000:7.0f} ms  ({len(times)} checks)")


def report(label: str, tally: Tally, seconds: float, startup: float) -> None:
    lat = sorted(tally.latencies)
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]  # noqa: E731
    print(f"{label:5s} requests {len(lat):4d}  {len(lat) / seconds:6.2f} req/s  "
          f"p50 {p(0.50) * 1000:7.0f} ms  p99 {p(0.99) * 1000:7.0f} ms  "
          f"mean {statistics.fmean(lat) * 1000:7.0f} ms  errors {len(tally.errors)}  "
          f"429/503 retries {tally.retries}  (server ready in {startup:.1f} s)")
    for e in tally.errors[:5]:
        print(f"      error: {e}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--queue", type=int, default=16)
    ap.add_argument("--ray", action="store_true",
                    help="serve with --ray (one replica on a Ray instance of its own; the cold "
                         "cache reaches the replica through the environment Ray inherits)")
    ap.add_argument("--rewards", action="store_true",
                    help="the cost per reward of the fast and the thorough check, and of a "
                         "fresh case per check (see above)")
    args = ap.parse_args()

    tasks = ROOT / "sources" / "builtin" / "tasks"
    programs = {t: (tasks / t / "main.cu").read_text() for t in TASKS}
    print(f"{args.requests} requests, concurrency {args.concurrency}, {args.workers} workers, "
          f"queue {args.queue}, cpu backend{' on Ray Serve' if args.ray else ''}, "
          f"{len(programs)} programs round robin, "
          f"{os.cpu_count()} cores")
    if args.rewards:
        rewards(args, programs)
        return 0

    env = dict(os.environ)
    proc, url, startup = start(args, env)
    try:
        asyncio.run(load(url, programs, len(programs), 2))  # warm the caches
        tally, seconds = asyncio.run(load(url, programs, args.requests, args.concurrency))
        report("warm", tally, seconds, startup)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(120)

    cache = tempfile.mkdtemp(prefix="ckd-bench-service-")
    try:
        proc, url, startup = start(args, {**env, "CKD_CACHE_DIR": cache})
        try:
            tally, seconds = asyncio.run(load(url, programs, args.requests, args.concurrency))
            report("cold", tally, seconds, startup)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(120)
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
