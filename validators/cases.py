"""Materialise a task's input cases: deterministic arrays written as `data/<name>.bin`.

The generation rules are the team's agreement (COMMON.md): each input draws from
`numpy.random.default_rng([case.seed, crc32(input name)])`, so one input's values do not
change when another input is added, and the same case always yields the same bytes. What each
distribution kind draws on each dtype is `schemas.ValueDistribution`'s docstring.

Errors: `CaseError` (a ValueError) is the one error generation raises for a task it cannot
draw: a distribution the dtype or the element count rules out (`ValueDistribution.problem`),
or a `reference` distribution without a torch reference. `schemas.Task` refuses all of these
when it is built, so only a task assembled without validation (`model_copy`) reaches it.
Sizes beyond the validator's caps are `validators.caps.CapExceeded`, checked before this runs.
"""

from __future__ import annotations

import hashlib
import math
import zlib
from pathlib import Path

import numpy as np

from schemas import FLOAT_DTYPES, InputCase, Task, TensorSpec, ValueDistribution

DATA_DIR = "data"

DEFAULT_INT_DISTRIBUTION = ValueDistribution(kind="randint", low=0, high=100)


class CaseError(ValueError):
    """A case's input cannot be drawn; the message names the input, its dtype and the reason."""


def little_endian(dtype: str) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


def default_distribution(spec: TensorSpec) -> ValueDistribution:
    return ValueDistribution() if spec.dtype in FLOAT_DTYPES else DEFAULT_INT_DISTRIBUTION


def rng_for(case: InputCase, input_name: str) -> np.random.Generator:
    return np.random.default_rng([case.seed, zlib.crc32(input_name.encode())])


def _int_bounds(dtype: np.dtype, low: float, high: float) -> tuple[int, int]:
    """[low, high] clipped to the integers the dtype holds; a float dtype holds the integers
    it represents exactly. `ValueDistribution.problem` refuses an empty range first."""
    if dtype.kind == "f":
        exact = 2 ** (np.finfo(dtype).nmant + 1)
        tmin, tmax = -exact, exact
    else:
        info = np.iinfo(dtype)
        tmin, tmax = int(info.min), int(info.max)
    return max(math.ceil(low), tmin), min(math.floor(high), tmax)


def _ints(rng: np.random.Generator, dtype: np.dtype, low: float, high: float, n: int) -> np.ndarray:
    lo, hi = _int_bounds(dtype, low, high)
    if dtype.kind == "f":
        return rng.integers(lo, hi, size=n, endpoint=True, dtype=np.int64).astype(dtype)
    return rng.integers(lo, hi, size=n, endpoint=True, dtype=dtype)


def _float_bounds(dtype: np.dtype, low: float, high: float) -> tuple[float, float]:
    top = float(np.finfo(dtype).max)
    return min(max(low, -top), top), min(max(high, -top), top)


def _uniform(rng: np.random.Generator, dtype: np.dtype, low: float, high: float,
             n: int) -> np.ndarray:
    lo, hi = _float_bounds(dtype, low, high)
    if math.isfinite(hi - lo):
        return rng.uniform(lo, hi, n)
    # A span wider than float64 holds (float64 bounds near its largest value): mix the ends
    # instead of scaling the span, which would overflow.
    u = rng.random(n)
    return lo * (1 - u) + hi * u


def _edge_values(dtype: np.dtype, low: float, high: float) -> np.ndarray:
    if dtype.kind == "f":
        lo, hi = _float_bounds(dtype, low, high)
        vals: list[float] = [lo, hi]
        if lo <= 0 <= hi:
            vals += [0.0, -0.0]
        tiny = float(np.finfo(dtype).tiny)
        for v in (tiny, 1e-30):
            if lo <= v <= hi and v >= tiny:
                vals.append(v)
        return np.array(vals, dtype=np.float64)
    ilo, ihi = _int_bounds(dtype, low, high)
    # The dtype itself holds the table: uint64 values do not fit int64.
    return np.array(sorted({ilo, ihi, *([0] if ilo <= 0 <= ihi else [])}), dtype=dtype)


