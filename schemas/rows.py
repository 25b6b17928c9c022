"""DatasetRecord <-> flat shard row (the Parquet/Arrow layout of the dataset).

Nested parts whose keys vary between records (the task with its size and distribution maps,
the validation summary) are stored as JSON strings so the Arrow schema is the same for every
shard and nothing is lost; the parts people filter and read (prompt, messages, response,
spans, provenance) are real columns. Top-level convenience columns repeat a few facts for
filtering in the Hub's viewer.
"""

from __future__ import annotations

import json
from typing import Any

from .record import DatasetRecord, Provenance, SynthesisInfo, ValidationSummary
from .span import Span
from .task import Task

PROVENANCE_FIELDS = ("source", "origin", "license", "repo", "commit", "path")


def record_to_row(rec: DatasetRecord) -> dict[str, Any]:
    prov = rec.provenance
    return {
        "id": rec.id,
        "split": rec.split,
        "task_name": rec.task.name,
        "prompt": rec.prompt,
        "messages": [{"role": m.role, "content": m.content} for m in rec.messages],
        "response": rec.response,
        "spans": [{"start": s.start, "end": s.end, "kind": s.kind, "label": s.label} for s in rec.spans],
        "provenance": {k: getattr(prov, k) for k in PROVENANCE_FIELDS},
        "license": prov.license,
        "backend": rec.validation.backend,
        "status": str(rec.validation.status),
        "task_json": rec.task.model_dump_json(),
        "validation_json": rec.validation.model_dump_json(),
        "provenance_json": prov.model_dump_json(),
        "synthesis_json": rec.synthesis.model_dump_json() if rec.synthesis is not None else None,
        "schema_version": rec.schema_version,
    }


def row_to_record(row: dict[str, Any]) -> DatasetRecord:
    return DatasetRecord(
        id=row["id"],
        split=row["split"],
        prompt=row["prompt"],
        messages=row["messages"],
        response=row["response"],
        spans=[Span(**s) for s in row["spans"]],
        task=Task.model_validate_json(row["task_json"]),
        validation=ValidationSummary.model_validate_json(row["validation_json"]),
        provenance=Provenance.model_validate_json(row["provenance_json"]),
        synthesis=(SynthesisInfo.model_validate_json(row["synthesis_json"])
                   if row.get("synthesis_json") else None),
        schema_version=row.get("schema_version", 1),
    )


def row_spans(row: dict[str, Any]) -> list[Span]:
    """Spans of a row without parsing the whole record (for the trainer's collator)."""
    return [Span(**s) for s in row["spans"]]


def dumps_row(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True)
