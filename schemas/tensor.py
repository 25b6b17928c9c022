"""Tensors, input cases and tolerances: how a task's data is described."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import IDENT_RE as IDENT
from .base import Contract

DType = Literal[
    "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"
]
"""Element types a task may use; files hold raw little-endian arrays of these."""

FLOAT_DTYPES: frozenset[str] = frozenset({"float32", "float64"})

INT_RANGES: dict[str, tuple[int, int]] = {
    f"{'u' if unsigned else ''}int{bits}": ((0, 2**bits - 1) if unsigned
                                          else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1))
    for bits in (8, 16, 32, 64) for unsigned in (False, True)
}
"""Smallest and largest value of each integer dtype."""

FLOAT_MAX: dict[str, float] = {"float32": 3.4028234663852886e38, "float64": 1.7976931348623157e308}
"""Largest finite value of each float dtype."""

FLOAT_EXACT_INT: dict[str, int] = {"float32": 2**24, "float64": 2**53}
"""Every integer of magnitude up to this is exact in the float dtype; beyond it some are not."""


class TensorSpec(Contract):
    """One input or output array: `data/<name>.bin` holds it as raw little-endian values.

    `shape` entries are integers or names of the task's size parameters (e.g. `["M", "K"]`),
    so one spec serves every case size.
    """

    name: str = Field(pattern=IDENT)
    dtype: DType
    shape: list[int | str] = Field(default_factory=list)
    description: str = ""
    read_only: bool = True
    """For inputs: the program must not modify the file (checked after the run)."""

    @field_validator("shape")
    @classmethod
    def _shape_ok(cls, v: list[int | str]) -> list[int | str]:
        for d in v:
            if isinstance(d, int) and d < 0:
                raise ValueError(f"dimension {d} is negative")
            if isinstance(d, str) and not d.replace("_", "a").isalnum():
                raise ValueError(f"dimension {d!r} is not a size-parameter name")
        return v

    def resolve_shape(self, sizes: dict[str, int]) -> tuple[int, ...]:
        out = []
        for d in self.shape:
            if isinstance(d, str):
                if d not in sizes:
                    raise KeyError(f"tensor {self.name!r}: size parameter {d!r} has no value")
                out.append(int(sizes[d]))
            else:
                out.append(d)
        return tuple(out)


class ValueDistribution(Contract):
    """How one input's values are drawn. Deterministic given the case seed
    (`validators.cases.generate` draws them).

    Every kind is defined for every dtype; `problem` names the few combinations that cannot
    be drawn (the task schema refuses them, so a schema-valid task always generates):

    - `uniform`: floats uniform in [low, high); integers uniform in [low, high], both ends
      included (as `randint`).
    - `normal`: N(mean, std); integers are rounded to the nearest and clipped to the dtype.
    - `randint`: integers in [low, high], both ends included; on a float dtype, integer-valued
      floats in that range (at most 2**24 in magnitude for float32, 2**53 for float64, so that
      every one is exact).
    - `constant`: every element is `value`; on an integer dtype `value` must be an integer the
      dtype holds.
    - `arange`: 0, 1, 2, ... in row-major order (low and high are not used); the dtype must
      hold every index exactly.
    - `permutation`: the values of `arange` in a random order (each index once).
    - `edge`: each element is, with equal chance, one of the special values (low, high, 0 when
      in range; for floats also -0.0, the dtype's smallest normal number and 1e-30, when in
      range) or a uniform draw from [low, high] as `uniform` draws.
    - `reference`: the task's torch reference draws the values itself from the case seed
      (KernelBench's `get_inputs()`, a model's parameter initialisation); only a task whose
      reference is torch may use it.

    low and high are clipped to the dtype's range (an int8 input with `randint` in [-1000, 1000]
    gets [-128, 127]); a range that then holds no value of the dtype is refused. Every number
    must be finite.
    """

    kind: Literal[
        "uniform", "normal", "randint", "constant", "arange", "edge", "permutation", "reference"
    ] = "uniform"
    low: float = Field(default=-1.0, allow_inf_nan=False)
    high: float = Field(default=1.0, allow_inf_nan=False)
    mean: float = Field(default=0.0, allow_inf_nan=False)
    std: float = Field(default=1.0, allow_inf_nan=False)
    value: float = Field(default=0.0, allow_inf_nan=False)
    """For `constant`."""

    @model_validator(mode="after")
    def _range_ok(self) -> ValueDistribution:
        if self.kind in ("uniform", "randint", "edge") and not self.low <= self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")
        if self.kind == "normal" and self.std < 0:
            raise ValueError("std must be non-negative")
        return self

    def problem(self, dtype: str, count: int) -> str:
        """Why this distribution cannot fill `count` elements of `dtype`, or '' when it can."""
        kind = self.kind
        if dtype in FLOAT_DTYPES:
            exact = FLOAT_EXACT_INT[dtype]
            if kind == "randint":
                lo, hi = max(math.ceil(self.low), -exact), min(math.floor(self.high), exact)
                if lo > hi:
                    return (f"randint on {dtype} draws integer-valued floats within "
                            f"[-{exact}, {exact}]; [{self.low:g}, {self.high:g}] holds none")
            elif kind == "constant" and abs(self.value) > FLOAT_MAX[dtype]:
                return f"constant value {self.value:g} is beyond {dtype}'s largest value"
            elif kind in ("arange", "permutation") and count - 1 > exact:
                return (f"{kind} of {count} elements is not exact in {dtype} (indices up to "
                        f"{exact}); use a wider dtype or fewer elements")
            return ""
        if dtype not in INT_RANGES:
            return f"unknown dtype {dtype!r}"
        tmin, tmax = INT_RANGES[dtype]
        if kind in ("uniform", "randint", "edge"):
            lo, hi = max(math.ceil(self.low), tmin), min(math.floor(self.high), tmax)
            if lo > hi:
                return (f"{kind} range [{self.low:g}, {self.high:g}] holds no {dtype} value "
                        f"(the dtype holds [{tmin}, {tmax}])")
        elif kind == "constant":
            if self.value != math.floor(self.value) or not tmin <= self.value <= tmax:
                return (f"constant value {self.value:g} is not a {dtype} value (an integer in "
                        f"[{tmin}, {tmax}])")
        elif kind in ("arange", "permutation") and count - 1 > tmax:
            return (f"{kind} of {count} elements needs indices up to {count - 1}, beyond "
                    f"{dtype}'s largest value {tmax}; use a wider dtype or fewer elements")
        return ""


def non_negative_sizes(sizes: dict[str, int]) -> dict[str, int]:
    """A pydantic check shared by tasks and cases: a size is never negative."""
    for k, n in sizes.items():
        if n < 0:
            raise ValueError(f"size {k}={n} is negative")
    return sizes


class InputCase(Contract):
    """One of a task's cases: sizes (passed to the program as -D definitions when they differ
    from the program's defaults), a seed and per-input value distributions."""

    name: str = Field(pattern=IDENT)
    seed: int = Field(ge=0)
    sizes: dict[str, int] = Field(default_factory=dict)
    distributions: dict[str, ValueDistribution] = Field(default_factory=dict)
    description: str = ""

    @field_validator("sizes")
    @classmethod
    def _sizes_ok(cls, v: dict[str, int]) -> dict[str, int]:
        return non_negative_sizes(v)


