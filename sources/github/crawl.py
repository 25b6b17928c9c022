"""The crawl: repositories from a list or a search, each pinned to a commit, its tree scanned
with the file policy, its kernels yielded with provenance; progress kept for resuming."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from schemas import RawRecord
from sources.base import UnreadableRecord
from sources.files import FilePolicy, Refusal, ScanSummary, scan_tree
from sources.licenses import Found, LicenseMap, is_unknown

from .client import GitHubClient, GitHubError, RateLimitError
from .licenses import license_refusal
from .records import kernel_records, refusal_record
from .repos import RepoSpec, parse_spec
from .state import CrawlState
from .tree import GitHubTree, fetch_tree

SEARCH_PAGE = 100
SEARCH_LIMIT = 1000  # GitHub serves at most 1000 results per search


@dataclass
class RepoReport:
    """What the crawl did with one repository item (for summaries, tests and benchmarks)."""

    repo: str
    commit: str | None = None
    license: str | None = None
    stars: int | None = None
    skipped: str | None = None
    """The code of a whole-repository refusal (`license_copyleft`, `repo_unavailable`, ...)."""
    summary: ScanSummary = field(default_factory=ScanSummary)
    kernel_records: int = 0


def search_repos(
    client: GitHubClient, query: str, max_repos: int, page_size: int = SEARCH_PAGE
) -> list[RepoSpec]:
    """Repositories written in CUDA matching `query`, most stars first, at most `max_repos`."""
    q = f"language:Cuda {query}".strip()
    per_page = max(1, min(page_size, SEARCH_PAGE, max_repos))
    specs: list[RepoSpec] = []
    page = 1
    while len(specs) < max_repos:
        body = client.get_json("search/repositories", {
            "q": q, "sort": "stars", "order": "desc", "per_page": per_page, "page": page,
        })
        items = body.get("items") if isinstance(body, dict) else None
        if not items:
            break
        for item in items:
            specs.append(parse_spec(item["full_name"], "search result "))
            if len(specs) >= max_repos:
                break
        total = min(int(body.get("total_count") or 0), SEARCH_LIMIT)
        if len(items) < per_page or page * per_page >= total:
            break
        page += 1
    return list(dict.fromkeys(specs))


class Crawl:
    def __init__(
        self,
        client: GitHubClient,
        state: CrawlState,
        allowed: frozenset[str],
        policy: FilePolicy,
        *,
        default_ref: str | None = None,
        refresh: bool = False,
    ):
        self.client = client
        self.state = state
        self.allowed = allowed
        self.policy = policy
        self.default_ref = default_ref
        self.refresh = refresh
        self.reports: list[RepoReport] = []

    def records(self, specs: list[RepoSpec]) -> Iterator[RawRecord | UnreadableRecord]:
        for spec in specs:
            yield from self.repo_records(spec)

    def _facts(self, spec: RepoSpec, report: RepoReport) -> dict[str, Any] | UnreadableRecord:
        """The pinned facts of `spec`: reused from the state when the repository is finished,
        else from the API (conditional requests) and pinned."""
        key = str(spec)
        pinned = self.state.get(key)
        if pinned and pinned.get("done") and not self.refresh:
            # the policy may have changed since the pin: check the pinned licence again
            return self._licensed(pinned, pinned.get("license"), report)
        o, n = spec.owner, spec.name
        meta = self.client.get_json(f"repos/{o}/{n}")
        if not isinstance(meta, dict) or "full_name" not in meta:
            raise GitHubError(f"repos/{o}/{n}: unexpected response (no full_name)")
        spdx = (meta.get("license") or {}).get("spdx_id") if isinstance(
            meta.get("license"), dict) else None
        refused = self._licensed(meta, spdx, report)
        if isinstance(refused, UnreadableRecord):
            return refused
        if pinned and not self.refresh:
            return pinned  # killed mid-way: keep the commit it was pinned to
        ref = spec.ref or self.default_ref or meta.get("default_branch") or "HEAD"
        commit = self.client.get_json(f"repos/{o}/{n}/commits/{ref}")
        sha = commit.get("sha") if isinstance(commit, dict) else None
        if not isinstance(sha, str):
            raise GitHubError(f"repos/{o}/{n}/commits/{ref}: no commit sha in the response")
        if pinned and pinned.get("commit") == sha:
            return pinned  # same commit: same provenance (stars as recorded at pinning)
        facts = {
            "full_name": meta["full_name"], "html_url": meta.get("html_url")
            or f"https://github.com/{meta['full_name']}", "license": spdx, "commit": sha,
            "ref": ref, "stars": meta.get("stargazers_count"),
        }
        self.state.pin(key, facts)
        return facts

    def _licensed(
        self, facts: dict[str, Any], spdx: str | None, report: RepoReport
    ) -> dict[str, Any] | UnreadableRecord:
        """`facts`, or the record that skips the repository for its licence. Only a licence
        GitHub names and the policy refuses skips it here, before its tree is fetched; with none
        named (`NOASSERTION`, `OTHER`, no licence), the files say (`sources.licenses`)."""
        report.license = spdx
        refused = None if is_unknown(spdx) else license_refusal(spdx, self.allowed)
        if refused is None:
            return facts
        code, why = refused
        name = facts["full_name"]
        return UnreadableRecord(
            id=f"github/{name}", origin=facts.get("html_url") or f"https://github.com/{name}",
            reason=f"{name}: skipped, {why}", code=code,
        )

    def repo_records(self, spec: RepoSpec) -> Iterator[RawRecord | UnreadableRecord]:
        report = RepoReport(repo=str(spec))
        self.reports.append(report)
        try:
            facts = self._facts(spec, report)
            if isinstance(facts, UnreadableRecord):
                report.skipped = facts.code
                yield facts
                return
            report.commit, report.license, report.stars = (
                facts["commit"], facts["license"], facts.get("stars"))
            owner, name = facts["full_name"].split("/", 1)
            tree = GitHubTree(
                self.client, owner, name, fetch_tree(self.client, owner, name, facts["commit"])
            )
            found = list(scan_tree(tree, self.policy, summary=report.summary))
            api = facts.get("license")
            licenses = LicenseMap(
                tree, None if is_unknown(api) else Found(api, "the repository licence (GitHub API)")
            )
            found_licenses = {
                item.path: licenses.for_path(item.path, item.text)
                for item in found if not isinstance(item, Refusal)
            }
        except RateLimitError:
            raise
        except GitHubError as exc:
            report.skipped = "repo_unavailable"
            yield UnreadableRecord(
                id=f"github/{spec.full_name}", origin=f"https://github.com/{spec.full_name}",
                reason=f"{spec}: {exc}", code="repo_unavailable",
            )
            return
        extra = {"vendored_skipped": str(report.summary.vendored)}
        for item in found:
            if isinstance(item, Refusal):
                yield refusal_record(facts, item)
            else:
                for record in kernel_records(facts, item, extra, found_licenses[item.path]):
                    report.kernel_records += 1
                    yield record
        self.state.finish(str(spec))
