"""Contracts: lossless JSON round trips, versioning, and errors that name the field."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from schemas import (
    BuildManifest,
    CaseResult,
    CaseSummary,
    ChatMessage,
    CompileInfo,
    DatasetRecord,
    InputCase,
    KernelResources,
    OutputCheck,
    Program,
    Provenance,
    RawRecord,
    Reference,
    SchemaError,
    Span,
    StageStats,
    Status,
    Task,
    TensorSpec,
    Tolerance,
    ValidationResult,
    ValidationSummary,
    ValueDistribution,
    record_to_row,
    row_to_record,
    worst_status,
)

SRC = "__global__ void k(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] = 0; }\n"


def make_task(n_cases: int = 5) -> Task:
    return Task(
        name="vector_add",
        description="Add x (float32, [N]) and y (float32, [N]) into z (float32, [N]).",
        inputs=[TensorSpec(name="x", dtype="float32", shape=["N"]),
                TensorSpec(name="y", dtype="float32", shape=["N"])],
        outputs=[TensorSpec(name="z", dtype="float32", shape=["N"], read_only=False)],
        sizes={"N": 1024},
        cases=[
            InputCase(name=f"c{i}", seed=i, sizes={"N": 1000 + i},
                      distributions={"x": ValueDistribution(kind="edge", low=-2, high=2)})
            for i in range(n_cases)
        ],
        reference=Reference(code="def reference(inputs, sizes):\n    return {'z': inputs['x'] + inputs['y']}\n"),
        tolerances={"z": Tolerance(mode="allclose", atol=1e-6, rtol=1e-5)},
    )


def make_record() -> DatasetRecord:
    task = make_task()
    return DatasetRecord(
        id="builtin/vector_add",
        prompt=task.description,
        messages=[ChatMessage(role="user", content=task.description),
                  ChatMessage(role="assistant", content=SRC)],
        response=SRC,
        spans=[Span(start=35, end=len(SRC) - 1, kind="kernel_body", label="k")],
        task=task,
        validation=ValidationSummary(
            backend="cpu", status=Status.PASSED,
            cases=[CaseSummary(case=c.name, status=Status.PASSED, max_abs_error=0.0) for c in task.cases],
            compile=CompileInfo(compiler="g++ 12", ok=True, resources=[KernelResources(kernel="k", registers=8)]),
            schedules=["forward", "reverse"],
            validated_at=datetime(2026, 11, 22, tzinfo=UTC),
        ),
        provenance=Provenance(source="builtin", origin="sources/builtin/tasks/vector_add", license="Apache-2.0"),
    )


ALL_MODELS = [
    make_task(),
    make_record(),
    Program(source=SRC),
    RawRecord(id="x", text=SRC, provenance=Provenance(source="local", origin="a.cu", license="MIT")),
    ValidationResult(
        backend="cpu", status=Status.FAILED, reason="z: mismatch",
        cases=[CaseResult(case="c0", status=Status.FAILED, outputs=[
            OutputCheck(name="z", ok=False, max_abs_error=math.inf, max_rel_error=math.nan,
                        first_mismatch_index=3)])],
    ),
    BuildManifest(created_at=datetime(2026, 11, 22, tzinfo=UTC), tool_version="0.1.0", backend="cpu",
                  sources=["builtin"], stages=[StageStats(name="validate", records_in=3, rejected={"failed": 1})]),
]


@pytest.mark.parametrize("obj", ALL_MODELS, ids=lambda o: type(o).__name__)
def test_json_round_trip_is_lossless(obj) -> None:
    text = obj.model_dump_json()
    back = type(obj).parse(text)
    assert back.model_dump_json() == text
    assert back.schema_version == 1


def test_infinite_and_nan_errors_survive_json() -> None:
    res = ALL_MODELS[4]
    back = ValidationResult.parse(res.model_dump_json())
    out = back.cases[0].outputs[0]
    assert math.isinf(out.max_abs_error) and math.isnan(out.max_rel_error)


def test_newer_schema_version_is_refused_by_name() -> None:
    data = make_task().model_dump()
    data["schema_version"] = 99
    with pytest.raises(SchemaError, match=r"schema_version: .*99 is not supported"):
        Task.parse(data)


@pytest.mark.parametrize(
    ("mutate", "field", "reason"),
    [
        (lambda d: d["inputs"][0].update(dtype="float16"), "inputs.0.dtype", "Input should be"),
        (lambda d: d["inputs"][0].update(name="bad name"), "inputs.0.name", "pattern"),
        (lambda d: d["cases"][1].update(seed=-1), "cases.1.seed", "greater than or equal"),
        (lambda d: d.update(colour="red"), "colour", "Extra inputs"),
        (lambda d: d["outputs"][0].update(shape=["M"]), "<root>", "size 'M'"),
        (lambda d: d["cases"][2].update(name="c0"), "cases", "duplicate case names: c0"),
        (lambda d: d["cases"][0].update(sizes={"Q": 3}), "<root>", "unknown sizes"),
        (lambda d: d["cases"][0]["distributions"].update(z={"kind": "uniform"}), "<root>", "non-inputs"),
        (lambda d: d["cases"][0]["distributions"]["x"].update(low=5, high=1), "cases.0.distributions.x", "must not exceed"),
        (lambda d: d.update(tolerances={"nope": {}}), "<root>", "unknown outputs"),
        (lambda d: d["reference"].update(code=""), "reference.code", "at least 1"),
    ],
)
def test_bad_task_names_field_and_reason(mutate, field, reason) -> None:
    data = make_task().model_dump(mode="json")
    mutate(data)
    with pytest.raises(SchemaError) as exc:
        Task.parse(data, origin="task.json")
    msg = str(exc.value)
    assert "invalid Task in task.json" in msg
    assert f"{field}:" in msg and reason in msg


def test_span_must_be_ordered_and_fit_the_response() -> None:
    with pytest.raises(SchemaError, match="end .* is before start"):
        Span.parse({"start": 5, "end": 2, "kind": "sync"})
    with pytest.raises(SchemaError, match="unknown_kind|Input should be"):
        Span.parse({"start": 0, "end": 2, "kind": "unknown_kind"})
    data = make_record().model_dump(mode="json")
    data["spans"][0]["end"] = 10_000
    with pytest.raises(SchemaError, match=r"spans.0 ends at 10000, past the response"):
        DatasetRecord.parse(data)


def test_dataset_record_needs_five_cases_and_response_last() -> None:
    data = make_record().model_dump(mode="json")
    data["task"] = make_task(n_cases=4).model_dump(mode="json")
    with pytest.raises(SchemaError, match="has 4 cases; a dataset record needs exactly 5"):
        DatasetRecord.parse(data)
    data = make_record().model_dump(mode="json")
    data["messages"][-1]["content"] = "something else"
    with pytest.raises(SchemaError, match="last message must be the assistant's response"):
        DatasetRecord.parse(data)


def test_task_size_helpers() -> None:
    task = make_task()
    task = task.model_copy(update={"sizes": {"N": 1001}})
    assert task.defines_for(task.cases[0]) == {"N": 1000}
    assert task.defines_for(task.cases[1]) == {}
    task.size_macros = {"N": "NUM_ELEMS"}
    assert task.defines_for(task.cases[2]) == {"NUM_ELEMS": 1002}
    assert TensorSpec(name="a", dtype="int32", shape=["N", 3]).resolve_shape({"N": 7}) == (7, 3)
    assert task.tolerance_for("z").atol == 1e-6


def test_integer_outputs_default_to_exact() -> None:
    data = make_task().model_dump()
    data["outputs"] = [{"name": "h", "dtype": "int32", "shape": [16]}]
    data["tolerances"] = {}
    assert Task.parse(data).tolerance_for("h").mode == "exact"


def test_worst_status_orders_by_severity() -> None:
    assert worst_status([]) == Status.PASSED
    assert worst_status([Status.PASSED, Status.NEEDS_GPU]) == Status.NEEDS_GPU
    assert worst_status([Status.FAILED, Status.COMPILE_ERROR, Status.TIMEOUT]) == Status.COMPILE_ERROR


def test_shard_row_round_trip() -> None:
    rec = make_record()
    row = record_to_row(rec)
    assert row["provenance"]["license"] == "Apache-2.0" and row["status"] == "passed"
    assert row_to_record(row) == rec


def test_program_digest_depends_on_source_and_flags() -> None:
    a, b = Program(source=SRC), Program(source=SRC + " ")
    c = Program(source=SRC, extra_flags=["-DX=1"])
    assert len({a.digest(), b.digest(), c.digest()}) == 3
    assert a.digest() == Program(source=SRC).digest()
