"""A program: a standalone CUDA source following the program convention (or several files)."""

from __future__ import annotations

import hashlib
from pathlib import PurePosixPath

from pydantic import Field, model_validator

from .base import Contract


class Program(Contract):
    """One standalone CUDA program: includes, kernels, and a `main()` that reads every input
    from `data/<name>.bin` and writes every output to `data/<name>.bin`."""

    source: str = Field(min_length=1)
    filename: str = Field(default="main.cu", pattern=r"^[A-Za-z0-9_.-]+\.(cu|cpp|cc)$")
    extra_flags: list[str] = Field(default_factory=list)
    """Extra compiler flags the program needs (e.g. `-lcublas` on a GPU backend)."""
    files: dict[str, str] = Field(default_factory=dict)
    """A program of several files: the text of each by its `/`-separated path relative to the
    program's folder, its translation units and the local headers they include. Empty for a
    program of one file."""
    units: list[str] = Field(default_factory=list)
    """The translation units (keys of `files`) in build order, for a program of several files;
    `source` is the first one's text. Empty: `source` is the only translation unit."""

    @model_validator(mode="after")
    def _files_consistent(self) -> Program:
        for path in self.files:
            parts = PurePosixPath(path).parts
            if not parts or path.startswith("/") or "\\" in path or ".." in parts:
                raise ValueError(f"file path {path!r} must be relative to the program's folder, "
                                 "without '..'")
        missing = [u for u in self.units if u not in self.files]
        if missing:
            raise ValueError(f"translation unit {missing[0]!r} is not among the files")
        if self.units and self.files[self.units[0]] != self.source:
            raise ValueError(f"source must be the text of the first translation unit "
                             f"{self.units[0]!r}")
        return self

    def sources_text(self) -> str:
        """Every file's text, for a static analysis that must see all of the program."""
        if not self.files:
            return self.source
        return "\n".join(self.files[u] for u in self.units) + "\n" + "\n".join(
            text for path, text in sorted(self.files.items()) if path not in self.units)

    def digest(self) -> str:
        h = hashlib.sha256()
        h.update(self.source.encode("utf-8", "surrogatepass"))
        h.update(b"\0" + "\0".join(self.extra_flags).encode())
        # One-file programs keep the digest they always had.
        for path in self.units:
            h.update(b"\0unit\0" + path.encode("utf-8", "surrogatepass"))
        for path, text in sorted(self.files.items()):
            h.update(b"\0file\0" + path.encode("utf-8", "surrogatepass") + b"\0"
                     + text.encode("utf-8", "surrogatepass"))
        return h.hexdigest()
