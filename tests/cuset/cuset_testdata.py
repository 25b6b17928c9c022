"""Builder datasets for the trainer tests: valid DatasetRecords whose responses are the bundled
CUDA programs, spans from the shared static analysis, written by the builder's shard writer."""

from __future__ import annotations

from pathlib import Path

from cuset.tiny import PROMPTS, corpus_programs
from schemas import (
    DatasetRecord,
    InputCase,
    Provenance,
    Reference,
    Span,
    Task,
    TensorSpec,
    ValidationSummary,
)
from validators.analysis import analyze


def make_record(name: str, response: str, *, spans: list[Span] | None = None, split: str = "train",
                rec_id: str | None = None) -> DatasetRecord:
    prompt = PROMPTS.get(name, f"Write the CUDA program {name}.")
    task = Task(
        name=name,
        description=prompt,
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="y", dtype="float32", shape=["N"])],
        sizes={"N": 1024},
        cases=[InputCase(name=f"c{i}", seed=i, sizes={"N": 1000 + i}) for i in range(5)],
        reference=Reference(code="def reference(inputs, sizes):\n    return {'y': inputs['x']}\n"),
    )
    if spans is None:
        spans = analyze(response).spans
    return DatasetRecord(
        id=rec_id or name,
        prompt=prompt,
        messages=[{"role": "user", "content": prompt}, {"role": "assistant", "content": response}],
        response=response,
        spans=spans,
        task=task,
        validation=ValidationSummary(backend="cpu", status="passed"),
        provenance=Provenance(source="builtin", origin=f"cuset/tiny/corpus/{name}.cu", license="Apache-2.0"),
        split=split,
    )


def corpus_records(copies: int = 1) -> list[DatasetRecord]:
    recs = []
    for k in range(copies):
        for name, text in corpus_programs().items():
            recs.append(make_record(name, text, rec_id=f"{name}-{k}"))
    return recs


def write_dataset(records: list[DatasetRecord], folder: Path) -> Path:
    """Write the records with the builder's own shard writer (`data/<split>-*.parquet`)."""
    from builder.writer import write_shards

    write_shards(folder, records)
    return folder
