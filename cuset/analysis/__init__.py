"""Token-confidence analysis (`python -m cuset analyze`): how sure a model is of each response
token, CUDA-sensitive tokens (kernel bodies, launch configurations) against the rest."""

from .stats import (
    KSResult,
    WindowShares,
    ks,
    ks_statistic,
    low_windows,
    window_means,
    window_overlaps,
    window_shares,
)

__all__ = [
    "KSResult", "WindowShares", "ks", "ks_statistic", "low_windows", "window_means",
    "window_overlaps", "window_shares",
]
