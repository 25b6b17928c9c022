"""Assemble a dataset record from a finished item.

The record keeps only reproducible facts of the validation (statuses, errors, compiler,
command, diagnostics, resources); wall-clock times and cache flags vary from run to run and
would make two builds of the same inputs differ, so they are dropped here and reported per
stage in the manifest instead, and paths of this machine (the cache, the checkout, the home
folder) in the compiler command become placeholders.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from schemas import (
    CaseSummary,
    DatasetRecord,
    SynthesisInfo,
    ValidationResult,
    ValidationSummary,
)

from .item import Item


@cache
def _local_prefixes() -> tuple[tuple[str, str], ...]:
    """Machine-specific path prefixes -> placeholders, longest first."""
    import validators

    pairs = {
        os.environ.get("CKD_CACHE_DIR") or str(Path.home() / ".cache" / "cuda-kernel-data"): "$CKD_CACHE_DIR",
        # The emulator's runtime and precompiled header, in the command of every cpu build.
        **({os.environ["CKD_SHIM_DIR"]: "$CKD_SHIM_DIR"} if os.environ.get("CKD_SHIM_DIR") else {}),
        str(Path(validators.__file__).resolve().parent): "$VALIDATORS",
        str(Path.home()): "~",
    }
    real = {str(Path(k).resolve()): v for k, v in pairs.items()}
    return tuple(sorted({**pairs, **real}.items(), key=lambda kv: -len(kv[0])))


def scrub_paths(text: str) -> str:
    """Replace this machine's cache, checkout and home paths by placeholders, so the same
    program validated on another machine gives the same record."""
    for prefix, name in _local_prefixes():
        text = text.replace(prefix, name)
    return text


def summarise_validation(result: ValidationResult) -> ValidationSummary:
    compile_info = None
    if result.compile is not None:
        compile_info = result.compile.model_copy(
            update={
                "seconds": 0.0,
                "cached": False,
                "command": [scrub_paths(a) for a in result.compile.command],
                "diagnostics": scrub_paths(result.compile.diagnostics),
            }
        )
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
                seed=c.seed,
                fresh=c.fresh,
            )
            for c in result.cases
        ],
        compile=compile_info,
        schedules=schedules,
        fresh_seed=result.fresh_seed,
        kernel_check=result.kernel_check,
        portability=[n for n in result.notes if n.startswith("portability:")],
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
        synthesis=synthesis_info(item),
    )


def synthesis_info(item: Item) -> SynthesisInfo | None:
    s = item.synthesis
    if s is None:
        return None
    return SynthesisInfo(specifier=s.specifier, model=s.model, prompt_version=s.prompt_version,
                         kernel_kept=s.kernel_kept, repair_rounds=s.repair_rounds,
                         attempts=s.attempts)
