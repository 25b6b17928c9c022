"""Shards, card and report: the folder loads with `datasets`, round-trips, and is stable."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
import yaml
from builder_helpers import make_raw, scale_program, scale_task

from builder.card import card_markdown
from builder.item import Item
from builder.report import plot_funnel
from builder.stages import Annotate, Specify
from builder.writer import write_shards
from schemas import (
    BuildManifest,
    CaseSummary,
    DatasetRecord,
    StageStats,
    ValidationSummary,
    row_to_record,
)

datasets = pytest.importorskip("datasets")


def record(rid: str, split: str = "train", factor: float = 2.0) -> DatasetRecord:
    """A record assembled the way the filter does, with a validation summary written here:
    these tests exercise the file format only, never what the validator would say."""
    item = Annotate().process(Specify().process(Item(raw=make_raw(rid, scale_program(factor), task=scale_task(factor), split=split))))
    summary = ValidationSummary(
        backend="format-test", status="passed",
        cases=[CaseSummary(case=c.name, status="passed", max_abs_error=0.0) for c in item.task.cases],
    )
    return DatasetRecord(
        id=rid, prompt=item.prompt, messages=item.messages, response=item.program.source,
        spans=item.spans, task=item.task, validation=summary, provenance=item.raw.provenance, split=split,
    )


def manifest(shards, splits) -> BuildManifest:
    return BuildManifest(
        created_at=datetime(2026, 1, 1, tzinfo=UTC), tool_version="0.1.0", backend="format-test",
        sources=["test"], shards=shards, splits=splits,
        stages=[StageStats(name="gather", records_in=5, records_out=5),
                StageStats(name="extract", records_in=5, records_out=4, rejected={"no_kernel": 1})],
    )


def test_shards_load_with_datasets_and_round_trip(tmp_path):
    recs = [record(f"r/{i}", factor=float(i)) for i in (3, 1, 2)] + [record("h/0", "test")]
    shards = write_shards(tmp_path, recs, shard_records=2)
    assert [s.path for s in shards] == [
        "data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet",
        "data/test-00000-of-00001.parquet",
    ]
    m = manifest(shards, {"train": 3, "test": 1})
    (tmp_path / "README.md").write_text(card_markdown(recs, m, schedules=["forward", "reverse"], variants=["plain", "asan"]))
    ds = datasets.load_dataset(str(tmp_path), cache_dir=str(tmp_path / ".hf"))
    assert set(ds) == {"train", "test"}
    assert ds["train"]["id"] == ["r/1", "r/2", "r/3"]  # sorted by id across shards
    assert ds["test"]["id"] == ["h/0"]
    back = row_to_record(ds["train"][0])
    assert back == next(r for r in recs if r.id == "r/1")


def test_rewrite_is_byte_identical_and_drops_stale_shards(tmp_path):
    recs = [record(f"r/{i}", factor=float(i)) for i in range(3)]
    first = write_shards(tmp_path, recs, shard_records=1)
    assert len(first) == 3
    again = write_shards(tmp_path, list(reversed(recs)), shard_records=10)
    assert [p.name for p in sorted((tmp_path / "data").iterdir())] == ["train-00000-of-00001.parquet"]
    third = write_shards(tmp_path, recs, shard_records=10)
    assert again[0].sha256 == third[0].sha256


def test_card_front_matter(tmp_path):
    recs = [record("r/0"), record("h/0", "test")]
    shards = write_shards(tmp_path, recs)
    text = card_markdown(recs, manifest(shards, {"train": 1, "test": 1}), schedules=["forward", "reverse"], variants=["plain", "asan"])
    assert text.startswith("---\n")
    assert "\n---\n\n# Validated CUDA kernels\n" in text  # the front matter is closed on its own line
    meta = yaml.safe_load(text.split("---\n")[1])
    assert meta["license"] == "apache-2.0"
    assert meta["size_categories"] == ["n<1K"]
    assert meta["task_categories"] == ["text-generation"]
    assert {c["split"] for c in meta["configs"][0]["data_files"]} == {"train", "test"}
    # `datasets` drops a splits entry without num_bytes
    assert [(sp["name"], sp["num_examples"]) for sp in meta["dataset_info"]["splits"]] == [("train", 1), ("test", 1)]
    assert all(sp["num_bytes"] > 0 for sp in meta["dataset_info"]["splits"])
    names = [f["name"] for f in meta["dataset_info"]["features"]]
    assert {"prompt", "messages", "response", "spans", "task_json", "validation_json", "provenance"} <= set(names)
    body = text.split("---\n", 2)[2]
    assert "forward, reverse" in body and "AddressSanitizer" in body and "allclose" in body


def test_funnel_plot(tmp_path):
    plot_funnel(manifest([], {"train": 4}), tmp_path / "funnel.png")
    data = (tmp_path / "funnel.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000


def test_an_empty_split_gets_no_shard_and_what_is_written_loads(tmp_path):
    """A shard without rows does not load ("BatchSize must be greater than 0"): a split with
    no record is left out, and the card says so."""
    recs = [record("h/0", "test")]
    shards = write_shards(tmp_path, recs)
    assert [s.path for s in shards] == ["data/test-00000-of-00001.parquet"]
    m = manifest(shards, {"train": 0, "test": 1})
    text = card_markdown(recs, m, schedules=["forward"], variants=["plain"])
    (tmp_path / "README.md").write_text(text)
    meta = yaml.safe_load(text.split("---\n")[1])
    assert [c["split"] for c in meta["configs"][0]["data_files"]] == ["test"]
    assert "`train` 0 (no shard written)" in text
    ds = datasets.load_dataset(str(tmp_path), cache_dir=str(tmp_path / ".hf"))
    assert set(ds) == {"test"} and ds["test"]["id"] == ["h/0"]


def test_no_record_writes_no_shard_and_removes_old_ones(tmp_path):
    write_shards(tmp_path, [record("r/0")])
    assert write_shards(tmp_path, []) == []
    assert list((tmp_path / "data").glob("*.parquet")) == []
