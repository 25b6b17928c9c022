"""The GitHub source against the REST stand-in: real repositories, limits, cache, policies."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
import requests
from github_standin import GitHubStandin, StandinRepo, Symlink, load_repo_folder

from schemas import RawRecord
from sources.base import SourceError, UnreadableRecord, get_source, register_source
from sources.github import (
    GitHubClient,
    GitHubError,
    RateLimitError,
    ResponseCache,
    make_crawl,
    parse_repos,
    records,
    search_repos,
)
from sources.local import records as local_records
from tests.sources.license_texts import BSD_3, MIT

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
GITHUB = DATA / "github"
STARS = {"karpathy/llm.c": 26000, "NVIDIA/cuda-samples": 7000, "siboehm/SGEMM_CUDA": 1800,
         "harrism/mini-nbody": 250, "Liu-xiandong/How_to_optimize_in_GPU": 1100}


class FakeClock:
    """Shared by the client and the stand-in so rate-limit waits take no real time."""

    def __init__(self) -> None:
        self.now = 1_700_000_000.0
        self.sleeps: list[float] = []
        self._lock = threading.Lock()

    def __call__(self) -> float:
        with self._lock:
            return self.now

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now += seconds


def _real_folders() -> list[Path]:
    if not GITHUB.is_dir():
        pytest.skip(f"{GITHUB} is absent")
    return sorted(p for p in GITHUB.iterdir() if (p / "repo.json").is_file())


def _real_standin(**kw) -> tuple[GitHubStandin, list[str]]:
    gh = GitHubStandin(**kw)
    names = []
    for folder in _real_folders():
        repo = load_repo_folder(folder)
        repo.stars = STARS.get(repo.full_name, 1)
        names.append(gh.add(repo).full_name)
    return gh, names


def _split(rows):
    return ([r for r in rows if isinstance(r, RawRecord)],
            [r for r in rows if isinstance(r, UnreadableRecord)])


def _crawl_with_clock(gh: GitHubStandin, cache: Path, clock: FakeClock, **kw):
    client = GitHubClient(gh.url, None, ResponseCache(cache), sleep=clock.sleep, clock=clock,
                          **kw)
    return make_crawl(cache_dir=cache, client=client)


@pytest.fixture(scope="module")
def real_crawl(tmp_path_factory):
    gh, names = _real_standin()
    cache = tmp_path_factory.mktemp("gh-cache")
    with gh:
        rows = list(records(repos=names, api_url=gh.url, cache_dir=cache))
        first_log = list(gh.log)
        yield gh, names, cache, rows, first_log


# ------------------------------------------------------------------ real repositories


def test_every_real_repository_is_gathered_with_provenance(real_crawl):
    gh, names, _, rows, _ = real_crawl
    kept, refused = _split(rows)
    for folder in _real_folders():
        info = load_repo_folder(folder)
        mine = [r for r in kept if r.provenance.repo == info.full_name]
        assert mine, info.full_name
        for r in mine:
            p = r.provenance
            assert p.source == "github" and p.commit == info.commit
            assert p.license == info.license and p.stars == STARS[info.full_name]
            assert p.url == f"https://github.com/{info.full_name}/blob/{info.commit}/{p.path}"
            assert p.origin == p.url
            assert r.id == f"github/{info.full_name}/{p.path}#{r.focus}"
            assert r.text == (folder / "files" / p.path).read_text("utf-8")
            assert r.kind == "kernel" and r.focus in r.meta["kernels"].split(",")
    assert len({r.id for r in kept}) == len(kept)
    assert [(r.id, r.code) for r in refused] == [(
        "github/NVIDIA/cuda-samples/Samples/2_Concepts_and_Techniques/interval/boost/numeric/"
        "interval.hpp", "not_utf8")]
    assert "not UTF-8" in refused[0].reason


def test_same_records_as_the_local_source_on_the_same_files(real_crawl):
    _, _, _, rows, _ = real_crawl
    kept, _ = _split(rows)
    for folder in _real_folders():
        full = load_repo_folder(folder).full_name
        local, _ = _split(list(local_records(folder / "files")))
        remote = {r.id.removeprefix(f"github/{full}/"): r for r in kept
                  if r.provenance.repo == full}
        assert sorted(remote) == sorted(r.id.removeprefix("local/") for r in local), full
        for r in local:
            twin = remote[r.id.removeprefix("local/")]
            assert twin.files == r.files and twin.text == r.text


def test_kernels_in_headers_are_found(real_crawl):
    kept, _ = _split(real_crawl[3])
    paths = {r.provenance.path for r in kept}
    sgemm = {p for p in paths if p.startswith("src/kernels/") and p.endswith(".cuh")}
    assert len(sgemm) >= 10
    assert {"llmc/layernorm.cuh", "llmc/attention.cuh", "llmc/adamw.cuh"} <= paths
    # .cu files whose kernels live in headers yield nothing of their own
    assert not {"train_gpt2.cu", "sgemm.cu", "src/runner.cu", "cuBLAS_sgemm.cu"} & paths


def test_local_headers_are_gathered(real_crawl):
    kept, _ = _split(real_crawl[3])
    by_path = {r.provenance.path: r for r in kept}
    mm = by_path["Samples/0_Introduction/matrixMul/matrixMul.cu"]
    assert "../../../Common/helper_cuda.h" in mm.files
    assert "helper_cuda.h" not in mm.meta["unresolved_includes"].split(",")
    assert by_path["cuda/nbody-orig.cu"].files.keys() == {"../timer.h"}
    spmm = by_path["spmm/spmm.cu"]
    assert "sputnik/sputnik.h" in spmm.meta["unresolved_includes"].split(",")
    assert all("Herv" not in t for r in kept for t in r.files.values())


def test_requests_carry_the_api_headers(tmp_path, monkeypatch):
    gh = GitHubStandin()
    gh.add(StandinRepo("a/b", {"k.cu": b"__global__ void k() {}\n"}))
    seen = {}
    original = requests.Session.get

    def spy(self, url, **kw):
        seen.update(self.headers)
        seen.update(kw.get("headers") or {})
        return original(self, url, **kw)

    monkeypatch.setattr(requests.Session, "get", spy)
    monkeypatch.setenv("CKD_TEST_TOKEN", "t0k")
    with gh:
        list(records(repos="a/b", api_url=gh.url, cache_dir=tmp_path, token_env="CKD_TEST_TOKEN"))
    assert seen["Authorization"] == "Bearer t0k"
    assert seen["Accept"] == "application/vnd.github+json"
    assert seen["X-GitHub-Api-Version"] == "2022-11-28"
    assert "User-Agent" in seen
    assert {r.authorization for r in gh.log} == {"Bearer t0k"}


# ------------------------------------------------------------------ cache and resume


def test_second_crawl_makes_no_request_and_refresh_gets_304s(real_crawl):
    gh, names, cache, rows, first_log = real_crawl
    n = len(gh.log)
    again = list(records(repos=names, api_url=gh.url, cache_dir=cache))
    assert len(gh.log) == n, "finished repositories are served from the pinned state"
    assert [r.model_dump() if isinstance(r, RawRecord) else r for r in again] == \
        [r.model_dump() if isinstance(r, RawRecord) else r for r in rows]
    refreshed = list(records(repos=names, api_url=gh.url, cache_dir=cache, refresh=True))
    new = gh.log[n:]
    assert len(refreshed) == len(rows)
    assert len(new) == 2 * len(names)  # repository + commit per repository, nothing else
    assert all(r.status == 304 and r.conditional for r in new)
    assert not any("/git/" in r.path for r in new)
    blobs = [r for r in first_log if "/git/blobs/" in r.path]
    assert len(blobs) == len({r.path for r in blobs}), "a blob was fetched twice"


def test_crawl_failing_part_way_resumes_without_repeating_blobs(tmp_path):
    gh, names = _real_standin()
    with gh:
        # llm.c blobs fail for good after 12 have been served: that repository is reported
        # unavailable, the other repositories continue
        served = []

        def after_12(path: str) -> bool:
            if "/karpathy/llm.c/git/blobs/" not in path:
                return False
            served.append(path)
            return len(served) > 12

        gh.fail("server", after_12, times=10_000)
        client = GitHubClient(gh.url, None, ResponseCache(tmp_path), sleep=lambda s: None,
                              max_retries=2)
        crawl = make_crawl(cache_dir=tmp_path, client=client)
        first = list(crawl.records(parse_repos(names)))
        broken = [r for r in first if isinstance(r, UnreadableRecord)
                  and r.code == "repo_unavailable"]
        assert [r.id for r in broken] == ["github/karpathy/llm.c"]
        assert "HTTP 500" in broken[0].reason
        assert any(isinstance(r, RawRecord) and r.provenance.repo == "siboehm/SGEMM_CUDA"
                   for r in first)
        ok_first = {r.path for r in gh.log if "/git/blobs/" in r.path and r.status == 200}
        gh.faults.clear()
        n = len(gh.log)
        second = list(records(repos=names, api_url=gh.url, cache_dir=tmp_path))
        resumed = gh.log[n:]
    blob_paths = [r.path for r in resumed if "/git/blobs/" in r.path]
    assert blob_paths and all("/karpathy/llm.c/" in p for p in blob_paths)
    assert not set(blob_paths) & ok_first
    # llm.c was pinned but not finished: its metadata is revalidated (304), its pin reused
    llm = [r for r in resumed if r.path == "/repos/karpathy/llm.c"]
    assert [r.status for r in llm] == [304]
    assert not any(r.path.startswith("/repos/karpathy/llm.c/commits/") for r in resumed)
    assert not any(r.path.startswith("/repos/NVIDIA/") for r in resumed)
    kept, _ = _split(second)
    assert sum(r.provenance.repo == "karpathy/llm.c" for r in kept) > 100


def test_truncated_tree_is_walked(tmp_path, real_crawl):
    gh, names = _real_standin(truncate_trees=True)
    with gh:
        rows = list(records(repos=names, api_url=gh.url, cache_dir=tmp_path))
    assert any(r.query == {} and "/git/trees/" in r.path for r in gh.log)
    ids = sorted(r.id for r in rows)
    assert ids == sorted(r.id for r in real_crawl[3])


# ------------------------------------------------------------------ rate limits and faults


def _small_standin(clock: Callable[[], float]) -> GitHubStandin:
    gh = GitHubStandin(clock=clock)
    gh.add(StandinRepo("o/r", {
        "a.cu": b"__global__ void a() {}\n", "b.cu": b"__global__ void b() {}\n"}))
    return gh


def test_secondary_limit_waits_retry_after(tmp_path):
    clock = FakeClock()
    with _small_standin(clock) as gh:
        gh.fail("secondary", "/git/blobs/", times=2, retry_after=7)
        crawl = _crawl_with_clock(gh, tmp_path, clock)
        kept, _ = _split(list(crawl.records(parse_repos("o/r"))))
    assert sorted(r.focus for r in kept) == ["a", "b"]
    limited = [i for i, r in enumerate(gh.log) if r.status == 403]
    assert len(limited) == 2
    for i in limited:  # each refusal is followed by the same request, 7 s later
        retry = gh.log[i + 1]
        assert retry.path == gh.log[i].path and retry.at - gh.log[i].at >= 7
    assert gh.log[limited[-1] + 1].status == 200
    assert clock.sleeps.count(7.0) == 2


def test_primary_limit_waits_for_the_reset(tmp_path):
    clock = FakeClock()
    with _small_standin(clock) as gh:
        gh.fail("primary", "/git/trees/", reset_in=1.5)
        crawl = _crawl_with_clock(gh, tmp_path, clock)
        kept, _ = _split(list(crawl.records(parse_repos("o/r"))))
    assert len(kept) == 2
    i = next(i for i, r in enumerate(gh.log) if r.status == 403)
    reset = gh.log[i].at + 1.5
    after = gh.log[i + 1:]
    assert after and all(r.at >= reset and r.status == 200 for r in after)
    assert after[0].path == gh.log[i].path


def test_primary_limit_with_the_real_clock(tmp_path):
    """The defaults (time.sleep, time.time) honour a reset one to two seconds ahead."""
    gh = GitHubStandin()
    gh.add(StandinRepo("o/r", {"a.cu": b"__global__ void a() {}\n"}))
    with gh:
        gh.fail("primary", "/commits/", reset_in=1.0)
        kept, _ = _split(list(records(repos="o/r", api_url=gh.url, cache_dir=tmp_path)))
    assert [r.focus for r in kept] == ["a"]
    i = next(i for i, r in enumerate(gh.log) if r.status == 403)
    # the stand-in answers 200 again only once its clock has passed the reset
    retry = gh.log[i + 1]
    assert retry.status == 200 and retry.path == gh.log[i].path
    assert retry.at >= gh.log[i].at + 0.9


def test_primary_limit_beyond_max_wait_is_a_clear_error(tmp_path):
    clock = FakeClock()
    with _small_standin(clock) as gh:
        gh.fail("primary", "/repos/o/r", reset_in=7200)
        crawl = _crawl_with_clock(gh, tmp_path, clock, max_wait=600)
        with pytest.raises(RateLimitError, match="max_wait 600"):
            list(crawl.records(parse_repos("o/r")))
    assert clock.sleeps == []
    with _small_standin(time.time) as gh:  # the entry point's default max_wait is an hour
        gh.fail("primary", "/repos/o/r", reset_in=7200)
        with pytest.raises(SourceError, match="rate limit") as info:
            list(records(repos="o/r", api_url=gh.url, cache_dir=tmp_path / "2"))
    assert "/repos/o/r" in str(info.value) and len(gh.log) == 1


def test_server_errors_back_off_then_succeed(tmp_path):
    clock = FakeClock()
    with _small_standin(clock) as gh:
        gh.fail("server", "/repos/o/r", times=3)
        crawl = _crawl_with_clock(gh, tmp_path, clock, backoff=2.0)
        kept, _ = _split(list(crawl.records(parse_repos("o/r"))))
    assert len(kept) == 2
    assert [r.status for r in gh.log[:4]] == [500, 500, 500, 200]
    # exponential with jitter: attempt k waits within [2 * 2^k, 2 * 2 * 2^k)
    assert len(clock.sleeps) == 3
    for k, s in enumerate(clock.sleeps):
        assert 2.0 * 2**k <= s < 4.0 * 2**k


def test_connection_errors_are_bounded(tmp_path):
    clock = FakeClock()
    client = GitHubClient("http://127.0.0.1:9", None, None, sleep=clock.sleep, clock=clock,
                          max_retries=2, timeout=2)
    with pytest.raises(GitHubError, match="after 3 attempts"):
        client.get_json("repos/o/r")
    assert len(clock.sleeps) == 2


# ------------------------------------------------------------------ policies


def _hostile_repo() -> StandinRepo:
    return StandinRepo("evil/hostile", {
        "src/main.cu": b'#include "kernels/saxpy.cuh"\n#include <cuda_runtime.h>\n'
                       b"__global__ void scale(float *x) { x[threadIdx.x] *= 2; }\n",
        "include/kernels/saxpy.cuh": b"#pragma once\n__global__ void saxpy(float a, float *y)"
                                     b" { y[threadIdx.x] += a; }\n",
        "big/huge.cu": b"// pad\n" * (50 * 1024 * 1024 // 7 + 1),
        "bin/blob.cu": b"__global__\x00\x01\x02void k() {}",
        "latin1.cu": "// café\n__global__ void k() {}\n".encode("latin-1"),
        "gen/auto.cu": b"// Code generated by gen.py. DO NOT EDIT.\n__global__ void g() {}\n",
        "third_party/lib/v.cu": b"__global__ void vendored() {}\n",
        "link.cu": Symlink("../../../etc/passwd"),
        "escape.cu": b'#include "../../../etc/passwd"\n#include "/etc/hosts"\n'
                     b"__global__ void esc() {}\n",
    }, license="MIT", submodules={"extern_sub": "a" * 40})


def test_hostile_files_are_refused_with_reasons_and_the_crawl_continues(tmp_path):
    gh = GitHubStandin()
    hostile = gh.add(_hostile_repo())
    gh.add(StandinRepo("good/after", {"k.cu": b"__global__ void fine() {}\n"}))
    with gh:
        rows = list(records(repos="evil/hostile,good/after", api_url=gh.url, cache_dir=tmp_path))
    kept, refused = _split(rows)
    assert sorted((r.id.removeprefix("github/evil/hostile/"), r.code) for r in refused) == [
        ("big/huge.cu", "file_too_large"), ("bin/blob.cu", "binary_file"),
        ("gen/auto.cu", "generated"), ("latin1.cu", "not_utf8"), ("link.cu", "symlink"),
    ]
    for r in refused:
        path = r.id.removeprefix("github/evil/hostile/")
        assert path in r.reason and r.origin.endswith(f"/blob/{hostile.commit}/{path}")
    assert sorted(r.id for r in kept) == [
        "github/evil/hostile/escape.cu#esc", "github/evil/hostile/include/kernels/saxpy.cuh#saxpy",
        "github/evil/hostile/src/main.cu#scale", "github/good/after/k.cu#fine",
    ]
    main = next(r for r in kept if r.focus == "scale")
    assert list(main.files) == ["../include/kernels/saxpy.cuh"]
    assert main.meta["vendored_skipped"] == "1"
    esc = next(r for r in kept if r.focus == "esc")
    assert esc.files == {} and "/etc/hosts" in esc.meta["unresolved_includes"]
    fetched = set(gh.blob_requests())
    flat = {e["path"]: e["sha"] for e in hostile.flat}
    for never in ("big/huge.cu", "link.cu", "third_party/lib/v.cu"):
        assert flat[never] not in fetched, never


def test_licence_policy_skips_and_counts(tmp_path):
    gh = GitHubStandin()
    gh.add(StandinRepo("x/gpl", {"k.cu": b"__global__ void k() {}\n"}, license="GPL-3.0"))
    gh.add(StandinRepo("x/none", {"k.cu": b"__global__ void k() {}\n"}, license=None))
    gh.add(StandinRepo("x/other", {"k.cu": b"__global__ void k() {}\n"}, license="NOASSERTION"))
    gh.add(StandinRepo("x/wtf", {"k.cu": b"__global__ void k() {}\n"}, license="WTFPL"))
    gh.add(StandinRepo("x/mit", {"k.cu": b"__global__ void k() {}\n"}, license="MIT"))
    names = "x/gpl,x/none,x/other,x/wtf,x/mit"
    with gh:
        rows = list(records(repos=names, api_url=gh.url, cache_dir=tmp_path))
        codes = Counter(r.code for r in rows if isinstance(r, UnreadableRecord))
        assert codes == {"license_copyleft": 1, "license_not_allowed": 1}
        # No licence GitHub can name: the files decide, here none, so the records say unknown
        # (gather refuses them before anything costs).
        kept = {r.id: r.provenance.license for r in rows if isinstance(r, RawRecord)}
        assert kept == {"github/x/none/k.cu#k": "unknown", "github/x/other/k.cu#k": "unknown",
                        "github/x/mit/k.cu#k": "MIT"}
        gpl = next(r for r in rows if getattr(r, "code", "") == "license_copyleft")
        assert gpl.id == "github/x/gpl" and "GPL-3.0" in gpl.reason
        # the skipped repositories' trees were never asked for
        assert not any("/x/gpl/" in r.path or "/x/wtf/" in r.path for r in gh.log)
        rows = list(records(repos=names, api_url=gh.url, cache_dir=tmp_path,
                            licenses="WTFPL, GPL-3.0"))
    assert sorted(r.id for r in rows if isinstance(r, RawRecord)) == [
        "github/x/gpl/k.cu#k", "github/x/none/k.cu#k", "github/x/other/k.cu#k",
        "github/x/wtf/k.cu#k"]


def test_licence_from_the_files_when_github_names_none(tmp_path):
    """GitHub reports no licence for a lower-case `license.txt` it cannot match; the files do:
    the nearest licence file above each kernel, a kernel's own SPDX line before that."""
    gh = GitHubStandin()
    gh.add(StandinRepo("x/files", {
        "license.txt": BSD_3.encode(),
        "a/k.cu": b"__global__ void k() {}\n",
        "vendor_mit/COPYING.md": ("# Licence\n\n" + MIT).encode(),
        "vendor_mit/deep/m.cu": b"__global__ void m() {}\n",
        "tagged.cu": b"// SPDX-License-Identifier: GPL-2.0-only\n__global__ void t() {}\n",
    }, license="NOASSERTION"))
    with gh:
        rows = list(records(repos="x/files", api_url=gh.url, cache_dir=tmp_path))
    got = {r.id: (r.provenance.license, r.meta["license_from"]) for r in rows
           if isinstance(r, RawRecord)}
    assert got == {
        "github/x/files/a/k.cu#k": ("BSD-3-Clause", "license.txt"),
        "github/x/files/vendor_mit/deep/m.cu#m": ("MIT", "vendor_mit/COPYING.md"),
        "github/x/files/tagged.cu#t": ("GPL-2.0-only", "tagged.cu: SPDX-License-Identifier"),
    }


