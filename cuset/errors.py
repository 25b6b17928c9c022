"""The one exception type the trainer raises for bad input (config, data, model)."""

from __future__ import annotations


class CusetError(Exception):
    """A problem with the user's input; the CLI prints the message without a traceback."""


class MissingSplitError(CusetError):
    """The dataset lacks a requested split (evaluation then runs without it, and says so)."""
