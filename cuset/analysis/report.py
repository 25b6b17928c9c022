"""From per-sample confidences to `analysis.json`, the figures and the printed summary."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import CusetError
from .confidence import SampleConfidence
from .plots import plot_densities, plot_windows, safe_name
from .stats import ks, low_windows, window_means, window_overlaps, window_shares

PAPER_QWEN3_8B = {"sample_share_with_low_window": 0.7447, "low_window_overlap_share": 0.9118}


def _mean(x: np.ndarray) -> float | None:
    return float(np.mean(x)) if len(x) else None


def _finite(x: float) -> float | None:
    return x if math.isfinite(x) else None


def analyze_samples(
    samples: Sequence[SampleConfidence], out: Path, *, window: int = 64,
    plot_ids: Sequence[str] | None = None, n_default_plots: int = 3,
) -> dict[str, Any]:
    """Every statistic of the analysis; writes `analysis.json` and the PNGs into `out`."""
    if not any(s.sensitive.any() for s in samples):
        raise CusetError(
            "no sample has a CUDA-sensitive response token (kernel_body or launch_config) "
            "within the tokenised length; nothing to compare"
        )
    sens = np.concatenate([s.confidence[s.sensitive] for s in samples])
    neut = np.concatenate([s.confidence[~s.sensitive] for s in samples])
    if not len(neut):
        raise CusetError("no sample has a CUDA-neutral response token; the threshold is undefined")
    threshold = float(np.mean(neut))
    test = ks(sens, neut)
    shares = window_shares([(s.confidence, s.sensitive) for s in samples], window, threshold)

    by_id = {s.id: s for s in samples}
    if plot_ids:
        unknown = [i for i in plot_ids if i not in by_id]
        if unknown:
            raise CusetError(f"--plot-samples: no analysed sample has the id(s) {', '.join(unknown)}")
        chosen = list(dict.fromkeys(plot_ids))
    else:
        chosen = [s.id for s in samples[:n_default_plots]]

    out.mkdir(parents=True, exist_ok=True)
    density = plot_densities(sens, neut, test, out / "confidence_density.png")
    per_sample = []
    plots: dict[str, str] = {}
    used_names: set[str] = set()
    for s in samples:
        means = window_means(s.confidence, window)
        low = low_windows(means, threshold)
        over = window_overlaps(s.sensitive, window)
        per_sample.append({
            "id": s.id,
            "n_tokens": len(s.confidence),
            "n_sensitive": int(s.sensitive.sum()),
            "mean_confidence": _mean(s.confidence),
            "mean_confidence_sensitive": _mean(s.confidence[s.sensitive]),
            "mean_confidence_neutral": _mean(s.confidence[~s.sensitive]),
            "n_windows": len(means),
            "min_window_mean": float(means.min()) if len(means) else None,
            "n_low_windows": int(low.sum()),
            "n_low_windows_overlapping_sensitive": int((low & over).sum()),
        })
        if s.id in chosen:
            name = safe_name(s.id)
            while name in used_names:  # two ids may sanitise to the same name
                name += "_"
            used_names.add(name)
            p = plot_windows(s.id, s.confidence, s.sensitive, means, low, threshold, window,
                             out / f"windows_{name}.png")
            plots[s.id] = p.name

    result: dict[str, Any] = {
        "n_samples": len(samples),
        "n_tokens": int(len(sens) + len(neut)),
        "n_tokens_sensitive": int(len(sens)),
        "n_tokens_neutral": int(len(neut)),
        "mean_confidence_sensitive": float(np.mean(sens)),
        "mean_confidence_neutral": threshold,
        "ks_statistic": test.statistic,
        "ks_pvalue": test.pvalue,
        "window": window,
        "threshold": threshold,
        "n_low_windows": shares.n_low_windows,
        "n_low_windows_overlapping_sensitive": shares.low_windows_overlapping,
        "samples_with_low_window": shares.samples_with_low_window,
        "sample_share_with_low_window": _finite(shares.sample_share),
        "low_window_overlap_share": _finite(shares.overlap_share),
        "paper_qwen3_8b": PAPER_QWEN3_8B,
        "rules": {
            "threshold": "mean confidence of all CUDA-neutral response tokens, pooled over the dataset",
            "low_window": "window mean strictly below the threshold",
            "overlap": "at least one token of the window is CUDA-sensitive",
            "overlap_share": "pooled over the low windows of all samples",
            "short_response": "fewer tokens than the window: one window over the whole response",
            "windows": "stride 1; n - window + 1 windows for a response of n tokens",
        },
        "plots": {"density": density.name, "windows": plots},
        "samples": per_sample,
    }
    (out / "analysis.json").write_text(json.dumps(result, indent=2))
    return result


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.2f}%"


def summary_table(r: dict[str, Any]) -> str:
    rows = [
        ("samples", str(r["n_samples"])),
        ("response tokens (sensitive / neutral)",
         f"{r['n_tokens']} ({r['n_tokens_sensitive']} / {r['n_tokens_neutral']})"),
        ("mean confidence, CUDA-sensitive", f"{r['mean_confidence_sensitive']:.4f}"),
        ("mean confidence, CUDA-neutral (threshold)", f"{r['mean_confidence_neutral']:.4f}"),
        ("Kolmogorov-Smirnov D (p-value)", f"{r['ks_statistic']:.4f} ({r['ks_pvalue']:.3g})"),
        (f"samples with a low window (w={r['window']})",
         f"{_pct(r['sample_share_with_low_window'])} ({r['samples_with_low_window']})"),
        ("low windows overlapping CUDA-sensitive tokens",
         f"{_pct(r['low_window_overlap_share'])} "
         f"({r['n_low_windows_overlapping_sensitive']} of {r['n_low_windows']})"),
    ]
    width = max(len(k) for k, _ in rows)
    line = "-" * (width + 3 + max(len(v) for _, v in rows))
    return "\n".join([line, *(f"{k.ljust(width)} | {v}" for k, v in rows), line])