def _clip_to(flat: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Float draws (normal) clipped into the dtype before the cast, which would overflow."""
    if dtype.kind == "f":
        top = float(np.finfo(dtype).max)
        return np.clip(flat, -top, top)
    info = np.iinfo(dtype)
    # The largest value as float64 can round past it (2**63 for int64): clip to the nearest
    # float64 inside, so that the cast is exact (the smallest, -2**(bits-1) or 0, is exact).
    lo, hi = float(info.min), float(info.max)
    if int(hi) > info.max:
        hi = float(np.nextafter(hi, 0.0))
    return np.clip(flat, lo, hi)


def generate(spec: TensorSpec, dist: ValueDistribution | None, case: InputCase,
             sizes: dict[str, int]) -> np.ndarray:
    """The values of one input for one case, shaped and typed as `spec` says. Raises CaseError
    for a distribution the dtype or the element count rules out."""
    dist = dist or default_distribution(spec)
    dtype = little_endian(spec.dtype)
    shape = spec.resolve_shape(sizes)
    n = math.prod(shape)
    if dist.kind == "reference":
        raise CaseError(f"input {spec.name!r}: the 'reference' distribution is drawn by the "
                        "torch reference, not generated here")
    why = dist.problem(spec.dtype, n)
    if why:
        raise CaseError(f"input {spec.name!r} ({spec.dtype}): {why}")
    rng = rng_for(case, spec.name)
    is_float = dtype.kind == "f"
    kind = dist.kind
    if kind in ("randint", "uniform") and (kind == "randint" or not is_float):
        flat = _ints(rng, dtype, dist.low, dist.high, n)
    elif kind == "uniform":
        flat = _uniform(rng, dtype, dist.low, dist.high, n)
    elif kind == "normal":
        flat = rng.normal(dist.mean, dist.std, n)
        flat = _clip_to(flat if is_float else np.rint(flat), dtype)
    elif kind == "constant":
        flat = np.full(n, int(dist.value) if not is_float else dist.value, dtype=dtype)
    elif kind == "arange":
        flat = np.arange(n)
    elif kind == "permutation":
        flat = rng.permutation(n)
    elif kind == "edge":
        options = _edge_values(dtype, dist.low, dist.high)
        pick = rng.integers(0, len(options) + 1, size=n)
        draws = (_uniform(rng, dtype, dist.low, dist.high, n) if is_float
                 else _ints(rng, dtype, dist.low, dist.high, n))
        flat = np.where(pick < len(options), options[np.minimum(pick, len(options) - 1)], draws)
    else:  # pragma: no cover - the schema restricts kinds
        raise CaseError(f"input {spec.name!r}: unknown distribution kind {kind!r}")
    return np.asarray(flat).astype(dtype).reshape(shape)


def drawn_by_reference(task: Task, case: InputCase) -> set[str]:
    """Inputs of `case` whose values the task's torch reference draws itself (distribution
    kind `reference`); `materialize` leaves them out."""
    return {name for name, d in case.distributions.items() if d.kind == "reference"}


def materialize(task: Task, case: InputCase) -> dict[str, np.ndarray]:
    """Every input of `case`, by name, except those the reference draws (`drawn_by_reference`;
    `validators.reference.ReferenceRunner.case_data` gives those)."""
    drawn = drawn_by_reference(task, case)
    if drawn and task.reference.language != "torch":
        raise CaseError(
            f"case {case.name!r}: inputs {sorted(drawn)} use the 'reference' distribution, which "
            f"only a torch reference can draw (this task's reference is "
            f"{task.reference.language})")
    sizes = task.case_sizes(case)
    return {
        spec.name: generate(spec, case.distributions.get(spec.name), case, sizes)
        for spec in task.inputs if spec.name not in drawn
    }


def write_arrays(arrays: dict[str, np.ndarray], workdir: Path) -> dict[str, Path]:
    """Write each array as raw little-endian `workdir/data/<name>.bin`."""
    data = Path(workdir) / DATA_DIR
    data.mkdir(parents=True, exist_ok=True)
    out = {}
    for name, arr in arrays.items():
        path = data / f"{name}.bin"
        path.write_bytes(np.ascontiguousarray(arr).tobytes())
        out[name] = path
    return out


def write_case(task: Task, case: InputCase, workdir: Path) -> dict[str, np.ndarray]:
    """Materialise `case` into `workdir/data/`; return the arrays written."""
    arrays = materialize(task, case)
    write_arrays(arrays, workdir)
    return arrays


def arrays_digest(arrays: dict[str, np.ndarray]) -> str:
    """A content hash of named arrays (names, dtypes, shapes and bytes)."""
    h = hashlib.sha256()
    for name in sorted(arrays):
        a = np.ascontiguousarray(arrays[name])
        h.update(f"{name}|{a.dtype.str}|{a.shape}|".encode())
        h.update(a.tobytes())
    return h.hexdigest()
