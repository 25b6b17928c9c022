"""The column mapping of a generic dataset: which column holds what a `RawRecord` needs.

Written as a dict or as one string for the command line:
`"text=COL,module=COL,id=COL,license=COL,split=COL,kind=kernel|module|program,filter=COL==VALUE"`
(`filter` also takes `COL!=VALUE`). `text` or `module` is required.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from ..base import SourceError

Kind = Literal["program", "kernel", "module"]
KINDS: tuple[Kind, ...] = ("program", "kernel", "module")
KEYS = ("text", "module", "id", "license", "split", "kind", "filter")
COLUMN_KEYS = ("text", "module", "id", "license", "split")


@dataclass(frozen=True)
class RowFilter:
    """Keep a row only when `str(row[column])` equals (or, with `!=`, differs from) `value`."""

    column: str
    value: str
    negate: bool = False

    def keeps(self, row: Mapping[str, object]) -> bool:
        value = row.get(self.column)
        wanted = self.value.lower() if isinstance(value, bool) else self.value
        return (_as_text(value) == wanted) != self.negate

    def __str__(self) -> str:
        return f"{self.column}{'!=' if self.negate else '=='}{self.value}"


@dataclass(frozen=True)
class ColumnMap:
    text: str | None = None
    module: str | None = None
    id: str | None = None
    license: str | None = None
    split: str | None = None
    kind: Kind | None = None
    filter: RowFilter | None = None

    @property
    def record_kind(self) -> Kind:
        """The explicit kind, else `kernel` for CUDA text (an LLM wraps it into a program) and
        `module` for a PyTorch module alone."""
        if self.kind:
            return self.kind
        return "kernel" if self.text else "module"

    def columns(self) -> list[tuple[str, str]]:
        """(role, column) for every column the mapping reads."""
        named = [(k, getattr(self, k)) for k in COLUMN_KEYS if getattr(self, k)]
        if self.filter:
            named.append(("filter", self.filter.column))
        return named


def parse_columns(spec: str | Mapping[str, str], dataset: str) -> ColumnMap:
    """A `ColumnMap` from its dict or string form; `SourceError` naming the dataset otherwise."""
    if isinstance(spec, str):
        pairs: dict[str, str] = {}
        for part in (p.strip() for p in spec.split(",")):
            if not part:
                continue
            key, eq, value = part.partition("=")
            if not eq:
                raise SourceError(
                    f"hf dataset {dataset!r}: column mapping item {part!r} is not KEY=COLUMN"
                )
            pairs[key.strip()] = value.strip()
    elif isinstance(spec, Mapping):
        pairs = {str(k): str(v) for k, v in spec.items() if v is not None}
    else:
        raise SourceError(
            f"hf dataset {dataset!r}: columns must be a dict or a string, not {type(spec).__name__}"
        )
    unknown = sorted(set(pairs) - set(KEYS))
    if unknown:
        raise SourceError(
            f"hf dataset {dataset!r}: unknown column mapping key(s) {', '.join(unknown)} "
            f"(known: {', '.join(KEYS)})"
        )
    if not pairs.get("text") and not pairs.get("module"):
        raise SourceError(
            f"hf dataset {dataset!r}: the column mapping needs text=COL or module=COL"
        )
    kind = pairs.get("kind") or None
    if kind is not None and kind not in KINDS:
        raise SourceError(
            f"hf dataset {dataset!r}: kind={kind!r} is not one of {', '.join(KINDS)}"
        )
    if kind == "module" and not pairs.get("module"):
        raise SourceError(f"hf dataset {dataset!r}: kind=module needs module=COL")
    if kind in ("program", "kernel") and not pairs.get("text"):
        raise SourceError(f"hf dataset {dataset!r}: kind={kind} needs text=COL")
    return ColumnMap(
        text=pairs.get("text") or None,
        module=pairs.get("module") or None,
        id=pairs.get("id") or None,
        license=pairs.get("license") or None,
        split=pairs.get("split") or None,
        kind=kind,  # type: ignore[arg-type]
        filter=_parse_filter(pairs["filter"], dataset) if pairs.get("filter") else None,
    )


def _parse_filter(text: str, dataset: str) -> RowFilter:
    for op, negate in (("!=", True), ("==", False)):
        column, found, value = text.partition(op)
        if found and column.strip():
            return RowFilter(column.strip(), value.strip(), negate)
    raise SourceError(f"hf dataset {dataset!r}: filter {text!r} is not COL==VALUE or COL!=VALUE")


def _as_text(value: object) -> str:
    # Booleans compare the way users write them on a command line (`Correct==true`).
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)
