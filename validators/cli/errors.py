"""One-line errors shared by the subcommands: exit code 2, never a traceback by default."""

from __future__ import annotations

import os
import sys


def fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def internal_error(exc: Exception) -> int:
    """A backend or tool failed (not the program): one line, the traceback on CKD_DEBUG=1."""
    if os.environ.get("CKD_DEBUG"):
        raise exc
    first = (str(exc).strip().splitlines() or [""])[0]
    return fail(f"{type(exc).__name__}: {first} (set CKD_DEBUG=1 for the traceback)")
