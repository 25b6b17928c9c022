"""Fingerprints of the code a stage's result depends on, so cached results of a changed
validator or analyser are not reused."""

from __future__ import annotations

import hashlib
import importlib.util
from functools import cache
from pathlib import Path

_SUFFIXES = {".py", ".h", ".hpp", ".cuh", ".cu", ".c", ".cpp", ".cc", ".json", ".txt"}


@cache
def code_fingerprint(package: str) -> str:
    """sha256 (16 hex) over the source files of a package; `missing` if it is not installed."""
    spec = importlib.util.find_spec(package)
    if spec is None:
        return "missing"
    if spec.submodule_search_locations:
        roots = [Path(p) for p in spec.submodule_search_locations]
        files = sorted(
            p for r in roots for p in r.rglob("*")
            if p.suffix in _SUFFIXES and p.is_file() and "__pycache__" not in p.parts
        )
        base = roots[0]
    else:
        files = [Path(spec.origin)] if spec.origin else []
        base = files[0].parent if files else Path(".")
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(base)).encode() + b"\0")
        h.update(f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


@cache
def toolchain_fingerprint(backend: str) -> str:
    """The compiler a backend builds with: a new g++ or nvcc re-validates cached records."""
    try:
        if backend == "cpu":
            from validators.cpu.toolchain import gxx_version

            return f"g++ {gxx_version()}"
        if backend == "cuda":
            from validators.nvcc import nvcc_version

            return f"nvcc {nvcc_version()}"
    except Exception as exc:  # no compiler: the build reports it; the key just says so
        return f"unavailable: {type(exc).__name__}"
    return backend
