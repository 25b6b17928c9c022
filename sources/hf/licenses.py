"""Licence strings from dataset cards and rows, normalised to SPDX identifiers.

Rows carry licences in whatever spelling their producer used (The Stack's detector writes `mit`,
`Apache-2.0`, `bsd-3-clause`; cards write `cc-by-4.0`). The builder's licence filter compares SPDX
ids, so every spelling is mapped here; anything not recognised is kept as written (the filter then
refuses it by name rather than this module guessing).
"""

from __future__ import annotations

from collections.abc import Iterable

UNKNOWN = "unknown"

_SPDX = (
    "0BSD", "AFL-3.0", "AGPL-3.0", "Apache-1.1", "Apache-2.0", "Artistic-2.0", "BSD-2-Clause",
    "BSD-3-Clause", "BSD-3-Clause-Clear", "BSD-4-Clause", "BSL-1.0", "CC-BY-4.0", "CC-BY-3.0",
    "CC-BY-SA-4.0", "CC-BY-NC-4.0", "CC-BY-NC-SA-4.0", "CC0-1.0", "ECL-2.0", "EPL-1.0", "EPL-2.0",
    "EUPL-1.2", "GPL-2.0", "GPL-3.0", "ISC", "LGPL-2.1", "LGPL-3.0", "MIT", "MIT-0", "MPL-2.0",
    "MS-PL", "NCSA", "OSL-3.0", "PostgreSQL", "Unlicense", "UPL-1.0", "WTFPL", "Zlib",
)
_BY_LOWER = {s.lower(): s for s in _SPDX}
_ALIASES = {
    "apache 2.0": "Apache-2.0",
    "apache license 2.0": "Apache-2.0",
    "apache-2": "Apache-2.0",
    "apache2": "Apache-2.0",
    "bsd-2": "BSD-2-Clause",
    "bsd-3": "BSD-3-Clause",
    "mit license": "MIT",
    "cc-by-4": "CC-BY-4.0",
    "cc0": "CC0-1.0",
    "gpl-2.0-only": "GPL-2.0",
    "gpl-3.0-only": "GPL-3.0",
    "gpl-2.0-or-later": "GPL-2.0",
    "gpl-3.0-or-later": "GPL-3.0",
    "lgpl-2.1-only": "LGPL-2.1",
    "lgpl-3.0-only": "LGPL-3.0",
    "agpl-3.0-only": "AGPL-3.0",
    "bsl-1.0": "BSL-1.0",
    "boost": "BSL-1.0",
    "unlicensed": "Unlicense",
}
# Values that say "no licence known"; they must never pass for a licence.
_NONE = {"", "none", "null", "noassertion", "unknown", "n/a", "na"}


def to_spdx(value: str) -> str | None:
    """The SPDX id for one licence string; None when it says no licence is known."""
    text = value.strip()
    key = text.lower()
    if key in _NONE:
        return None
    return _BY_LOWER.get(key) or _ALIASES.get(key) or text


def combine(values: Iterable[object] | object | None) -> str:
    """One licence expression for a row's licence value (a string or a list of strings).

    Several licences become `A AND B`: a licence detector that lists several for one repository
    cannot tell dual licensing from files under different licences, so the code is taken to be
    under all of them (an expression a filter can check part by part). Nothing usable ->
    `unknown`, which the builder filters out.
    """
    if values is None:
        return UNKNOWN
    # A string may list several licences ("MIT, Apache-2.0"); an SPDX expression has no commas.
    items = values.replace(";", ",").split(",") if isinstance(values, str) else values
    if not isinstance(items, Iterable):
        return UNKNOWN
    found: list[str] = []
    for item in items:
        if not isinstance(item, str):
            continue
        spdx = to_spdx(item)
        if spdx and spdx not in found:
            found.append(spdx)
    return " AND ".join(found) if found else UNKNOWN
