"""Optional bearer-token authentication, compared in constant time."""

from __future__ import annotations

import hmac


def token_ok(expected: str | None, authorization: str | None) -> bool:
    """True when no token is configured, or the `Authorization: Bearer <token>` header holds it."""
    if not expected:
        return True
    if not authorization:
        return False
    scheme, _, given = authorization.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(given.strip().encode(), expected.encode())
