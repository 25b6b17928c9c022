"""GitHub crawl cost against the loopback REST stand-in, first crawl vs. repeated crawls.

    python benchmarks/bench_github_crawl.py [--data DIR]

`--data` is a folder of repository snapshots (`<owner>__<name>/repo.json` + `files/`). Prints,
per repository, the files seen, kernel records, headers gathered and refusals by reason, then
the HTTP requests and wall time of: a first crawl (cold cache), a second crawl (pinned, warm
cache), a `refresh` crawl (conditional requests), and a crawl interrupted after 30 blobs then
resumed; with the ratios side by side.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "sources"))

from github_standin import GitHubStandin, load_repo_folder  # noqa: E402

from schemas import RawRecord  # noqa: E402
from sources.github import GitHubClient, ResponseCache, make_crawl, parse_repos  # noqa: E402

DEFAULT_DATA = ROOT / ".." / "shared" / "data" / "github"


def _crawl(gh: GitHubStandin, names: list[str], cache: Path, refresh: bool = False):
    client = GitHubClient(gh.url, None, ResponseCache(cache), sleep=lambda s: None, max_retries=1)
    crawl = make_crawl(cache_dir=cache, client=client, refresh=refresh)
    n, t = len(gh.log), time.perf_counter()
    rows, error = [], None
    try:
        for r in crawl.records(parse_repos(names)):
            rows.append(r)
    except Exception as exc:  # the interrupted run: keep what was read
        error = exc
    return crawl, rows, gh.log[n:], time.perf_counter() - t, error


def _line(label: str, log, seconds: float, base: int | None = None) -> str:
    status = Counter(r.status for r in log)
    blobs = sum("/git/blobs/" in r.path for r in log)
    ratio = f"  ({len(log) / base:.2f}x of first)" if base else ""
    return (f"{label:<22} {len(log):>5} requests  200={status.get(200, 0):<4} "
            f"304={status.get(304, 0):<4} blobs={blobs:<4} {seconds * 1000:8.1f} ms{ratio}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = ap.parse_args(argv)
    folders = sorted(p for p in args.data.glob("*") if (p / "repo.json").is_file())
    if not folders:
        print(f"no repository snapshots under {args.data}", file=sys.stderr)
        return 2
    with GitHubStandin() as gh, tempfile.TemporaryDirectory() as tmp:
        names = [gh.add(load_repo_folder(f)).full_name for f in folders]
        cache = Path(tmp) / "a"
        crawl, rows, first, t1, _ = _crawl(gh, names, cache)
        print(f"{'repository':<38} {'files':>5} {'kernels':>7} {'headers':>7}  refusals")
        for rep in crawl.reports:
            s = rep.summary
            refusals = ", ".join(f"{k}={v}" for k, v in sorted(s.refusals.items())) or "-"
            print(f"{rep.repo:<38} {s.files_seen:>5} {rep.kernel_records:>7} "
                  f"{s.headers_gathered:>7}  {refusals}")
        kept = sum(isinstance(r, RawRecord) for r in rows)
        print(f"{'total':<38} {'':>5} {kept:>7}\n")
        _, _, second, t2, _ = _crawl(gh, names, cache)
        _, _, refreshed, t3, _ = _crawl(gh, names, cache, refresh=True)
        # interrupted: every blob after the 30th fails, then a clean resume
        seen: list[str] = []

        def after_30(path: str) -> bool:
            if "/git/blobs/" in path:
                seen.append(path)
            return len(seen) > 30 and "/git/blobs/" in path

        cache_b = Path(tmp) / "b"
        gh.fail("server", after_30, times=10**6)
        _, _, broken, t4, _ = _crawl(gh, names, cache_b)
        gh.faults.clear()
        _, rows_b, resumed, t5, _ = _crawl(gh, names, cache_b)
        base = len(first)
        print(_line("first crawl", first, t1))
        print(_line("second crawl", second, t2, base))
        print(_line("refresh crawl", refreshed, t3, base))
        print(_line("interrupted crawl", broken, t4, base))
        print(_line("resumed crawl", resumed, t5, base))
        ok = {r.path for r in broken if r.status == 200 and "/git/blobs/" in r.path}
        again = {r.path for r in resumed if "/git/blobs/" in r.path}
        print(f"blobs served before the interruption and asked again on resume: {len(ok & again)}")
        print(f"records after resume: {sum(isinstance(r, RawRecord) for r in rows_b)} "
              f"(first crawl: {kept})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
