"""Assembling dataset records: the validation summary keeps reproducible facts only."""

from __future__ import annotations

from pathlib import Path

from builder_helpers import make_raw, scale_program, scale_task

import validators
from builder.item import Item
from builder.records import make_record, scrub_paths, summarise_validation
from builder.stages import Annotate, Filter, Specify
from schemas import CaseResult, CompileInfo, OutputCheck, Status, ValidationResult


def result(status: str = "passed", statuses: tuple[str, ...] = ("passed",) * 5, seconds: float = 1.5) -> ValidationResult:
    cases = [
        CaseResult(case=c.name, status=s, seconds=seconds, schedules=["forward", "reverse"],
                   outputs=[OutputCheck(name="y", ok=s == "passed", max_abs_error=1e-7, max_rel_error=2e-7)])
        for c, s in zip(scale_task().cases, statuses, strict=True)
    ]
    inc = str(Path(validators.__file__).resolve().parent / "cpu" / "include")
    comp = CompileInfo(compiler="g++ 12", command=["g++", f"-I{inc}", "main.cu"], ok=True, seconds=seconds, cached=seconds > 1)
    return ValidationResult(backend="cpu", status=status, cases=cases, compile=comp, seconds=seconds * 5)


def specified() -> Item:
    return Annotate().process(Specify().process(Item(raw=make_raw("r", scale_program(), task=scale_task()))))


def test_summary_drops_timing_and_machine_paths():
    a, b = summarise_validation(result(seconds=1.5)), summarise_validation(result(seconds=0.2))
    assert a == b  # two runs that differ only in timing and cache state give the same record
    assert a.schedules == ["forward", "reverse"]
    assert a.cases[0].max_abs_error == 1e-7 and a.cases[0].max_rel_error == 2e-7
    assert a.compile.command[1] == "-I$VALIDATORS/cpu/include"
    assert scrub_paths(str(Path.home() / "x")) == "~/x"


def test_filter_keeps_only_five_passed_cases_with_cuda_spans():
    it = specified()
    it.validation = result()
    assert Filter().process(it.model_copy(deep=True)).alive
    rec = make_record(it)
    assert rec.validation.status == Status.PASSED and len(rec.validation.cases) == 5

    failed = specified()
    failed.validation = result("failed", ("passed", "failed", "passed", "passed", "passed"))
    assert Filter().process(failed).rejection.reason == "validation_failed"

    gpu = specified()
    gpu.validation = ValidationResult(backend="cpu", status="needs_gpu", reason="inline_ptx")
    assert Filter().process(gpu).rejection.reason == "validation_needs_gpu"

    short = specified()
    short.validation = ValidationResult(backend="cpu", status="passed", cases=result().cases[:3])
    assert Filter().process(short).rejection.reason == "cases_incomplete"

    nospan = specified()
    nospan.validation = result()
    nospan.spans = [s for s in nospan.spans if s.kind != "launch_config"]
    assert Filter().process(nospan).rejection.reason == "no_launch_config_span"

    unknown = Item(raw=make_raw("u", scale_program(), task=scale_task(), license="unknown"))
    unknown = Annotate().process(Specify().process(unknown))
    unknown.validation = result()
    assert Filter().process(unknown).rejection.reason == "license_unknown"


def test_a_pass_that_relies_on_undefined_behaviour_is_kept_with_its_note_or_dropped_on_request():
    from builder.stages.filter import FilterConfig

    note = ("portability: __syncthreads() at main.cu:8 in kernel 'k' was reached by 50 of 64 "
            "threads of a block; the others had exited")
    it = specified()
    it.validation = result()
    it.validation.notes = [note, "case a: something else"]
    kept = Filter().process(it.model_copy(deep=True))
    assert kept.alive
    assert make_record(kept).validation.portability == [note]
    dropped = Filter(FilterConfig(portable_only=True)).process(it)
    assert dropped.rejection.reason == "not_portable" and "main.cu:8" in dropped.rejection.detail


def test_the_emulator_folder_of_this_run_is_a_placeholder(tmp_path, monkeypatch):
    # The cpu build command names the emulator's runtime and precompiled header; with
    # CKD_SHIM_DIR (the test suite sets one per session) they live outside every other prefix.
    from builder import records

    monkeypatch.setenv("CKD_SHIM_DIR", str(tmp_path / "shim"))
    records._local_prefixes.cache_clear()
    try:
        res = result()
        res.compile.command.append(f"{tmp_path}/shim/0123/plain/runtime.o")
        assert summarise_validation(res).compile.command[-1] == "$CKD_SHIM_DIR/0123/plain/runtime.o"
    finally:
        monkeypatch.undo()
        records._local_prefixes.cache_clear()
