"""Issue 21, class 5: a task's tolerance is bounded per output dtype and comparison mode.

A task author (an LLM) that chose `max_abs` 1e30 made every output within 1e30 of the
reference pass: a program off by 1000 passed. The schema refuses tolerances looser than
`schemas.TOLERANCE_BOUNDS` (the answer checks re-ask with the reason), and the engine refuses
a task that bypassed the schema before anything runs: an error of the task, never a verdict.
"""

from __future__ import annotations

import math

import pytest
from engine_programs import KERNEL_VECADD, vecadd_task
from pydantic import ValidationError

from schemas import TOLERANCE_BOUNDS, ErrorOrigin, Program, Status, Task, Tolerance
from sources.builtin.loader import load_all
from validators.backends.cpu import CpuBackend
from validators.build_cache import BuildCache
from validators.engine import Engine
from validators.reference import ReferenceRunner


def _edit(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new, 1)


# The kernel computes a + b + 1000; the output buffer starts as NaN (0xff bytes), so with
# every launch a no-op the outputs are NaN and the no-launch check sees the kernels' work.
OFF_BY_1000 = Program(source=_edit(_edit(
    KERNEL_VECADD.source, "if (i < n) c[i] = a[i] + b[i]; }", "if (i < n) c[i] = a[i] + b[i] + 1000.0f; }"),
    " add<<<", " cudaMemset(dc, 0xff, N * 4); add<<<"))


def _task_dict(dtype: str, tolerance: dict) -> dict:
    task = vecadd_task(cases=1).model_dump()
    task["outputs"][0]["dtype"] = dtype
    task["tolerances"] = {"c": tolerance}
    return task


@pytest.mark.parametrize("dtype, tol, named", [
    ("float32", {"mode": "max_abs", "max_abs": 1e30}, "max_abs=1e+30 (max_abs) is looser than the float32 bound 0.1"),
    ("float32", {"mode": "allclose", "atol": 0.0, "rtol": 0.5}, "rtol=0.5 (allclose) is looser than the float32 bound 0.01"),
    ("float32", {"mode": "allclose", "atol": float("inf"), "rtol": 0.0}, "atol"),
    ("float64", {"mode": "allclose", "atol": 1e-4, "rtol": 1e-3}, "atol=0.0001 (allclose) is looser than the float64 bound 1e-05"),
    ("int32", {"mode": "max_abs", "max_abs": 1000}, "max_abs=1000 (max_abs) is looser than the int32 bound 1"),
    ("uint8", {"mode": "allclose", "atol": 0, "rtol": 1e-4}, "rtol=0.0001 (allclose) is looser than the uint8 bound 0"),
])
def test_schema_refuses_a_loose_tolerance_naming_output_dtype_value_and_bound(dtype, tol, named):
    with pytest.raises(ValidationError) as err:
        Task.model_validate(_task_dict(dtype, tol))
    text = str(err.value)
    assert named in text, text
    if not math.isinf(tol.get("atol", 0)):
        assert f"output 'c' ({dtype}): tolerance" in text, text


def test_task_wide_default_is_judged_for_each_float_output():
    task = vecadd_task(cases=1).model_dump()
    task["tolerance"] = {"mode": "max_abs", "max_abs": 5.0}
    with pytest.raises(ValidationError, match=r"output 'c' \(float32\): tolerance max_abs=5 \(max_abs\)"):
        Task.model_validate(task)


@pytest.mark.parametrize("dtype", sorted(TOLERANCE_BOUNDS))
def test_the_bound_itself_and_exact_are_accepted(dtype):
    b = TOLERANCE_BOUNDS[dtype]
    for tol in ({"mode": "exact"}, {"mode": "max_abs", "max_abs": b.max_abs},
                {"mode": "allclose", "atol": b.atol, "rtol": b.rtol}):
        Task.model_validate(_task_dict(dtype, tol))


def test_every_builtin_task_is_within_the_bounds():
    loaded = load_all()
    assert len(loaded.tasks) == 59 and not loaded.errors, loaded.errors
    assert [p for task, _ in loaded.tasks for p in task.tolerance_problems()] == []


@pytest.fixture(scope="module")
def engine(tmp_path_factory) -> Engine:
    root = tmp_path_factory.mktemp("tol")
    cache = BuildCache(root / "builds")
    return Engine(CpuBackend(cache=cache), cache=cache, references=ReferenceRunner(root / "refs"))


def test_a_task_that_bypassed_the_schema_is_no_verdict_on_the_program(engine):
    # The exploit: the schema never saw this tolerance (model_copy does not validate).
    loose = vecadd_task(cases=1).model_copy(
        update={"tolerance": Tolerance(mode="max_abs", max_abs=1e30)})
    res = engine.check(loose, OFF_BY_1000, thorough=False)
    assert res.status == Status.ERROR and res.error_origin == ErrorOrigin.TASK, res.reason
    assert "output 'c' (float32): tolerance max_abs=1e+30 (max_abs)" in res.reason
    assert "bound 0.1" in res.reason and not res.cases  # nothing ran


def test_within_the_bounds_the_wrong_program_fails_and_the_honest_one_passes(engine):
    task = vecadd_task(cases=1, tolerance=Tolerance(mode="max_abs", max_abs=0.1))
    wrong = engine.check(task, OFF_BY_1000, thorough=False)
    assert wrong.status == Status.FAILED and "max_abs 0.1" in wrong.reason, wrong.reason
    assert engine.check(task, KERNEL_VECADD, thorough=False).status == Status.PASSED


def test_the_llm_is_told_the_bound_and_its_corrected_answer_is_kept(tmp_path):
    from llm_scripts import LIU, add_answer, right_add
    from openai_standin import StandIn, ok

    from builder.item import Item
    from builder.llm import LLMConfig
    from builder.llm.specify import KernelSpecifier
    from builder.stages import Specify
    from schemas import Provenance, RawRecord

    if not LIU.is_dir():
        pytest.skip("../shared/data is not here")
    path = LIU / "elementwise" / "elementwise_add.cu"
    raw = RawRecord(id="github/x/y/elementwise_add.cu#add", text=path.read_text(), focus="add",
                    kind="kernel", provenance=Provenance(source="github", origin="https://github.com/x",
                                                         license="MIT", repo="x/y", path="elementwise_add.cu"))
    with StandIn() as srv:
        srv.push(ok(add_answer(right_add(), tolerance={"mode": "max_abs", "max_abs": 1e30})),
                 ok(add_answer(right_add())))
        llm = LLMConfig(model="scripted", base_url=srv.url, cache_dir=tmp_path / "llm",
                        max_retries=0, schema_retries=1)
        item = Specify([KernelSpecifier(llm)]).process(Item(raw=raw))
        asks = srv.chat_requests()
    told = asks[1].body["messages"][-1]["content"] if len(asks) > 1 else ""
    assert ("output 'c' (float32): tolerance max_abs=1e+30 (max_abs) is looser than the float32 "
            "bound 0.1") in told, told
    assert item.alive, item.rejection
    assert item.task.tolerance_for("c") == Tolerance(atol=1e-6, rtol=1e-6)
