"""Property tests: every task the schema accepts can be drawn and handed to a NumPy reference;
what the schema refuses, generation refuses with the one documented error (CaseError).

Hypothesis draws dtypes, shapes mixing integers and size names, every distribution kind and
awkward bounds (fractions, dtype extremes, beyond float32, beyond int64)."""

from __future__ import annotations

import math
from typing import get_args

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from schemas import DType, InputCase, Reference, Task, TensorSpec, ValueDistribution
from schemas.tensor import FLOAT_EXACT_INT, INT_RANGES
from validators.cases import CaseError, generate, materialize
from validators.reference import ReferenceRunner
from validators.sandbox import Limits

DTYPES = list(get_args(DType))
KINDS = ["uniform", "normal", "randint", "constant", "arange", "edge", "permutation"]
SIZE_NAMES = ["N", "M", "K"]
MAX_DRAWN = 1 << 17

ODD_NUMBERS = [0, 0.5, -0.5, 1, -1, 8, -8, 127, 128, 255, 256, -129, 2**24, 2**24 + 1,
               2**31, -(2**31) - 1, 2**53 + 2, 2**63, -(2**63), 2**64, 1e30, -1e30, 3.5e38,
               -3.5e38, 1.7e308, -1.7e308, 1e-30, -1e-40]
numbers = st.one_of(st.sampled_from(ODD_NUMBERS), st.integers(-300, 300),
                    st.floats(allow_nan=False, allow_infinity=False, width=64))
# A few draws are not finite: the schema must refuse them, never generation.
maybe_inf = st.one_of(numbers, st.sampled_from([math.inf, -math.inf, math.nan]))

dist_args = st.fixed_dictionaries({
    "kind": st.sampled_from(KINDS),
    "low": maybe_inf, "high": numbers, "mean": numbers, "std": st.floats(0, 1e300),
    "value": maybe_inf,
})
shapes = st.lists(st.one_of(st.sampled_from(SIZE_NAMES), st.integers(0, 4)), max_size=3)
task_sizes = st.fixed_dictionaries({n: st.integers(0, 300) for n in SIZE_NAMES})


def _count(shape: list[int | str], sizes: dict[str, int]) -> int:
    return math.prod(sizes[d] if isinstance(d, str) else d for d in shape)


def _check_values(arr: np.ndarray, dist: ValueDistribution, spec: TensorSpec,
                  sizes: dict[str, int]) -> None:
    """What each kind promises (ValueDistribution's docstring), on any dtype."""
    shape = tuple(sizes[d] if isinstance(d, str) else d for d in spec.shape)
    assert arr.shape == shape and arr.dtype == np.dtype(spec.dtype)
    flat = arr.ravel()
    is_float = spec.dtype in ("float32", "float64")
    if is_float:
        assert np.all(np.isfinite(flat)), "generated values must be finite"
    if dist.kind == "arange":
        assert np.array_equal(flat, np.arange(flat.size))
    elif dist.kind == "permutation":
        assert np.array_equal(np.sort(flat), np.arange(flat.size))
    elif dist.kind == "constant":
        assert np.all(flat == np.array(dist.value).astype(arr.dtype))
    elif dist.kind == "randint" or (dist.kind == "uniform" and not is_float):
        wide = flat.astype(object)  # exact comparison of uint64/int64 with float bounds
        lo, hi = INT_RANGES.get(spec.dtype, (-FLOAT_EXACT_INT.get(spec.dtype, 0),
                                             FLOAT_EXACT_INT.get(spec.dtype, 0)))
        assert all(int(v) == v for v in wide)
        assert all(max(math.ceil(dist.low), lo) <= v <= min(math.floor(dist.high), hi)
                   for v in wide)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(dtype=st.sampled_from(DTYPES), shape=shapes, sizes=task_sizes, args=dist_args,
       seed=st.integers(0, 2**31))
