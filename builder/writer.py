"""Parquet shards in the Hugging Face Hub's layout: `data/<split>-0000i-of-0000N.parquet`.

Rows are `schemas.record_to_row`, sorted by id, under one explicit Arrow schema so every
shard has the same columns. A split with no records gets no shard: `datasets` cannot load a
shard without rows ("BatchSize must be greater than 0"), so whatever is written loads, and the
card and manifest list only the splits that exist. Each shard is written to a temporary file
and renamed into place; shards of a previous build that the new one does not produce are
removed afterwards, so the folder never mixes two builds' layouts for long.
"""

from __future__ import annotations

import hashlib
import io
import math
from collections.abc import Iterable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from schemas import DatasetRecord, ShardInfo, record_to_row

from .cache import atomic_write_bytes

SPLITS = ("train", "test")

ROW_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("split", pa.string()),
        ("task_name", pa.string()),
        ("prompt", pa.string()),
        ("messages", pa.list_(pa.struct([("role", pa.string()), ("content", pa.string())]))),
        ("response", pa.string()),
        (
            "spans",
            pa.list_(
                pa.struct(
                    [("start", pa.int64()), ("end", pa.int64()), ("kind", pa.string()), ("label", pa.string())]
                )
            ),
        ),
        (
            "provenance",
            pa.struct([(k, pa.string()) for k in ("source", "origin", "license", "repo", "commit", "path")]),
        ),
        ("license", pa.string()),
        ("backend", pa.string()),
        ("status", pa.string()),
        ("task_json", pa.string()),
        ("validation_json", pa.string()),
        ("provenance_json", pa.string()),
        ("synthesis_json", pa.string()),
        ("schema_version", pa.int64()),
    ]
)


def shard_name(split: str, index: int, count: int) -> str:
    return f"data/{split}-{index:05d}-of-{count:05d}.parquet"


def table_bytes(rows: list[dict]) -> bytes:
    table = pa.Table.from_pylist(rows, schema=ROW_SCHEMA)
    buf = io.BytesIO()
    pq.write_table(table, buf, compression="zstd")
    return buf.getvalue()


def write_shards(out: Path, records: Iterable[DatasetRecord], *, shard_records: int = 5000) -> list[ShardInfo]:
    """Write every split that has records; returns the shards written (none for no records)."""
    by_split: dict[str, list[DatasetRecord]] = {s: [] for s in SPLITS}
    for rec in records:
        by_split[rec.split].append(rec)
    shards: list[ShardInfo] = []
    for split in SPLITS:
        recs = sorted(by_split[split], key=lambda r: r.id)
        if not recs:
            continue
        count = max(1, math.ceil(len(recs) / shard_records))
        for i in range(count):
            chunk = recs[i * shard_records : (i + 1) * shard_records]
            data = table_bytes([record_to_row(r) for r in chunk])
            rel = shard_name(split, i, count)
            atomic_write_bytes(out / rel, data)
            shards.append(
                ShardInfo(split=split, path=rel, records=len(chunk), sha256=hashlib.sha256(data).hexdigest())
            )
    keep = {s.path for s in shards}
    data_dir = out / "data"
    for old in data_dir.glob("*.parquet"):
        if f"data/{old.name}" not in keep:
            old.unlink()
    return shards
