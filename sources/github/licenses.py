"""The repository licence policy: the shared one (`sources.licenses.policy`), re-exported."""

from __future__ import annotations

from sources.licenses.policy import DEFAULT_ALLOWED, license_refusal, parse_allowed

__all__ = ["DEFAULT_ALLOWED", "license_refusal", "parse_allowed"]