def test_unknown_repository_is_reported_and_the_rest_continues(tmp_path):
    gh = GitHubStandin()
    gh.add(StandinRepo("o/r", {"k.cu": b"__global__ void k() {}\n"}))
    with gh:
        rows = list(records(repos="o/missing,o/r,o/r@nosuchbranch", api_url=gh.url,
                            cache_dir=tmp_path))
    refused = [(r.id, r.code) for r in rows if isinstance(r, UnreadableRecord)]
    assert refused == [("github/o/missing", "repo_unavailable"), ("github/o/r", "repo_unavailable")]
    assert "404" in rows[0].reason and "nosuchbranch" in rows[2].reason
    assert [r.id for r in rows if isinstance(r, RawRecord)] == ["github/o/r/k.cu#k"]


def test_search_filters_sorts_and_paginates(tmp_path):
    gh = GitHubStandin()
    for i in range(7):
        gh.add(StandinRepo(f"s/gemm{i}", {"k.cu": b"__global__ void k() {}\n"}, stars=i * 10,
                           description="fast sgemm"))
    gh.add(StandinRepo("s/other", {"k.cu": b"__global__ void k() {}\n"}, stars=999,
                       description="reduction"))
    gh.add(StandinRepo("s/py", {}, stars=5000, description="sgemm", language="Python"))
    with gh:
        client = GitHubClient(gh.url, None, None)
        specs = search_repos(client, "sgemm", max_repos=5, page_size=2)
        assert [s.full_name for s in specs] == [f"s/gemm{i}" for i in (6, 5, 4, 3, 2)]
        pages = [r.query for r in gh.log if r.path == "/search/repositories"]
        assert [p["page"] for p in pages] == ["1", "2", "3"]
        assert all(p["q"] == "language:Cuda sgemm" and p["sort"] == "stars" for p in pages)
        rows = list(records(query="sgemm", max_repos=2, api_url=gh.url, cache_dir=tmp_path))
    assert [r.id for r in rows] == ["github/s/gemm6/k.cu#k", "github/s/gemm5/k.cu#k"]


