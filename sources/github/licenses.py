"""Which repository licences (SPDX ids from the API's `license.spdx_id`) the crawl accepts."""

from __future__ import annotations

from collections.abc import Iterable

DEFAULT_ALLOWED = (
    "MIT", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "Unlicense", "CC0-1.0", "0BSD",
    "BSL-1.0", "Zlib",
)
_NONE = {"", "NOASSERTION", "OTHER", "NONE"}
_COPYLEFT_PREFIXES = (
    "GPL", "LGPL", "AGPL", "MPL", "EPL", "EUPL", "CC-BY-SA", "CC-BY-NC-SA", "OSL", "CDDL",
    "CECILL", "SSPL", "CPL", "MS-RL", "APSL", "ODBL", "GFDL", "QPL", "SLEEPYCAT", "RPL",
)


def parse_allowed(value: Iterable[str] | str | None) -> frozenset[str]:
    """The allowed SPDX ids from a list or a comma string; None means `DEFAULT_ALLOWED`."""
    if value is None:
        return frozenset(DEFAULT_ALLOWED)
    items = value.split(",") if isinstance(value, str) else list(value)
    allowed = frozenset(str(i).strip() for i in items if str(i).strip())
    if not allowed:
        raise ValueError("licenses: an empty list would refuse every repository")
    return allowed


def license_refusal(spdx: str | None, allowed: frozenset[str]) -> tuple[str, str] | None:
    """`(code, reason)` when a repository under `spdx` must be skipped, None when allowed."""
    spdx = (spdx or "").strip()
    if spdx.upper() in _NONE:
        return "license_none", f"no licence GitHub can identify ({spdx or 'none'})"
    if spdx in allowed or spdx.upper() in {a.upper() for a in allowed}:
        return None
    if spdx.upper().startswith(_COPYLEFT_PREFIXES):
        return "license_copyleft", f"copyleft licence {spdx}"
    return "license_not_allowed", f"licence {spdx} is not in the allowed list"
