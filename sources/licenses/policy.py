"""Which licences the build accepts: one policy for every source, applied at gather.

A licence is an SPDX expression (`MIT`, `MIT OR Apache-2.0`, `GPL-2.0-or-later WITH
Classpath-exception-2.0`), parsed with `license-expression`. `OR` passes when one branch is
allowed (the user may pick), `AND` only when every part is (the code is under all of them), and
`X WITH exception` is judged by `X` (an exception adds permissions, it never removes copyleft).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

DEFAULT_ALLOWED = (
    "MIT", "MIT-0", "BSD-2-Clause", "BSD-3-Clause", "Apache-2.0", "ISC", "Unlicense", "CC0-1.0",
    "0BSD", "BSL-1.0", "Zlib",
    # Attribution only, no share-alike: the licence of the AI-CUDA-Engineer and CUDA-Agent-Ops
    # datasets; the dataset card carries every record's licence, which is the attribution.
    "CC-BY-4.0",
)
# Spellings that say "no licence known": never a licence, whichever source wrote them.
UNKNOWN_VALUES = frozenset({"", "unknown", "noassertion", "none", "other", "null", "n/a", "na"})
_COPYLEFT_PREFIXES = (
    "GPL", "LGPL", "AGPL", "MPL", "EPL", "EUPL", "CC-BY-SA", "CC-BY-NC-SA", "OSL", "CDDL",
    "CECILL", "SSPL", "CPL", "MS-RL", "APSL", "ODBL", "GFDL", "QPL", "SLEEPYCAT", "RPL",
)
# `GPL-2.0-only`, `GPL-2.0-or-later` and `GPL-2.0+` name the same licence text as `GPL-2.0`; an
# allowed list that names one of them means them all.
_VERSION_SUFFIXES = ("-only", "-or-later", "+")

LicenseCode = str  # "license_unknown" | "license_copyleft" | "license_not_allowed"


@dataclass(frozen=True)
class LicenseRefusal:
    """Why a record's licence is refused: `code` is what the manifest counts."""

    code: LicenseCode
    reason: str


def is_unknown(value: str | None) -> bool:
    """Whether `value` says that no licence is known (`unknown`, `NOASSERTION`, empty, ...)."""
    return (value or "").strip().lower() in UNKNOWN_VALUES


def _base(key: str) -> str:
    key = key.strip().upper()
    for suffix in _VERSION_SUFFIXES:
        if key.endswith(suffix.upper()):
            return key[: -len(suffix)]
    return key


def parse_allowed(value: Iterable[str] | str | None) -> frozenset[str]:
    """The allowed SPDX ids from a list or a comma string; None means `DEFAULT_ALLOWED`."""
    if value is None:
        return frozenset(DEFAULT_ALLOWED)
    items = value.split(",") if isinstance(value, str) else list(value)
    allowed = frozenset(str(i).strip() for i in items if str(i).strip())
    if not allowed:
        raise ValueError("licenses: an empty list would refuse every record")
    return allowed


@lru_cache(maxsize=1)
def _licensing() -> Any:
    from license_expression import get_spdx_licensing

    return get_spdx_licensing()


def parse_expression(value: str) -> Any:
    """The parsed SPDX expression of `value` (ids case-normalised: `mit` -> `MIT`).

    Raises ValueError naming the value when it is not an expression."""
    from license_expression import ExpressionError

    try:
        parsed = _licensing().parse(value, validate=False, simple=False)
    except ExpressionError as exc:
        raise ValueError(f"{value!r} is not an SPDX licence expression ({exc})") from None
    if parsed is None:
        raise ValueError(f"{value!r} is not an SPDX licence expression (empty)")
    return parsed


def normalise(value: str) -> str:
    """`value` as a canonical SPDX expression (`mit or apache-2.0` -> `MIT OR Apache-2.0`), or
    `value` unchanged when it does not parse."""
    try:
        return parse_expression(value).render()
    except ValueError:
        return value.strip()


class LicensePolicy:
    """Accepts a licence expression when the allowed ids cover it (see the module docstring)."""

    def __init__(self, allowed: Iterable[str] | str | None = None):
        self.allowed = parse_allowed(allowed)
        self._bases = {_base(a) for a in self.allowed}

    def refusal(self, license: str | None) -> LicenseRefusal | None:
        """Why a record under `license` must not be used, or None when it may."""
        value = (license or "").strip()
        if is_unknown(value):
            return LicenseRefusal("license_unknown", f"no licence known ({value or 'empty'})")
        try:
            parsed = parse_expression(value)
        except ValueError as exc:
            return LicenseRefusal("license_unknown", str(exc))
        return self._judge(parsed)

    def allows(self, license: str | None) -> bool:
        return self.refusal(license) is None

    def _judge(self, node: Any) -> LicenseRefusal | None:
        from license_expression import LicenseSymbol, LicenseWithExceptionSymbol

        lic = _licensing()
        if isinstance(node, LicenseWithExceptionSymbol):
            return self._judge(node.license_symbol)
        if isinstance(node, LicenseSymbol):
            return self._leaf(node.key)
        verdicts = [self._judge(arg) for arg in node.args]
        refused = [v for v in verdicts if v is not None]
        if isinstance(node, lic.OR):
            return None if len(refused) < len(verdicts) else _worst(refused, " and ")
        return _worst(refused, "; ") if refused else None

    def _leaf(self, key: str) -> LicenseRefusal | None:
        if _base(key) in self._bases:
            return None
        if is_unknown(key) or key not in _licensing().known_symbols:
            return LicenseRefusal("license_unknown", f"{key!r} is not an SPDX licence id")
        if key.upper().startswith(_COPYLEFT_PREFIXES):
            return LicenseRefusal("license_copyleft", f"copyleft licence {key}")
        return LicenseRefusal("license_not_allowed", f"licence {key} is not in the allowed list")


_SEVERITY = {"license_copyleft": 0, "license_not_allowed": 1, "license_unknown": 2}


def _worst(refusals: list[LicenseRefusal], sep: str) -> LicenseRefusal:
    # Copyleft is the most definite reason to refuse, so it names the whole expression.
    code = min(refusals, key=lambda r: _SEVERITY.get(r.code, 9)).code
    return LicenseRefusal(code, sep.join(dict.fromkeys(r.reason for r in refusals)))


def license_refusal(spdx: str | None, allowed: frozenset[str]) -> tuple[str, str] | None:
    """`(code, reason)` when `spdx` must be refused under `allowed`, None when allowed."""
    got = LicensePolicy(allowed).refusal(spdx)
    return None if got is None else (got.code, got.reason)
