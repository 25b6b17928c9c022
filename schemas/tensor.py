"""Tensors, input cases and tolerances: how a task's data is described."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import IDENT_RE as IDENT
from .base import Contract

DType = Literal[
    "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"
]
"""Element types a task may use; files hold raw little-endian arrays of these."""

FLOAT_DTYPES: frozenset[str] = frozenset({"float32", "float64"})



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
    """How one input's values are drawn. Deterministic given the case seed."""

    kind: Literal[
        "uniform", "normal", "randint", "constant", "arange", "edge", "permutation", "reference"
    ] = "uniform"
    """`reference`: the task's torch reference draws the values itself from the case seed
    (KernelBench's `get_inputs()`, a model's parameter initialisation)."""
    low: float = -1.0
    high: float = 1.0
    mean: float = 0.0
    std: float = 1.0
    value: float = 0.0
    """For `constant`."""

    @model_validator(mode="after")
    def _range_ok(self) -> ValueDistribution:
        if self.kind in ("uniform", "randint", "edge") and not self.low <= self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")
        if self.kind == "normal" and self.std < 0:
            raise ValueError("std must be non-negative")
        return self


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
        for k, n in v.items():
            if n < 0:
                raise ValueError(f"size {k}={n} is negative")
        return v


class Tolerance(Contract):
    """How an output is compared with the reference.

    - `allclose`: |out - ref| <= atol + rtol * |ref| elementwise (NumPy's rule).
    - `exact`: bitwise-equal values (the default for integer outputs).
    - `max_abs`: max |out - ref| <= max_abs.
    """

    mode: Literal["allclose", "exact", "max_abs"] = "allclose"
    atol: float = Field(default=1e-5, ge=0)
    rtol: float = Field(default=1e-4, ge=0)
    max_abs: float = Field(default=1e-4, ge=0)
