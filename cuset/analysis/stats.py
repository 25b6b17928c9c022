"""The statistics of the token-confidence analysis, as pure functions of arrays.

Definitions (the ones `analysis.json` reports):

- a window is `window` consecutive response tokens, stride 1, so a response of n >= window
  tokens has n - window + 1 windows; a response shorter than the window has exactly one window,
  the whole response (dropping it would silently leave short answers out of every share);
- a window is low-confidence when its mean confidence is strictly below the threshold (the
  mean confidence of all CUDA-neutral tokens of the dataset, pooled over tokens);
- a window overlaps the CUDA-sensitive spans when at least one of its tokens is CUDA-sensitive;
- the overlap share pools the low-confidence windows of all samples (each window position
  counts once), matching a count over "those windows" rather than a mean of per-sample shares.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


def _windowed_sums(x: NDArray[np.float64], window: int) -> NDArray[np.float64]:
    if window < 1:
        raise ValueError(f"window must be at least 1, got {window}")
    n = len(x)
    if n == 0:
        return np.zeros(0)
    w = min(window, n)
    c = np.concatenate([[0.0], np.cumsum(x, dtype=np.float64)])
    return c[w:] - c[:-w]


def window_means(conf: ArrayLike, window: int) -> NDArray[np.float64]:
    """Mean of every `window` consecutive values (stride 1); one mean of all values when there
    are fewer than `window`; empty for an empty input."""
    x = np.asarray(conf, dtype=np.float64)
    n = len(x)
    return _windowed_sums(x, window) / max(1, min(window, n))


def window_overlaps(sensitive: ArrayLike, window: int) -> NDArray[np.bool_]:
    """Whether each window (as in `window_means`) holds at least one sensitive token."""
    m = np.asarray(sensitive, dtype=np.float64)
    return _windowed_sums(m, window) > 0.5


def low_windows(means: ArrayLike, threshold: float) -> NDArray[np.bool_]:
    """Windows whose mean confidence is strictly below `threshold`."""
    return np.asarray(means, dtype=np.float64) < threshold


@dataclass
class WindowShares:
    n_samples: int
    samples_with_low_window: int
    n_low_windows: int
    low_windows_overlapping: int

    @property
    def sample_share(self) -> float:
        """Share of samples with at least one low-confidence window."""
        return self.samples_with_low_window / self.n_samples if self.n_samples else float("nan")

    @property
    def overlap_share(self) -> float:
        """Share of low-confidence windows (pooled) that overlap a CUDA-sensitive token."""
        return self.low_windows_overlapping / self.n_low_windows if self.n_low_windows else float("nan")


def window_shares(
    samples: Sequence[tuple[ArrayLike, ArrayLike]], window: int, threshold: float
) -> WindowShares:
    """The two shares over `samples` of `(confidences, sensitive mask)` of equal lengths."""
    with_low = n_low = overlapping = 0
    for conf, mask in samples:
        if len(conf) != len(mask):
            raise ValueError(f"confidences ({len(conf)}) and mask ({len(mask)}) differ in length")
        low = low_windows(window_means(conf, window), threshold)
        over = window_overlaps(mask, window)
        k = int(low.sum())
        with_low += k > 0
        n_low += k
        overlapping += int((low & over).sum())
    return WindowShares(len(samples), with_low, n_low, overlapping)


@dataclass
class KSResult:
    statistic: float
    pvalue: float
    n_a: int
    n_b: int


def ks_statistic(a: ArrayLike, b: ArrayLike) -> float:
    """sup_x |F_a(x) - F_b(x)| of the two empirical distribution functions (ties handled by
    evaluating both right-continuous CDFs at every observed value)."""
    x = np.sort(np.asarray(a, dtype=np.float64))
    y = np.sort(np.asarray(b, dtype=np.float64))
    if not len(x) or not len(y):
        raise ValueError("the KS statistic needs two non-empty samples")
    at = np.concatenate([x, y])
    fa = np.searchsorted(x, at, side="right") / len(x)
    fb = np.searchsorted(y, at, side="right") / len(y)
    return float(np.max(np.abs(fa - fb)))


def ks(a: ArrayLike, b: ArrayLike) -> KSResult:
    """Two-sample Kolmogorov-Smirnov test (two-sided): our statistic, scipy's p-value."""
    from scipy.stats import ks_2samp

    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    d = ks_statistic(a, b)
    res = ks_2samp(a, b, alternative="two-sided", method="auto")
    return KSResult(d, float(res.pvalue), len(a), len(b))
