"""Materialise a task's input cases: deterministic arrays written as `data/<name>.bin`.

The generation rules are the team's agreement (COMMON.md): each input draws from
`numpy.random.default_rng([case.seed, crc32(input name)])`, so one input's values do not
change when another input is added, and the same case always yields the same bytes.
"""

from __future__ import annotations

import hashlib
import zlib
from pathlib import Path

import numpy as np

from schemas import FLOAT_DTYPES, InputCase, Task, TensorSpec, ValueDistribution

DATA_DIR = "data"

DEFAULT_INT_DISTRIBUTION = ValueDistribution(kind="randint", low=0, high=100)


def little_endian(dtype: str) -> np.dtype:
    return np.dtype(dtype).newbyteorder("<")


def default_distribution(spec: TensorSpec) -> ValueDistribution:
    return ValueDistribution() if spec.dtype in FLOAT_DTYPES else DEFAULT_INT_DISTRIBUTION


def rng_for(case: InputCase, input_name: str) -> np.random.Generator:
    return np.random.default_rng([case.seed, zlib.crc32(input_name.encode())])


def _int_bounds(dtype: np.dtype, low: float, high: float) -> tuple[int, int]:
    info = np.iinfo(dtype)
    lo = max(int(np.ceil(low)), int(info.min))
    hi = min(int(np.floor(high)), int(info.max))
    if lo > hi:
        raise ValueError(f"range [{low}, {high}] holds no {dtype.name} value")
    return lo, hi


def _ints(rng: np.random.Generator, dtype: np.dtype, low: float, high: float, n: int) -> np.ndarray:
    lo, hi = _int_bounds(dtype, low, high)
    return rng.integers(lo, hi, size=n, endpoint=True, dtype=dtype)


def _edge_values(dtype: np.dtype, low: float, high: float) -> list[float]:
    vals: list[float] = [low, high]
    if low <= 0 <= high:
        vals.append(0.0)
    if dtype.kind == "f":
        if low <= 0 <= high:
            vals.append(-0.0)
        tiny = float(np.finfo(dtype).tiny)
        for v in (tiny, 1e-30):
            if low <= v <= high and v >= tiny:
                vals.append(v)
    else:
        lo, hi = _int_bounds(dtype, low, high)
        vals = sorted({lo, hi, *([0] if lo <= 0 <= hi else [])})
    return vals


def generate(spec: TensorSpec, dist: ValueDistribution | None, case: InputCase,
             sizes: dict[str, int]) -> np.ndarray:
    """The values of one input for one case, shaped and typed as `spec` says."""
    dist = dist or default_distribution(spec)
    dtype = little_endian(spec.dtype)
    shape = spec.resolve_shape(sizes)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    rng = rng_for(case, spec.name)
    is_float = dtype.kind == "f"
    kind = dist.kind
    if kind == "uniform":
        flat = rng.uniform(dist.low, dist.high, n) if is_float else _ints(rng, dtype, dist.low, dist.high, n)
    elif kind == "normal":
        flat = rng.normal(dist.mean, dist.std, n)
        if not is_float:
            flat = np.rint(flat)
    elif kind == "randint":
        flat = _ints(rng, dtype, dist.low, dist.high, n)
    elif kind == "constant":
        flat = np.full(n, dist.value)
    elif kind == "arange":
        flat = np.arange(n)
    elif kind == "permutation":
        flat = rng.permutation(n)
    elif kind == "edge":
        options = _edge_values(dtype, dist.low, dist.high)
        pick = rng.integers(0, len(options) + 1, size=n)
        if is_float:
            draws = rng.uniform(dist.low, dist.high, n)
        else:
            draws = _ints(rng, dtype, dist.low, dist.high, n)
        table = np.array(options, dtype=np.float64 if is_float else np.int64)
        flat = np.where(pick < len(options), table[np.minimum(pick, len(options) - 1)], draws)
    elif kind == "reference":
        raise ValueError(f"input {spec.name!r}: the 'reference' distribution is drawn by the "
                         "torch reference, not generated here")
    else:  # pragma: no cover - the schema restricts kinds
        raise ValueError(f"unknown distribution kind {kind!r}")
    if not is_float:
        info = np.iinfo(dtype)
        flat = np.clip(flat, info.min, info.max)
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
        raise ValueError(
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
