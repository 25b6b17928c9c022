"""GitHub as a source: CUDA kernels from public repositories through the REST API.

`records(repos=..., query=...)` crawls a list of repositories or a search, pins each to a
commit, applies the licence policy (`licenses`) and the file policy (`sources.files`), and
yields one `RawRecord` per `__global__` function with its local headers and provenance.
Responses and blobs are cached on disk with the crawl's progress, so a second or interrupted
crawl repeats no blob request.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

from schemas import RawRecord
from sources.base import SourceError, UnreadableRecord
from sources.files import DEFAULT_MAX_FILE_BYTES, FilePolicy

from .cache import ResponseCache, default_cache_dir
from .client import GitHubClient, GitHubError, RateLimitError, git_blob_sha, token_from_env
from .crawl import Crawl, RepoReport, search_repos
from .licenses import DEFAULT_ALLOWED, license_refusal, parse_allowed
from .repos import RepoSpec, RepoSpecError, parse_repos
from .state import CrawlState

__all__ = [
    "DEFAULT_ALLOWED", "Crawl", "CrawlState", "GitHubClient", "GitHubError", "RateLimitError",
    "RepoReport", "RepoSpec", "ResponseCache", "default_cache_dir", "git_blob_sha",
    "license_refusal", "make_crawl", "parse_allowed", "parse_repos", "records", "search_repos",
]

DEFAULT_SEARCH_REPOS = 100


def _positive(name: str, value: int | str | None) -> int | None:
    if value is None:
        return None
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise SourceError(f"github: {name} {value!r} is not an integer") from None
    if n <= 0:
        raise SourceError(f"github: {name} {value!r} must be positive")
    return n


def make_crawl(
    api_url: str | None = None,
    cache_dir: str | Path | None = None,
    licenses: Iterable[str] | str | None = None,
    max_file_bytes: int | str | None = None,
    token_env: str | None = "GITHUB_TOKEN",
    ref: str | None = None,
    refresh: bool | None = None,
    client: GitHubClient | None = None,
) -> Crawl:
    """A `Crawl` with its client, cache and state, from the source's options."""
    try:
        allowed = parse_allowed(licenses)
    except ValueError as exc:
        raise SourceError(f"github: {exc}") from None
    max_bytes = _positive("max_file_bytes", max_file_bytes) or DEFAULT_MAX_FILE_BYTES
    root = Path(cache_dir).expanduser() if cache_dir else default_cache_dir()
    if root.exists() and not root.is_dir():
        raise SourceError(f"github: cache_dir {str(root)!r} is not a folder")
    cache = ResponseCache(root)
    if client is None:
        client = GitHubClient(api_url, token_from_env(token_env), cache)
    elif client.cache is None:
        client.cache = cache
    return Crawl(
        client, CrawlState(root / "crawl_state.json"), allowed, FilePolicy(max_bytes),
        default_ref=ref.strip() if ref and ref.strip() else None, refresh=bool(refresh),
    )


def records(
    repos: Iterable[str] | str | None = None,
    query: str | None = None,
    api_url: str | None = None,
    cache_dir: str | Path | None = None,
    licenses: Iterable[str] | str | None = None,
    max_repos: int | str | None = None,
    max_file_bytes: int | str | None = None,
    token_env: str | None = "GITHUB_TOKEN",
    ref: str | None = None,
    refresh: bool | None = None,
) -> Iterator[RawRecord | UnreadableRecord]:
    """The kernels of the repositories `repos` (`OWNER/NAME[@REF]` items: a list, a comma
    string, or `@FILE` with one per line) or of the search `query` (`language:Cuda` is added).

    Options are checked here, before anything is fetched, and bad ones raise `SourceError`;
    the records come from the returned iterator. `refresh` re-asks GitHub which commit each
    finished repository's ref points to (conditional requests) instead of reusing the pin.
    """
    has_repos = repos is not None and (not isinstance(repos, str) or repos.strip() != "")
    has_query = query is not None and query.strip() != ""
    if not has_repos and not has_query:
        raise SourceError("github: give repos (OWNER/NAME list or @FILE) or query")
    if has_repos and has_query:
        raise SourceError("github: give repos or query, not both")
    limit = _positive("max_repos", max_repos)
    specs: list[RepoSpec] | None = None
    if has_repos:
        try:
            specs = parse_repos(repos)  # type: ignore[arg-type]
        except RepoSpecError as exc:
            raise SourceError(f"github: {exc}") from None
        if limit is not None:
            specs = specs[:limit]
    crawl = make_crawl(api_url, cache_dir, licenses, max_file_bytes, token_env, ref, refresh)
    return _run(crawl, specs, query, limit)


def _run(
    crawl: Crawl, specs: list[RepoSpec] | None, query: str | None, limit: int | None
) -> Iterator[RawRecord | UnreadableRecord]:
    try:
        if specs is None:
            specs = search_repos(crawl.client, query or "", limit or DEFAULT_SEARCH_REPOS)
        yield from crawl.records(specs)
    except RateLimitError as exc:
        raise SourceError(f"github: {exc}") from None
    except GitHubError as exc:
        # Only a search can fail here: per-repository errors become UnreadableRecords.
        raise SourceError(f"github: {exc}") from None
