"""The two figures: confidence densities by token kind, and one sample's window means."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from .stats import KSResult


def _pyplot():
    import matplotlib

    # headless: the analysis runs on servers and in CI
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def safe_name(sample_id: str) -> str:
    """A file-name-safe form of a sample id (ids may hold '/' or spaces)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", sample_id).strip("_") or "sample"


def plot_densities(
    sensitive: np.ndarray, neutral: np.ndarray, ks: KSResult, path: Path, *, bins: int = 50
) -> Path:
    """Histogram densities on [0, 1]: confidences pile up near 1, where a kernel density estimate
    would leak mass past the boundary."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    edges = np.linspace(0.0, 1.0, bins + 1)
    for values, label, color in (
        (neutral, f"CUDA-neutral (n={len(neutral)}, mean={np.mean(neutral):.3f})", "tab:blue"),
        (sensitive, f"CUDA-sensitive (n={len(sensitive)}, mean={np.mean(sensitive):.3f})", "tab:red"),
    ):
        ax.hist(values, bins=edges, density=True, histtype="stepfilled", alpha=0.3, color=color)
        ax.hist(values, bins=edges, density=True, histtype="step", color=color, label=label)
    ax.set_xlabel("token confidence p(y_t | x, y_<t)")
    ax.set_ylabel("density")
    ax.set_title(f"Kolmogorov-Smirnov D = {ks.statistic:.4f}, p = {ks.pvalue:.3g}")
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_windows(
    sample_id: str, confidence: np.ndarray, sensitive: np.ndarray, means: np.ndarray,
    low: np.ndarray, threshold: float, window: int, path: Path,
) -> Path:
    """Window means at each window's centre, over the token confidences; sensitive tokens
    shaded, low windows red."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 4.4))
    n = len(confidence)
    ax.plot(np.arange(n), confidence, ".", ms=2, color="0.7", label="token confidence")
    for start, end in _runs(sensitive):
        ax.axvspan(start - 0.5, end - 0.5, color="tab:orange", alpha=0.15, lw=0)
    x = np.arange(len(means)) + (min(window, n) - 1) / 2
    ax.plot(x, means, color="tab:blue", lw=1.2, label=f"window mean (w={min(window, n)})")
    ax.scatter(x[low], means[low], s=6, color="tab:red", zorder=3,
               label=f"low-confidence window ({int(low.sum())})")
    ax.axhline(threshold, color="k", ls="--", lw=0.8, label=f"threshold {threshold:.3f}")
    ax.fill_between([], [], color="tab:orange", alpha=0.15, label="CUDA-sensitive tokens")
    ax.set_xlim(-1, max(n, 1))
    ax.set_ylim(0, 1.02)
    ax.set_xlabel("response token (window means at the window centre)")
    ax.set_ylabel("confidence")
    ax.set_title(sample_id)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.16), fontsize=7, ncol=5, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def _runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of each run of True."""
    m = np.concatenate([[False], np.asarray(mask, dtype=bool), [False]])
    d = np.flatnonzero(m[1:] != m[:-1])
    return list(zip(d[::2].tolist(), d[1::2].tolist(), strict=True))
