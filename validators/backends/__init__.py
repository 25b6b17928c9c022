"""Execution backends: `cuda` (real GPU), `cpu` (emulation on the host), `auto`.

`get_backend("auto")` is `cuda` only when a GPU answers the probe, otherwise `cpu`.
The CPU backend is imported lazily (it is a separate module with its own dependencies).
"""

from __future__ import annotations

import importlib

from .base import Backend, BackendUnavailable, Executable, RunOutcome, Verdict

BACKEND_NAMES = ("auto", "cpu", "cuda")

__all__ = ["Backend", "BackendUnavailable", "Executable", "RunOutcome", "Verdict",
           "BACKEND_NAMES", "get_backend"]


def _cpu() -> Backend:
    try:
        mod = importlib.import_module("validators.backends.cpu")
    except ImportError as exc:
        raise BackendUnavailable(f"the cpu backend is not installed here ({exc})") from None
    cls = getattr(mod, "CpuBackend", None)
    if cls is None:
        raise BackendUnavailable("validators.backends.cpu defines no CpuBackend")
    return cls()


def get_backend(name: str) -> Backend:
    """A backend by name; raises BackendUnavailable when it cannot work on this machine."""
    if name == "cuda":
        from .cuda import CudaBackend

        backend: Backend = CudaBackend()
    elif name == "cpu":
        backend = _cpu()
    elif name == "auto":
        from .cuda import CudaBackend, probe_gpu

        cuda = CudaBackend()
        if cuda.available() is None and probe_gpu().ok:
            return cuda
        try:
            backend = _cpu()
        except BackendUnavailable as exc:
            raise BackendUnavailable(
                f"auto: {probe_gpu().reason() or cuda.available()}, and {exc}"
            ) from None
    else:
        raise BackendUnavailable(f"unknown backend {name!r} (choose from {', '.join(BACKEND_NAMES)})")
    why = backend.available()
    if why:
        raise BackendUnavailable(f"backend {backend.name!r} is unavailable: {why}")
    return backend
