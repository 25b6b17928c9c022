"""Assemble a dataset record from a finished item.

The record keeps only reproducible facts of the validation (statuses, errors, compiler,
command, diagnostics, resources); wall-clock times and cache flags vary from run to run and
would make two builds of the same inputs differ, so they are dropped here and reported per
stage in the manifest instead.
"""

from __future__ import annotations

from schemas import CaseSummary, DatasetRecord, ValidationResult, ValidationSummary

from .item import Item


def summarise_validation(result: ValidationResult) -> ValidationSummary:
    compile_info = None
    if result.compile is not None:
        compile_info = result.compile.model_copy(update={"seconds": 0.0, "cached": False})
    schedules: list[str] = []
    for case in result.cases:
        for s in case.schedules:
            if s not in schedules:
                schedules.append(s)
    return ValidationSummary(
        backend=result.backend,
        status=result.status,
        cases=[
            CaseSummary(
                case=c.case,
                status=c.status,
                max_abs_error=c.max_abs_error,
                max_rel_error=max(
                    (o.max_rel_error for o in c.outputs if o.max_rel_error is not None),
                    default=None,
                ),
            )
            for c in result.cases
        ],
        compile=compile_info,
        schedules=schedules,
    )


def make_record(item: Item) -> DatasetRecord:
    if item.task is None or item.program is None or item.validation is None:
        raise ValueError(f"record {item.id!r} is not specified and validated")
    if item.prompt is None or item.messages is None or item.spans is None:
        raise ValueError(f"record {item.id!r} has no prompt, messages or spans")
    return DatasetRecord(
        id=item.id,
        prompt=item.prompt,
        messages=item.messages,
        response=item.program.source,
        spans=item.spans,
        task=item.task,
        validation=summarise_validation(item.validation),
        provenance=item.raw.provenance,
        split=item.raw.split,
    )
