"""The error `eval` raises for bad input; the CLI prints it on one line and exits 2."""

from __future__ import annotations

from ..errors import CusetError


class EvalError(CusetError):
    """A benchmark, model or endpoint that cannot be used; the message names it and says why."""
