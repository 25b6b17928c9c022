"""Rows of any other dataset, read through a `ColumnMap`."""

from __future__ import annotations

from collections.abc import Mapping

from schemas import RawRecord

from .columns import ColumnMap
from .licenses import UNKNOWN, combine
from .rows import BadRow, DatasetContext, check_module, code_column, scalar

SPLITS = ("train", "test")


def generic_record(
    row: Mapping[str, object], key: str, ctx: DatasetContext, cmap: ColumnMap
) -> RawRecord:
    if cmap.filter and not cmap.filter.keeps(row):
        raise BadRow(
            f"filter {cmap.filter} does not hold ({cmap.filter.column}="
            f"{row.get(cmap.filter.column)!r})",
            code="filtered_out",
        )
    text = code_column(row, cmap.text, ctx) if cmap.text else ""
    module = code_column(row, cmap.module, ctx) if cmap.module else None
    kind = cmap.record_kind
    if kind == "module" and module is not None:
        check_module(module)
    split = ctx.data_split
    if cmap.split:
        value = (scalar(row, cmap.split) or "").strip().lower()
        if value not in SPLITS:
            raise BadRow(f"split column {cmap.split!r} holds {value!r}, not train or test")
        split = value
    own = (scalar(row, cmap.id) or "").strip() if cmap.id else ""
    license = combine(row.get(cmap.license)) if cmap.license else UNKNOWN
    return RawRecord(
        id=ctx.unique_id(f"hf/{ctx.short}/{own or key}", key),
        text=text,
        kind=kind,
        module=module,
        split=split,  # type: ignore[arg-type]
        meta={"row": key, **({"row_id": own} if own else {})},
        provenance=ctx.provenance(key, ctx.row_license(license)),
    )
