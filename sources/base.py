"""The source interface and the registry the builder looks sources up in.

A source is a named object whose `records()` yields `schemas.RawRecord`s, each with its
provenance (and licence). Sources only read: they never compile, run or call an LLM.

Sources register lazily by module path so that asking for `builtin` never imports the
GitHub or Hub clients a later source needs. A later source plugs in with one line in
`_BUILTIN_SOURCES` (or `register_source` from a plugin).
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from schemas import RawRecord


class UnknownSource(ValueError):
    """A source name nobody registered; the message lists the known ones."""


class SourceError(RuntimeError):
    """A source could not produce its records (bad path, bad options, unreadable data)."""


@dataclass(frozen=True)
class UnreadableRecord:
    """What a source yields for an entry it found but could not read or must not use (a
    malformed task folder, an undecodable file, a repository whose licence the policy refuses):
    the build rejects it at gather with `code` as the reason and `reason` as the detail, so it
    shows in the funnel, the manifest and `rejections.jsonl`, and goes on."""

    id: str
    origin: str
    reason: str
    code: str = "unreadable"
    """The short reason counted in the manifest (`unreadable`, or a policy's own code such as
    `license_copyleft`, `file_too_large`, `binary_file`, `symlink`); `reason` is the detail."""


@runtime_checkable
class Source(Protocol):
    """What the builder needs from a source."""

    name: str

    def records(self) -> Iterator[RawRecord | UnreadableRecord]:
        """Yield raw records in a stable order, each with complete provenance."""
        ...


class FunctionSource:
    """Adapts a plain generator function to the `Source` interface."""

    def __init__(self, name: str, fn: Callable[..., Iterator[RawRecord]], **options: Any):
        self.name = name
        self._fn = fn
        self._options = options

    def records(self) -> Iterator[RawRecord]:
        yield from self._fn(**self._options)

    def __repr__(self) -> str:
        return f"FunctionSource({self.name!r})"


# name -> "module:attribute"; the attribute is a Source class, a Source instance, or a
# generator function yielding RawRecords. Imported only when the source is asked for.
_BUILTIN_SOURCES: dict[str, str] = {
    "builtin": "sources.builtin:records",
    "github": "sources.github:records",
    "hf": "sources.hf:records",
    "kernelbench": "sources.kernelbench:records",
    "local": "sources.local:records",
}
_REGISTRY: dict[str, str | Callable[..., Source]] = dict(_BUILTIN_SOURCES)


def register_source(name: str, target: str | Callable[..., Source]) -> None:
    """Register a source by `"module:attribute"` or by a factory returning a `Source`."""
    if not name.isidentifier():
        raise ValueError(f"source name {name!r} must be an identifier")
    _REGISTRY[name] = target


def available_sources() -> list[str]:
    return sorted(_REGISTRY)


def get_source(name: str, **options: Any) -> Source:
    """The source registered as `name`, built with `options`.

    Raises `UnknownSource` (listing the known names) for a name nobody registered.
    """
    if name not in _REGISTRY:
        raise UnknownSource(
            f"unknown source {name!r} (known: {', '.join(available_sources())})"
        )
    target = _REGISTRY[name]
    if isinstance(target, str):
        module_name, _, attr = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise SourceError(f"source {name!r}: cannot import {module_name}: {exc}") from exc
        obj = getattr(module, attr or "SOURCE", None)
        if obj is None:
            raise SourceError(f"source {name!r}: {module_name} has no attribute {attr!r}")
    else:
        obj = target
    return _as_source(name, obj, options)


def _as_source(name: str, obj: Any, options: dict[str, Any]) -> Source:
    if isinstance(obj, Source) and not isinstance(obj, type):
        if options:
            raise SourceError(f"source {name!r} takes no options (got {sorted(options)})")
        return obj
    if inspect.isgeneratorfunction(obj):
        return FunctionSource(name, obj, **options)
    if not callable(obj):
        raise SourceError(f"source {name!r}: {obj!r} is neither a Source nor a function")
    made = obj(**options)
    if isinstance(made, Source):
        return made
    if isinstance(made, Iterable):
        # A plain function that returned its records: serve them once.
        return FunctionSource(name, lambda: iter(made))
    raise SourceError(f"source {name!r}: {type(made).__name__} has no records() method")