# ------------------------------------------------------------------ options


@pytest.mark.parametrize("kw,match", [
    ({}, "give repos"),
    ({"repos": ""}, "give repos"),
    ({"repos": "a/b", "query": "x"}, "not both"),
    ({"repos": "not-a-repo"}, "'not-a-repo' is not OWNER/NAME"),
    ({"repos": ["a/b", "a/b/c"]}, "'a/b/c' is not OWNER/NAME"),
    ({"repos": "@/no/such/file.txt"}, "/no/such/file.txt' does not exist"),
    ({"repos": "a/b", "max_repos": 0}, "max_repos 0 must be positive"),
    ({"repos": "a/b", "max_file_bytes": "big"}, "max_file_bytes 'big' is not an integer"),
    ({"repos": "a/b", "licenses": " , "}, "empty list"),
])
def test_bad_options_raise_a_one_line_source_error(kw, match, tmp_path):
    with pytest.raises(SourceError, match=match) as info:
        records(cache_dir=tmp_path, **kw)
    assert "\n" not in str(info.value)


def test_repos_file_with_comments(tmp_path):
    listing = tmp_path / "repos.txt"
    listing.write_text("# kernels\nkarpathy/llm.c@master  # pinned branch\n\nNVIDIA/cuda-samples\n")
    specs = parse_repos(f"@{listing}")
    assert [str(s) for s in specs] == ["karpathy/llm.c@master", "NVIDIA/cuda-samples"]
    bad = tmp_path / "bad.txt"
    bad.write_text("ok/one\nnot a repo\n")
    with pytest.raises(SourceError, match="bad.txt:2"):
        records(repos=f"@{bad}", cache_dir=tmp_path)


def test_registered_and_built_through_the_registry(tmp_path):
    gh = GitHubStandin()
    gh.add(StandinRepo("o/r", {"k.cu": b"__global__ void k() {}\n"}))
    register_source("github_test", "sources.github:records")
    with pytest.raises(SourceError, match="give repos"):
        get_source("github_test")
    with gh:
        source = get_source("github_test", repos="o/r", api_url=gh.url, cache_dir=str(tmp_path))
        assert [r.id for r in source.records()] == ["github/o/r/k.cu#k"]
