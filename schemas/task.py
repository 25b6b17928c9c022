"""A task: what a program must compute, on which inputs, checked against which reference."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from .base import IDENT_RE, Contract
from .tensor import FLOAT_DTYPES, InputCase, TensorSpec, Tolerance, non_negative_sizes

CASES_PER_TASK = 5
"""The paper and DESIGN.md: every dataset task carries five input cases."""


class Reference(Contract):
    """Code that computes a task's outputs from its inputs. Untrusted: it runs only inside the
    sandbox.

    For `numpy`, `code` defines `<entrypoint>(inputs, sizes)` taking a dict of arrays (named as
    the task's inputs) and a dict of sizes, and returning a dict of arrays named as the task's
    outputs.

    For `torch`, `code` is a PyTorch module file in KernelBench's form: the class named by
    `entrypoint` (default `Model`), `get_inputs()` and `get_init_inputs()`. Module-level integer
    constants named in the task's sizes are set to each case's sizes before the code runs. The
    model is built from `get_init_inputs()`; task inputs named like a parameter or buffer of the
    model (dots as underscores, e.g. `conv_weight`) are loaded into it; the other task inputs are
    the forward arguments, in order. Inputs whose case distribution is `reference` are drawn by
    the code itself from the case seed (`get_inputs()`, the parameter initialisation) and handed
    to the program. Outputs are the forward's return value(s), in the order of `outputs`.
    """

    language: Literal["numpy", "torch"] = "numpy"
    code: str = Field(min_length=1)
    entrypoint: str = Field(default="reference", pattern=IDENT_RE)
    """For `numpy`, the function; for `torch`, the `nn.Module` class (KernelBench: `Model`)."""


class Task(Contract):
    """A level-1 style task (CUDABench convention): a description naming each input and output
    with dtype and shape, the size parameters with the defaults written in the program, the
    cases and the reference."""

    name: str = Field(pattern=IDENT_RE)
    description: str = Field(min_length=1)
    inputs: list[TensorSpec]
    """May be empty (a generator: fill, iota, random spikes) but must be given: a task that
    forgot its inputs is an error, not a generator."""
    outputs: list[TensorSpec] = Field(min_length=1)
    sizes: dict[str, int] = Field(default_factory=dict)
    """Default size parameters, as written in the program (`#ifndef N / #define N ...`)."""
    size_macros: dict[str, str] = Field(default_factory=dict)
    """Size parameter -> macro name in the program when they differ (default: same name)."""
    cases: list[InputCase] = Field(min_length=1)
    reference: Reference
    tolerance: Tolerance | None = None
    """Default tolerance for float outputs; integer outputs default to exact."""
    tolerances: dict[str, Tolerance] = Field(default_factory=dict)
    """Per-output overrides."""
    tags: list[str] = Field(default_factory=list)
    original_sizes: dict[str, int] = Field(default_factory=dict)
    """Sizes as the source wrote them, when they were scaled down to validate on a CPU."""
    scaling: str = ""
    """The rule that turned `original_sizes` into `sizes`, in words (empty: not scaled)."""

    @field_validator("sizes")
    @classmethod
    def _sizes_ok(cls, v: dict[str, int]) -> dict[str, int]:
        return non_negative_sizes(v)

    @field_validator("cases")
    @classmethod
    def _unique_cases(cls, v: list[InputCase]) -> list[InputCase]:
        names = [c.name for c in v]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"duplicate case names: {', '.join(dup)}")
        return v

    @model_validator(mode="after")
    def _consistent(self) -> Task:
        names = [t.name for t in self.inputs] + [t.name for t in self.outputs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"tensor names used twice: {', '.join(dup)}")
        known = set(self.sizes)
        for t in [*self.inputs, *self.outputs]:
            for d in t.shape:
                if isinstance(d, str) and d not in known:
                    raise ValueError(
                        f"tensor {t.name!r} uses size {d!r}, which is not in sizes {sorted(known)}"
                    )
        for c in self.cases:
            unknown = set(c.sizes) - known
            if unknown:
                raise ValueError(f"case {c.name!r} sets unknown sizes {sorted(unknown)}")
            bad = set(c.distributions) - {t.name for t in self.inputs}
            if bad:
                raise ValueError(f"case {c.name!r} has distributions for non-inputs {sorted(bad)}")
        undrawable = [why for c in self.cases for why in self._distribution_problems(c)]
        if undrawable:
            raise ValueError("; ".join(undrawable))
        outs = {t.name for t in self.outputs}
        bad = set(self.tolerances) - outs
        if bad:
            raise ValueError(f"tolerances given for unknown outputs {sorted(bad)}")
        loose = self.tolerance_problems()
        if loose:
            raise ValueError("; ".join(loose))
        unknown_macros = set(self.size_macros) - known
        if unknown_macros:
            raise ValueError(f"size_macros for unknown sizes {sorted(unknown_macros)}")
        return self

    def _distribution_problems(self, case: InputCase) -> list[str]:
        # Refused here, every one with its case and input named, so that a schema-valid task
        # always generates (validators.cases.CaseError is for what bypassed this check).
        sizes = self.case_sizes(case)
        problems = []
        for t in self.inputs:
            dist = case.distributions.get(t.name)
            if dist is None:
                continue
            if dist.kind == "reference":
                if self.reference.language != "torch":
                    problems.append(
                        f"case {case.name!r}, input {t.name!r}: the 'reference' distribution is "
                        f"drawn by a torch reference; this task's reference is "
                        f"{self.reference.language}")
                continue
            why = dist.problem(t.dtype, math.prod(t.resolve_shape(sizes)))
            if why:
                problems.append(f"case {case.name!r}, input {t.name!r} ({t.dtype}): {why}")
        return problems

    def case_sizes(self, case: InputCase) -> dict[str, int]:
        """The full size assignment of a case: the task defaults overridden by the case."""
        return {**self.sizes, **case.sizes}

    def defines_for(self, case: InputCase) -> dict[str, int]:
        """Compile-time definitions a case needs: sizes that differ from the program's."""
        out: dict[str, int] = {}
        for k, v in self.case_sizes(case).items():
            if v != self.sizes.get(k):
                out[self.size_macros.get(k, k)] = v
        return out

    def tolerance_problems(self) -> list[str]:
        """Each output whose tolerance is looser than its dtype's bound
        (`schemas.tensor.TOLERANCE_BOUNDS`), named with the dtype, the value and the bound."""
        problems = []
        for t in self.outputs:
            why = self.tolerance_for(t.name).problem(t.dtype)
            if why:
                problems.append(f"output {t.name!r} ({t.dtype}): tolerance {why}")
        return problems

    def tolerance_for(self, output: str) -> Tolerance:
        if output in self.tolerances:
            return self.tolerances[output]
        spec = next(t for t in self.outputs if t.name == output)
        if spec.dtype in FLOAT_DTYPES:
            return self.tolerance or Tolerance()
        return Tolerance(mode="exact")
