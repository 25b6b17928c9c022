"""A crawl killed with SIGKILL mid-way resumes without asking for any blob again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from github_standin import GitHubStandin, load_repo_folder

from schemas import RawRecord
from sources.github import records
from sources.local import records as local_records

ROOT = Path(__file__).resolve().parents[2]
GITHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "github"

CHILD = """
import sys
from sources.github import records
for _ in records(repos=sys.argv[1], api_url=sys.argv[2], cache_dir=sys.argv[3]):
    pass
"""


def test_killed_crawl_resumes_without_repeated_blob_requests(tmp_path):
    if not GITHUB.is_dir():
        pytest.skip(f"{GITHUB} is absent")
    gh = GitHubStandin()
    names = [gh.add(load_repo_folder(p)).full_name
             for p in sorted(GITHUB.iterdir()) if (p / "repo.json").is_file()]
    seen: list[str] = []

    def thirtieth_blob(path: str) -> bool:
        if "/git/blobs/" not in path:
            return False
        seen.append(path)
        return len(seen) == 30

    cache = tmp_path / "cache"
    with gh:
        gh.fail("hang", thirtieth_blob)
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD, ",".join(names), gh.url, str(cache)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            assert gh.hanging.wait(120), child.stderr.read().decode() if child.poll() else ""
            os.kill(child.pid, signal.SIGKILL)
            assert child.wait(30) == -signal.SIGKILL
        finally:
            if child.poll() is None:
                child.kill()
            child.stderr.close()
        gh.release()
        hung = seen[29]
        first = [r for r in gh.log if r.status == 200]
        first_blobs = {r.path for r in first if "/git/blobs/" in r.path}
        assert len(first_blobs) == 29
        # every cache entry on disk is whole (atomic writes)
        for entry in (cache / "responses").rglob("*.json"):
            json.loads(entry.read_text())
        assert not list(cache.rglob("*.tmp"))

        n = len(gh.log)
        rows = list(records(repos=",".join(names), api_url=gh.url, cache_dir=cache))
        resumed = gh.log[n:]
    again = [r.path for r in resumed if "/git/blobs/" in r.path]
    assert hung in again
    assert not set(again) & first_blobs, "a blob served before the kill was requested again"
    dup = [(r.path[-8:], r.status, r.at) for r in resumed if again.count(r.path) > 1]
    assert len(again) == len(set(again)), dup
    # the interrupted repository's metadata is revalidated (304); its pin is reused
    interrupted = hung.split("/")[2] + "/" + hung.split("/")[3]
    meta = [r for r in resumed if r.path == f"/repos/{interrupted}"]
    assert [(r.status, r.conditional) for r in meta] == [(304, True)]
    assert not any(r.path.startswith(f"/repos/{interrupted}/commits/") for r in resumed)
    expected = sum(isinstance(r, RawRecord) for p in sorted(GITHUB.iterdir())
                   if (p / "files").is_dir() for r in local_records(p / "files"))
    assert sum(isinstance(r, RawRecord) for r in rows) == expected > 200