class Tolerance(Contract):
    """How an output is compared with the reference.

    - `allclose`: |out - ref| <= atol + rtol * |ref| elementwise (NumPy's rule).
    - `exact`: bitwise-equal values (the default for integer outputs).
    - `max_abs`: max |out - ref| <= max_abs.
    """

    mode: Literal["allclose", "exact", "max_abs"] = "allclose"
    atol: float = Field(default=1e-5, ge=0, allow_inf_nan=False)
    rtol: float = Field(default=1e-4, ge=0, allow_inf_nan=False)
    max_abs: float = Field(default=1e-4, ge=0, allow_inf_nan=False)

    def problem(self, dtype: str) -> str:
        """Why this tolerance is too loose for an output of `dtype` (`TOLERANCE_BOUNDS`), or
        '' when it is within the bounds. Only the parameters `mode` uses are judged."""
        bound = TOLERANCE_BOUNDS.get(dtype)
        if bound is None or self.mode == "exact":
            return ""
        used = ("atol", "rtol") if self.mode == "allclose" else ("max_abs",)
        for name in used:
            value, most = getattr(self, name), getattr(bound, name)
            if value > most:
                hint = (" (integer outputs compare exactly or within an absolute bound)"
                        if dtype not in FLOAT_DTYPES else
                        " (large values: use allclose with rtol)" if name != "rtol" else "")
                return f"{name}={value:g} ({self.mode}) is looser than the {dtype} bound {most:g}{hint}"
        return ""


@dataclass(frozen=True)
class ToleranceBound:
    """The loosest tolerance a task may give an output of one dtype, per parameter."""

    atol: float
    rtol: float
    max_abs: float


_INT_BOUND = ToleranceBound(atol=1.0, rtol=0.0, max_abs=1.0)
TOLERANCE_BOUNDS: dict[str, ToleranceBound] = {
    # float32 is also how a task stores results computed in half, bfloat16 or tf32 (a WMMA
    # GEMM with a half accumulator over 80 products is off by ~3e-2), which DType cannot name:
    # the bound leaves that room and no more. Pure float32 math needs far less (the built-in
    # reductions over 2^20 elements use atol <= 5e-3, module tasks rtol 1e-3).
    "float32": ToleranceBound(atol=1e-1, rtol=1e-2, max_abs=1e-1),
    # float64 is computed in float64 by both sides: reordered sums and 1-ulp libm differences
    # stay near 1e-12 relative. The bound is the default tolerance (so a task that names none
    # stays valid): room for cancellation, none for float32 math in a float64 output beyond it.
    "float64": ToleranceBound(atol=1e-5, rtol=1e-4, max_abs=1e-4),
    # Integers are exact; off by one allows a float computation rounded to an integer (a
    # quantisation) to land on the other side of a .5, never a relative slack.
    **{dtype: _INT_BOUND for dtype in INT_RANGES},
}
"""Per output dtype, the loosest `Tolerance` a task may carry. `schemas.Task` refuses looser
ones (naming the output, the dtype, the value and the bound), so a task author (an LLM) cannot
make a comparison that accepts wrong outputs; `validators.engine` refuses a task that bypassed
the schema before anything runs."""
