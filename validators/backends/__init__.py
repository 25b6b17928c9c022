"""Execution backends: `cuda` (real GPU), `cpu` (emulation on the host), `auto`."""

from .base import Backend, BackendUnavailable, Executable, RunOutcome, Verdict

__all__ = ["Backend", "BackendUnavailable", "Executable", "RunOutcome", "Verdict"]
