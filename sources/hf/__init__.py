"""Hugging Face datasets as a source: the known CUDA datasets (AI CUDA Engineer Archive,
KernelBook, CUDA-Agent-Ops-6K) with their own mappings, or any dataset through a column mapping.
Read with the `datasets` library, from the Hub (streamed) or from local Parquet/JSON Lines files
and Hub snapshot folders, so offline builds and tests need no network. See README.md."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from schemas import RawRecord

from ..base import SourceError, UnreadableRecord
from .columns import ColumnMap, parse_columns
from .generic import generic_record
from .known import KNOWN, KnownDataset, known_by_columns, known_by_name
from .licenses import UNKNOWN, combine
from .opening import Part, is_hub_id, one_line, open_parts
from .rows import MAX_CODE_BYTES, BadRow, DatasetContext


def records(dataset: str | list[str], **options: Any) -> Iterator[RawRecord | UnreadableRecord]:
    """The source `hf` (see `iter_records` for the options). Cheap checks run here, at the
    call, so a missing local file or a bad option stops the build before it starts; the rows
    are read lazily."""
    for one in [dataset] if isinstance(dataset, str) else list(dataset):
        if not isinstance(one, str) or not one.strip():
            raise SourceError(f"hf dataset {one!r}: give a Hub id (OWNER/NAME) or a local path")
        if not is_hub_id(one) and not Path(one).exists():
            raise SourceError(
                f"hf dataset {one!r}: no such file or folder, and not a Hub id (OWNER/NAME)")
    if options.get("data_split", "train") not in ("train", "test"):
        raise SourceError(f"hf dataset {dataset!r}: data_split must be train or test")
    return iter_records(dataset, **options)


def iter_records(
    dataset: str | list[str],
    columns: str | Mapping[str, str] | None = None,
    split: str | None = None,
    config: str | None = None,
    streaming: bool | None = None,
    license: str | None = None,
    limit: int | None = None,
    revision: str | None = None,
    data_split: str = "train",
    cache_dir: str | None = None,
    max_code_bytes: int | None = None,
) -> Iterator[RawRecord | UnreadableRecord]:
    """Records from one dataset (`sources.hf:records`, registered as source `hf`).

    `dataset`: a Hub id (`OWNER/NAME`) or a local path (a .parquet/.jsonl/.json file, a folder of
    them, or a Hub snapshot folder). `columns`: a known dataset's short name or Hub id
    (`sakana`, `kernelbook`, `ops6k`) or a generic mapping (see `columns.parse_columns`); None
    uses the known mapping of a known Hub id, or recognises a local copy of one by its columns.
    `split`: the Hub split(s) to read, comma separated (default: all). `streaming`: default on
    for Hub ids (nothing is downloaded in full), off for local files. `license`: an SPDX id that
    overrides every row's licence. `limit`: stop after this many rows read (kept or not).
    `data_split`: the `train`/`test` split of the records made. Bad rows are yielded as
    `UnreadableRecord`s; a dataset that cannot be opened raises `SourceError`.
    """
    if not isinstance(dataset, str):
        # Several datasets (`--hf-dataset` given more than once): the same options, in turn.
        opts = dict(columns=columns, split=split, config=config, streaming=streaming,
                    license=license, limit=limit, revision=revision, data_split=data_split,
                    cache_dir=cache_dir, max_code_bytes=max_code_bytes)
        for one in dataset:
            yield from iter_records(one, **opts)
        return
    if data_split not in ("train", "test"):
        raise SourceError(f"hf dataset {dataset!r}: data_split must be train or test")
    if limit is not None and limit < 0:
        raise SourceError(f"hf dataset {dataset!r}: limit must be >= 0, got {limit}")
    known = known_by_name(columns) if isinstance(columns, str) else None
    cmap = parse_columns(columns, dataset) if columns is not None and known is None else None
    if known is None and cmap is None:
        known = _known_hub_id(dataset)
    parts, hub = open_parts(
        dataset, config=config, split=split, streaming=streaming, revision=revision,
        # A known dataset's own file names apply only when reading it from the Hub.
        data_files=known.data_files if known and _known_hub_id(dataset) is known else None,
        cache_dir=cache_dir,
    )
    if known is None and cmap is None:
        first = next((c for c in map(_columns_of, parts) if c is not None), None)
        known = known_by_columns(first or [])
        if known is None:
            raise SourceError(
                f"hf dataset {dataset!r}: not a known dataset "
                f"({', '.join(k.short for k in KNOWN)}); pass columns='text=COL,...' "
                f"(its columns: {_names(first)})"
            )
    ctx = DatasetContext(
        dataset=dataset,
        short=known.short if known else _short_name(dataset),
        hub=hub,
        license=combine(license) if license else (known.row_license if known else UNKNOWN),
        license_forced=bool(license),
        data_split=data_split,
        max_code_bytes=max_code_bytes or MAX_CODE_BYTES,
    )
    roles = {c: r for r, c in cmap.columns()} if cmap else {}
    wanted = list(known.columns) if known else list(roles)
    for part in parts:
        _check_columns(dataset, part, wanted, roles)

    def convert(row: Mapping[str, object], key: str) -> RawRecord:
        if known:
            return known.convert(row, key, ctx)
        return generic_record(row, key, ctx, cmap)  # type: ignore[arg-type]

    read = 0
    for part in parts:
        if part.error is not None:
            yield ctx.unreadable(part.label or "?", f"cannot read it ({part.error})", "unreadable")
            continue
        rows = iter(part.data)
        index = 0
        while limit is None or read < limit:
            key = part.key(index)
            try:
                row = next(rows)
            except StopIteration:
                break
            except Exception as exc:
                # A broken file cannot be resumed mid-way; say where it stopped and go on.
                yield ctx.unreadable(key, f"reading stopped here ({one_line(exc)})", "unreadable")
                break
            read += 1
            index += 1
            try:
                yield convert(row, key)
            except BadRow as bad:
                yield ctx.unreadable(key, str(bad), bad.code)
            except Exception as exc:  # a value the schema refuses, an odd type: this row only
                yield ctx.unreadable(key, one_line(exc), "bad_row")


def _known_hub_id(dataset: str) -> KnownDataset | None:
    return next((k for k in KNOWN if k.hub_id.lower() == dataset.strip().lower()), None)


def _check_columns(
    dataset: str, part: Part, wanted: list[str], roles: Mapping[str, str]
) -> None:
    columns = _columns_of(part)
    if columns is None:
        return
    missing = [c for c in wanted if c not in columns]
    if missing:
        where = f" ({part.label})" if part.label else ""
        named = ", ".join(f"{c!r}" + (f" ({roles[c]})" if c in roles else "") for c in missing)
        raise SourceError(
            f"hf dataset {dataset!r}{where}: missing column(s) {named}; it has: {_names(columns)}"
        )


def _columns_of(part: Part) -> list[str] | None:
    if part.error is not None:
        return None
    if part.columns is not None:
        return part.columns
    # Schema unknown until read (JSON Lines streamed): look at the first row. A read error here
    # is reported by the row loop, where the rows before it still count.
    try:
        first = next(iter(part.data), None)
    except Exception:
        return None
    return list(first) if first is not None else None


def _names(columns: list[str] | None, most: int = 25) -> str:
    if not columns:
        return "none known"
    shown = ", ".join(columns[:most])
    return shown + (f", ... ({len(columns)} in all)" if len(columns) > most else "")


def _short_name(dataset: str) -> str:
    name = dataset.rstrip("/").split("/")[-1]
    stem = Path(name).stem if Path(dataset).is_file() else name
    return re.sub(r"[^\w.-]+", "_", stem) or "dataset"


__all__ = [
    "KNOWN", "MAX_CODE_BYTES", "ColumnMap", "KnownDataset", "parse_columns", "records",
]
