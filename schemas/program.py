"""A program: one standalone CUDA source following the program convention."""

from __future__ import annotations

import hashlib

from pydantic import Field

from .base import Contract


class Program(Contract):
    """One standalone CUDA program: includes, kernels, and a `main()` that reads every input
    from `data/<name>.bin` and writes every output to `data/<name>.bin`."""

    source: str = Field(min_length=1)
    filename: str = Field(default="main.cu", pattern=r"^[A-Za-z0-9_.-]+\.(cu|cpp|cc)$")
    extra_flags: list[str] = Field(default_factory=list)
    """Extra compiler flags the program needs (e.g. `-lcublas` on a GPU backend)."""

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(self.source.encode("utf-8", "surrogatepass"))
        h.update(b"\0" + "\0".join(self.extra_flags).encode())
        return h.hexdigest()