def test_schema_valid_distribution_generates_and_refused_one_raises_case_error(
        dtype, shape, sizes, args, seed):
    spec = TensorSpec(name="x", dtype=dtype, shape=shape)
    try:
        dist = ValueDistribution(**args)
    except ValidationError as exc:  # refused on its own: an inverted range, a non-finite number
        not_finite = not all(math.isfinite(args[k]) for k in ("low", "high", "mean", "std", "value"))
        inverted = args["kind"] in ("uniform", "randint", "edge") and args["low"] > args["high"]
        assert not_finite or inverted, exc
        return
    case = InputCase(name="c", seed=seed, distributions={"x": dist})
    out = TensorSpec(name="y", dtype="float32", shape=[1])
    code = "def reference(inputs, sizes):\n    return {}\n"
    try:
        Task(name="t", description="d", inputs=[spec], outputs=[out], sizes=sizes,
             cases=[case], reference=Reference(code=code))
        accepted = True
    except ValidationError as exc:
        accepted = False
        why = str(exc)
        assert "case 'c', input 'x'" in why, why
    count = _count(shape, sizes)
    problem = dist.problem(dtype, count)
    assert accepted == (problem == "")
    if count > MAX_DRAWN:
        return  # the same code path as a smaller draw; kept cheap on a shared machine
    if accepted:
        _check_values(generate(spec, dist, case, sizes), dist, spec, sizes)
    else:
        # Generation of what the schema refuses (a task built without validation): the
        # documented error, with the same reason.
        with pytest.raises(CaseError, match="input 'x'") as err:
            generate(spec, dist, case, sizes)
        assert problem in str(err.value)


ECHO = '''
import numpy as np
EXPECT = {expect!r}
SIZES = {sizes!r}
OUT_SHAPE = {out_shape!r}
def reference(inputs, sizes):
    # The harness hands every size (defaults and overrides), and each input as generated.
    assert dict(sizes) == SIZES, (dict(sizes), SIZES)
    assert sorted(inputs) == sorted(EXPECT), sorted(inputs)
    for name, (dtype, shape) in EXPECT.items():
        a = inputs[name]
        assert a.dtype == np.dtype(dtype) and list(a.shape) == shape, (name, a.dtype, a.shape)
    shape = [sizes[d] if isinstance(d, str) else d for d in OUT_SHAPE]
    out = {{"count": np.full(shape, sum(a.size for a in inputs.values()), dtype=np.int64)}}
    for name in EXPECT:
        out["echo_" + name] = inputs[name]
    return out
'''

# At most two dimensions here, so that a case stays within a few MB in the sandbox.
small_shapes = st.lists(st.one_of(st.sampled_from(SIZE_NAMES), st.integers(0, 4)), max_size=2)
input_lists = st.lists(st.tuples(st.sampled_from(DTYPES), small_shapes, st.none() | dist_args),
                       max_size=3)


@pytest.fixture(scope="module")
def runner(tmp_path_factory) -> ReferenceRunner:
    return ReferenceRunner(tmp_path_factory.mktemp("refs"),
                           limits=Limits(cpu_seconds=20, wall_seconds=60, memory_bytes=2 << 30,
                                         file_size_bytes=64 << 20, max_processes=32,
                                         output_bytes=64 << 10))


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.filter_too_much])
@given(inputs=input_lists, out_shape=small_shapes, sizes=task_sizes,
       overrides=st.dictionaries(st.sampled_from(SIZE_NAMES), st.integers(0, 300), max_size=2),
       seed=st.integers(0, 2**31))
def test_schema_valid_task_runs_through_the_numpy_reference(runner, inputs, out_shape, sizes,
                                                             overrides, seed):
    """Zero inputs (a generator) included: the reference sees every size and each input with
    its dtype and shape, and the harness hands the arrays back bit for bit."""
    specs = [TensorSpec(name=f"in{i}", dtype=dt, shape=sh) for i, (dt, sh, _) in enumerate(inputs)]
    try:
        dists = {f"in{i}": ValueDistribution(**a) for i, (_, _, a) in enumerate(inputs) if a}
    except ValidationError:
        return
    case = InputCase(name="c", seed=seed, sizes=overrides, distributions=dists)
    full = {**sizes, **overrides}
    expect = {s.name: (s.dtype, [full[d] if isinstance(d, str) else d for d in s.shape])
              for s in specs}
    code = ECHO.format(expect=expect, sizes=full, out_shape=out_shape)
    outputs = [TensorSpec(name="count", dtype="int64", shape=out_shape, read_only=False),
               *[TensorSpec(name=f"echo_{s.name}", dtype=s.dtype, shape=s.shape, read_only=False)
                 for s in specs]]
    try:
        task = Task(name="t", description="d", inputs=specs, outputs=outputs, sizes=sizes,
                    cases=[case], reference=Reference(code=code))
    except ValidationError as exc:
        assert "case 'c', input 'in" in str(exc)
        return
    given_inputs, outs, _ = runner.case_data(task, case)
    assert set(given_inputs) == {s.name for s in specs}
    total = sum(a.size for a in given_inputs.values())
    assert np.all(outs["count"] == total)
    for s in specs:
        assert outs[f"echo_{s.name}"].tobytes() == given_inputs[s.name].tobytes()
    assert materialize(task, case).keys() == given_inputs.keys()
