"""Comparing an answer's output tensor with the reference's, with a tolerance per dtype."""

from __future__ import annotations

import numpy as np
import torch

from schemas import OutputCheck, Tolerance
from validators.compare import compare_arrays

DEFAULT_TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-2, 1e-2),   # KernelBench's own atol = rtol for float32
    "float16": (5e-2, 5e-2),   # 10-11 significant bits: 1e-2 is a few ulps of a sum
    "bfloat16": (5e-2, 5e-2),  # 8 significant bits
    "float64": (1e-6, 1e-6),
}
"""(atol, rtol) per float dtype; integer and boolean outputs compare exactly."""


def tolerance_for(dtype: torch.dtype, atol: float | None = None, rtol: float | None = None
                  ) -> Tolerance:
    """`atol`/`rtol` (the caller's, e.g. `--atol`) replace the default of every float dtype."""
    if not dtype.is_floating_point:
        return Tolerance(mode="exact")
    a, r = DEFAULT_TOLERANCES.get(str(dtype).replace("torch.", ""), DEFAULT_TOLERANCES["float32"])
    return Tolerance(mode="allclose", atol=a if atol is None else atol,
                     rtol=r if rtol is None else rtol)


def as_numpy(t: torch.Tensor) -> np.ndarray:
    if t.dtype in (torch.bfloat16, torch.float16):
        return t.to(torch.float32).numpy()
    return t.numpy()


def compare_tensor(name: str, out: torch.Tensor, ref: torch.Tensor, tol: Tolerance) -> OutputCheck:
    """NaN or Inf only where the reference has them (`validators.compare.compare_arrays`)."""
    return compare_arrays(name, as_numpy(out), as_numpy(ref), tol)


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Bit-equal, NaN included (an input after forward against the one given)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.numel() == 0:
        return True
    return bool(torch.equal(a.reshape(-1).view(torch.uint8), b.reshape(-1).view(torch.uint8)))
