"""Versions of the tools that produced the verdicts, for the manifest and the card."""

from __future__ import annotations

import platform
import shutil
import subprocess
from importlib import metadata

from .fingerprint import code_fingerprint


def _line(cmd: list[str], contains: str = "") -> str:
    exe = shutil.which(cmd[0])
    if exe is None:
        return "not found"
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"error: {exc}"
    lines = [ln for ln in out.splitlines() if ln.strip()]
    if not lines:
        return "unknown"
    return next((ln for ln in lines if contains in ln), lines[0]).strip()


def _version(dist: str) -> str:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "not installed"


def environment() -> dict[str, str]:
    env = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "nvcc": _line(["nvcc", "--version"], "release"),
        "g++": _line(["g++", "--version"]),
        "validators_fingerprint": code_fingerprint("validators"),
        "builder_fingerprint": code_fingerprint("builder"),
    }
    for dist in ("cuda-kernel-data", "ray", "datasets", "pyarrow", "numpy", "datasketch", "tree-sitter-cuda"):
        env[dist] = _version(dist)
    return env
