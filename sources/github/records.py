"""Turning a scanned repository file into records: one `RawRecord` per kernel, an
`UnreadableRecord` per refused file."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from schemas import Provenance, RawRecord
from sources.base import UnreadableRecord
from sources.files import KernelFile, Refusal, include_meta
from sources.licenses import UNKNOWN, Found


def blob_url(facts: dict[str, Any], path: str) -> str:
    return f"{facts['html_url'].rstrip('/')}/blob/{facts['commit']}/{quote(path)}"


def refusal_record(facts: dict[str, Any], refusal: Refusal) -> UnreadableRecord:
    return UnreadableRecord(
        id=f"github/{facts['full_name']}/{refusal.path}",
        origin=blob_url(facts, refusal.path),
        reason=f"{facts['full_name']}@{facts['commit'][:12]}: {refusal.detail}",
        code=refusal.code,
    )


def kernel_records(
    facts: dict[str, Any], kf: KernelFile, extra_meta: dict[str, str], license: Found | None = None
) -> Iterator[RawRecord]:
    """One record per kernel of `kf`, under `license` (the file's, from `LicenseMap`; default:
    the repository licence GitHub reports)."""
    url = blob_url(facts, kf.path)
    license = license or Found(facts.get("license") or UNKNOWN, "the repository licence")
    provenance = Provenance(
        source="github", origin=url, url=url, license=license.spdx,
        repo=facts["full_name"], commit=facts["commit"], path=kf.path, stars=facts.get("stars"),
    )
    meta = {**include_meta(kf), **extra_meta, "license_from": license.origin}
    for kernel in kf.kernels:
        yield RawRecord(
            id=f"github/{facts['full_name']}/{kf.path}#{kernel}", text=kf.text,
            provenance=provenance, meta=dict(meta), files=dict(kf.includes.files),
            focus=kernel, kind="kernel",
        )
