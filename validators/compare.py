"""Compare a program's output files with reference outputs; every failure has a precise reason."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import numpy as np

from schemas import OutputCheck, TensorSpec, Tolerance

from .cases import DATA_DIR, little_endian


def read_output(path: Path, spec: TensorSpec, sizes: dict[str, int]) -> tuple[np.ndarray | None, str]:
    """The array in `path`, or None and the reason it cannot be read as `spec`."""
    shape = spec.resolve_shape(sizes)
    dtype = little_endian(spec.dtype)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    want = n * dtype.itemsize
    rel = f"{DATA_DIR}/{spec.name}.bin"
    if path.is_symlink():  # never follow a link the program planted (it may point anywhere)
        return None, f"output {rel} is a symbolic link, not a file"
    if not path.is_file():
        return None, f"missing output file {rel}"
    got = path.stat().st_size
    if got < want:
        return None, (f"short output {rel}: {got} bytes, expected {want} "
                      f"({n} x {spec.dtype}{list(shape)})")
    if got > want:
        return None, (f"oversized output {rel}: {got} bytes, expected {want} "
                      f"({n} x {spec.dtype}{list(shape)})")
    return np.frombuffer(read_no_follow(path), dtype=dtype).reshape(shape).copy(), ""


def read_no_follow(path: Path) -> bytes:
    """The bytes of a regular file; symbolic links, FIFOs and devices raise OSError (a program
    could plant any of them where its output or an input should be)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _fmt(v: float) -> str:
    return np.format_float_positional(v, precision=8, trim="-") if np.isfinite(v) else str(v)


def compare_arrays(name: str, out: np.ndarray, ref: np.ndarray, tol: Tolerance) -> OutputCheck:
    """Elementwise comparison of `out` with `ref` under `tol` (same shape assumed)."""
    o = out.ravel()
    r = ref.ravel()
    n = int(r.size)
    is_float = o.dtype.kind == "f" or r.dtype.kind == "f"
    of = o.astype(np.float64)
    rf = r.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(of - rf)
        rel = diff / np.maximum(np.abs(rf), np.finfo(np.float64).tiny)
    both_nan = np.isnan(of) & np.isnan(rf)
    same_inf = np.isinf(of) & np.isinf(rf) & (np.sign(of) == np.sign(rf))
    agree = both_nan | same_inf
    diff = np.where(agree, 0.0, diff)
    rel = np.where(agree, 0.0, rel)
    finite = np.isfinite(diff)
    max_abs = float(diff.max()) if n and finite.all() else (float("inf") if n else 0.0)
    max_rel = float(rel.max()) if n and np.isfinite(rel).all() else (float("inf") if n else 0.0)
    check = dict(name=name, elements=n, max_abs_error=max_abs, max_rel_error=max_rel)

    if is_float:
        bad_nan = np.isnan(of) & ~np.isnan(rf)
        bad_inf = np.isinf(of) & ~np.isinf(rf)
        for mask, what in ((bad_nan, "NaN"), (bad_inf, "Inf")):
            if mask.any():
                idx = int(np.argmax(mask))
                return OutputCheck(
                    **check, ok=False, mismatches=int(mask.sum()), first_mismatch_index=idx,
                    reason=(f"output {name}: {int(mask.sum())} {what} value(s) where the reference "
                            f"has none; first at index {idx} (expected {_fmt(rf[idx])})"),
                )

    if tol.mode == "exact":
        if o.dtype.kind == "f":
            bad = ~((o == r) | both_nan)
        else:
            bad = o != r
        rule = "exact"
    elif tol.mode == "allclose":
        with np.errstate(invalid="ignore"):
            bad = ~((diff <= tol.atol + tol.rtol * np.abs(rf)) | agree)
        rule = f"allclose atol={tol.atol:g} rtol={tol.rtol:g}"
    else:
        with np.errstate(invalid="ignore"):
            bad = ~((diff <= tol.max_abs) | agree)
        rule = f"max_abs {tol.max_abs:g}"
    if tol.mode != "exact":
        bad = bad | (~np.isfinite(diff) & ~agree)  # inf <= atol + rtol * inf must not pass
    count = int(bad.sum())
    if count == 0:
        return OutputCheck(**check, ok=True, mismatches=0)
    idx = int(np.argmax(bad))
    return OutputCheck(
        **check, ok=False, mismatches=count, first_mismatch_index=idx,
        reason=(f"output {name}: {count} of {n} elements differ ({rule}); first at index {idx}: "
                f"got {_fmt(of[idx])}, expected {_fmt(rf[idx])}; max abs error {_fmt(max_abs)}"),
    )


def compare_output(path: Path, spec: TensorSpec, sizes: dict[str, int], ref: np.ndarray,
                   tol: Tolerance) -> tuple[OutputCheck, np.ndarray | None]:
    """Read the output file and compare it; returns the check and the array (None if unreadable)."""
    out, why = read_output(path, spec, sizes)
    if out is None:
        return OutputCheck(name=spec.name, ok=False, reason=why), None
    return compare_arrays(spec.name, out, ref.reshape(out.shape), tol), out
