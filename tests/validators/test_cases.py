"""Input materialisation follows the agreed distribution rules, deterministically."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from schemas import InputCase, Reference, Task, TensorSpec, ValueDistribution
from validators.cases import CaseError, generate, materialize, write_case


def _case(seed=7, **dists):
    return InputCase(name="c", seed=seed, distributions={k: ValueDistribution(**v) for k, v in dists.items()})


def _spec(dtype="float32", shape=("N",), name="x"):
    return TensorSpec(name=name, dtype=dtype, shape=list(shape))


def test_uniform_float_matches_agreed_rng():
    case = _case(x={"kind": "uniform", "low": -2, "high": 3})
    got = generate(_spec(), case.distributions["x"], case, {"N": 1000})
    rng = np.random.default_rng([7, zlib.crc32(b"x")])
    assert got.dtype == np.float32 and got.shape == (1000,)
    np.testing.assert_array_equal(got, rng.uniform(-2, 3, 1000).astype(np.float32))
    assert got.min() >= -2 and got.max() < 3


def test_deterministic_and_seed_sensitive():
    spec = _spec()
    a = generate(spec, None, _case(1), {"N": 64})
    b = generate(spec, None, _case(1), {"N": 64})
    c = generate(spec, None, _case(2), {"N": 64})
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_defaults_float_uniform_and_int_randint():
    f = generate(_spec("float64"), None, _case(), {"N": 500})
    i = generate(_spec("int32"), None, _case(), {"N": 500})
    assert -1 <= f.min() and f.max() < 1
    assert i.dtype == np.int32 and i.min() >= 0 and i.max() <= 100 and len(set(i.tolist())) > 50


def test_integer_uniform_and_randint_inclusive():
    case = _case()
    got = generate(_spec("int64"), ValueDistribution(kind="randint", low=0, high=1), case, {"N": 200})
    assert set(got.tolist()) == {0, 1}
    got = generate(_spec("uint8"), ValueDistribution(kind="uniform", low=0, high=2), case, {"N": 200})
    assert set(got.tolist()) == {0, 1, 2} and got.dtype == np.uint8


@pytest.mark.parametrize("kind,check", [
    ("constant", lambda a: np.all(a == 2.5)),
    ("arange", lambda a: np.array_equal(a.ravel(), np.arange(12))),
    ("permutation", lambda a: sorted(a.ravel().tolist()) == list(range(12))),
    ("normal", lambda a: abs(float(a.mean()) - 10) < 5),
])
def test_other_kinds(kind, check):
    dist = ValueDistribution(kind=kind, value=2.5, mean=10, std=1)
    a = generate(_spec("float64", ("M", "K")), dist, _case(), {"M": 3, "K": 4})
    assert a.shape == (3, 4) and check(a)


def test_edge_mixes_special_values():
    a = generate(_spec(), ValueDistribution(kind="edge", low=-1, high=1), _case(), {"N": 4000})
    vals = set(a.tolist())
    assert {-1.0, 1.0, 0.0} <= vals
    assert np.any(np.signbit(a) & (a == 0))  # -0.0
    assert float(np.finfo(np.float32).tiny) in vals and np.float32(1e-30) in a
    assert len(vals) > 500  # plus uniform draws
    ints = generate(_spec("int32"), ValueDistribution(kind="edge", low=-5, high=5), _case(), {"N": 1000})
    assert {-5, 0, 5} <= set(ints.tolist()) and ints.min() >= -5 and ints.max() <= 5


def test_adding_an_input_keeps_other_values():
    ref = Reference(code="def reference(i, s):\n    return {}\n")
    one = Task(name="t", description="d", inputs=[_spec(name="a")], outputs=[_spec(name="o")],
               sizes={"N": 8}, cases=[_case()], reference=ref)
    two = one.model_copy(update={"inputs": [_spec(name="a"), _spec(name="b")]})
    assert np.array_equal(materialize(one, one.cases[0])["a"], materialize(two, two.cases[0])["a"])


def test_write_case_raw_little_endian(tmp_path):
    ref = Reference(code="def reference(i, s):\n    return {}\n")
    task = Task(name="t", description="d", inputs=[_spec("int32", name="a")],
                outputs=[_spec(name="o")], sizes={"N": 5},
                cases=[InputCase(name="c", seed=0, sizes={"N": 3},
                                 distributions={"a": ValueDistribution(kind="arange")})],
                reference=ref)
    write_case(task, task.cases[0], tmp_path)
    assert (tmp_path / "data" / "a.bin").read_bytes() == b"".join(
        i.to_bytes(4, "little") for i in range(3))


def test_randint_on_floats_gives_integer_valued_floats():
    """Issue 20: `randint` in [-8, 8] for a float32 input (exact sums) lost the record."""
    ref = Reference(code="def reference(i, s):\n    return {}\n")
    task = Task(name="t", description="d", inputs=[_spec("float32", name="a")],
                outputs=[_spec(name="o")], sizes={"N": 2000},
                cases=[_case(a={"kind": "randint", "low": -8, "high": 8})], reference=ref)
    a = materialize(task, task.cases[0])["a"]
    assert a.dtype == np.float32 and np.array_equal(a, np.rint(a))
    assert set(a.tolist()) == set(range(-8, 9))  # both ends included


@pytest.mark.parametrize("dtype,dist,sizes,why", [
    ("uint8", {"kind": "randint", "low": -10, "high": -1}, {"N": 4}, "holds no uint8 value"),
    ("int32", {"kind": "uniform", "low": 0.2, "high": 0.8}, {"N": 4}, "holds no int32 value"),
    ("int8", {"kind": "arange"}, {"N": 200}, "beyond int8's largest value 127"),
    ("uint8", {"kind": "permutation"}, {"N": 257}, "beyond uint8's largest value 255"),
    ("int16", {"kind": "constant", "value": 2.5}, {"N": 4}, "is not a int16 value"),
    ("float32", {"kind": "constant", "value": 1e39}, {"N": 4}, "beyond float32's largest"),
    ("float32", {"kind": "randint", "low": 1e30, "high": 2e30}, {"N": 4}, "holds none"),
])
def test_undrawable_distributions_are_refused_by_the_schema(dtype, dist, sizes, why):
    ref = Reference(code="def reference(i, s):\n    return {}\n")
    case = _case(a=dist)
    with pytest.raises(ValueError, match=f"case 'c', input 'a' \\({dtype}\\): .*{why}"):
        Task(name="t", description="d", inputs=[_spec(dtype, name="a")],
             outputs=[_spec(name="o")], sizes=sizes, cases=[case], reference=ref)
    # Built without validation, generation raises the documented error with the same reason.
    with pytest.raises(CaseError, match=why):
        generate(_spec(dtype, name="a"), case.distributions["a"], case, sizes)


def test_non_finite_bounds_and_numpy_reference_draws_are_refused():
    with pytest.raises(ValueError, match="finite"):
        ValueDistribution(kind="uniform", low=float("-inf"), high=0)
    with pytest.raises(ValueError, match="drawn by a torch reference"):
        Task(name="t", description="d", inputs=[_spec(name="a")], outputs=[_spec(name="o")],
             sizes={"N": 4}, cases=[_case(a={"kind": "reference"})],
             reference=Reference(code="def reference(i, s):\n    return {}\n"))
