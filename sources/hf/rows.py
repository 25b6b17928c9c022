"""What every row goes through, whichever dataset it comes from: reading a code column safely,
stable unique ids, and provenance."""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass, field

from schemas import Provenance

from ..base import UnreadableRecord

MAX_CODE_BYTES = 512 * 1024
"""Code larger than this in one row is refused (`bad_row`): no real kernel or module is that big,
and one huge row would dominate the LLM budget and the validators."""


class BadRow(ValueError):
    """A row that cannot be used; `code` is the reason counted in the manifest."""

    def __init__(self, reason: str, code: str = "bad_row"):
        super().__init__(reason)
        self.code = code


@dataclass
class DatasetContext:
    """What the row converters need to know about the dataset being read."""

    dataset: str
    """The Hub id or the local path, as given."""
    short: str
    """A short name for ids (`sakana`, `kernelbook`, `ops6k`, or the dataset's own name)."""
    hub: bool
    license: str
    """The licence applied when the row has none of its own (the card's, or the option)."""
    license_forced: bool = False
    """True when the `license` option was given: it then overrides per-row licences too."""
    data_split: str = "train"
    max_code_bytes: int = MAX_CODE_BYTES
    _ids: set[str] = field(default_factory=set)

    @property
    def url(self) -> str | None:
        return f"https://huggingface.co/datasets/{self.dataset}" if self.hub else None

    def origin(self, row_key: str) -> str:
        return f"{self.dataset}#{row_key}"

    def unique_id(self, wanted: str, row_key: str) -> str:
        """`wanted`, or `wanted~row_key` when an earlier row already took it (datasets repeat
        names), so ids stay unique and, for the same data, the same across runs."""
        rid = wanted if wanted not in self._ids else f"{wanted}~{row_key}"
        self._ids.add(rid)
        return rid

    def row_license(self, value: str | None) -> str:
        if self.license_forced or not value or value == "unknown":
            return self.license
        return value

    def provenance(self, row_key: str, license: str, **extra: object) -> Provenance:
        fields = {"url": self.url, **{k: v for k, v in extra.items() if v is not None}}
        return Provenance(source="hf", origin=self.origin(row_key), license=license, **fields)

    def unreadable(self, row_key: str, reason: str, code: str) -> UnreadableRecord:
        return UnreadableRecord(
            id=f"hf/{self.short}/{row_key}", origin=self.origin(row_key),
            reason=f"{self.dataset} row {row_key}: {reason}", code=code,
        )


def code_column(row: Mapping[str, object], column: str, ctx: DatasetContext) -> str:
    """The text in `column`, or `BadRow` saying why it cannot be used."""
    value = row.get(column)
    if value is None:
        raise BadRow(f"column {column!r} is empty (None)")
    if isinstance(value, bytes | bytearray):
        try:
            value = bytes(value).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BadRow(
                f"column {column!r} is not UTF-8 text ({exc.reason} at byte {exc.start})"
            ) from None
    if not isinstance(value, str):
        raise BadRow(f"column {column!r} holds {type(value).__name__}, not text")
    if not value.strip():
        raise BadRow(f"column {column!r} is empty")
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > ctx.max_code_bytes:
        raise BadRow(f"column {column!r} is {size} bytes, over the {ctx.max_code_bytes}-byte cap")
    if "\x00" in value:
        raise BadRow(f"column {column!r} contains NUL bytes (binary data, not code)")
    return value


def scalar(row: Mapping[str, object], column: str) -> str | None:
    """A metadata value as text (`meta` holds strings); None when absent."""
    value = row.get(column)
    if value is None:
        return None
    if isinstance(value, bytes | bytearray):
        return bytes(value).decode("utf-8", "replace")
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def check_module(code: str, entry_point: str | None = None) -> None:
    """A PyTorch module file must parse and define `get_inputs`, `get_init_inputs` and its class
    (`entry_point` when the dataset names it, else any class); parsed only, never executed."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError) as exc:
        raise BadRow(f"module is not valid Python: {exc}", code="not_a_module") from None
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    classes = {n.name for n in tree.body if isinstance(n, ast.ClassDef)}
    missing = [f for f in ("get_inputs", "get_init_inputs") if f not in functions]
    if entry_point and entry_point not in classes:
        missing.append(f"class {entry_point}")
    elif not classes:
        missing.append("a module class")
    if missing:
        raise BadRow(f"module lacks {', '.join(missing)}", code="not_a_module")
