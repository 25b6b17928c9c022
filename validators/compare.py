"""Compare a program's output files with reference outputs; every failure has a precise reason."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np

from schemas import OutputCheck, TensorSpec, Tolerance

from .cases import DATA_DIR, little_endian


def read_output(root: Path, spec: TensorSpec, sizes: dict[str, int]) -> tuple[np.ndarray | None, str]:
    """The array in `root/data/<name>.bin`, or None and the reason it cannot be read as `spec`.

    Reached without following any link below `root` (a program may plant one at the file or
    at `data/` itself), only a regular file, and never more than the bytes `spec` calls for."""
    from .safe_fs import UnsafePath, read_regular, stat_beneath

    shape = spec.resolve_shape(sizes)
    dtype = little_endian(spec.dtype)
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    want = n * dtype.itemsize
    rel = f"{DATA_DIR}/{spec.name}.bin"
    where = stat_beneath(Path(root), DATA_DIR)
    if where is not None and not stat.S_ISDIR(where.st_mode):
        return None, f"{DATA_DIR}/ is not a directory (a symbolic link?)"
    st = stat_beneath(Path(root), rel)
    if st is None:
        return None, f"missing output file {rel}"
    if stat.S_ISLNK(st.st_mode):  # never follow a link the program planted
        return None, f"output {rel} is a symbolic link, not a file"
    if not stat.S_ISREG(st.st_mode):
        return None, f"output {rel} is not a regular file"
    got = st.st_size
    if got < want:
        return None, (f"short output {rel}: {got} bytes, expected {want} "
                      f"({n} x {spec.dtype}{list(shape)})")
    if got > want:
        return None, (f"oversized output {rel}: {got} bytes, expected {want} "
                      f"({n} x {spec.dtype}{list(shape)})")
    try:
        data = read_regular(Path(root), rel, want)
    except (UnsafePath, OSError) as exc:
        return None, f"output {rel} unreadable: {exc}"
    if len(data) != want:
        return None, f"output {rel} changed while being read"
    return np.frombuffer(data, dtype=dtype).reshape(shape).copy(), ""


READ_LIMIT = 1 << 31


def read_no_follow(path: Path, root: Path | None = None, max_bytes: int = READ_LIMIT) -> bytes:
    """The bytes of a regular file; symbolic links, FIFOs and devices raise OSError (a program
    could plant any of them where its output or an input should be). With `root`, no component
    of the path below it may be a link either. At most `max_bytes`."""
    from .safe_fs import read_regular

    path = Path(path)
    if root is None:
        root, rel = path.parent, path.name
    else:
        rel = str(path.relative_to(root))
    return read_regular(Path(root), rel, max_bytes)


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


def compare_output(root: Path, spec: TensorSpec, sizes: dict[str, int], ref: np.ndarray,
                   tol: Tolerance) -> tuple[OutputCheck, np.ndarray | None]:
    """Read `root/data/<name>.bin` and compare it; returns the check and the array (None if
    unreadable)."""
    out, why = read_output(root, spec, sizes)
    if out is None:
        return OutputCheck(name=spec.name, ok=False, reason=why), None
    return compare_arrays(spec.name, out, ref.reshape(out.shape), tol), out
