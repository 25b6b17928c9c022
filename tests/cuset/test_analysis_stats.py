"""The analysis statistics on hand-made examples: window means, low windows, the two shares, KS."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from cuset.analysis import (
    ks,
    ks_statistic,
    low_windows,
    window_means,
    window_overlaps,
    window_shares,
)


def test_window_means_by_hand():
    conf = [1.0, 0.0, 1.0, 0.0, 1.0]
    np.testing.assert_allclose(window_means(conf, 2), [0.5, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(window_means(conf, 3), [2 / 3, 1 / 3, 2 / 3])
    np.testing.assert_allclose(window_means(conf, 5), [0.6])
    # shorter than the window: one window over the whole response
    np.testing.assert_allclose(window_means(conf, 64), [0.6])
    assert len(window_means([], 64)) == 0


def test_window_means_match_a_plain_loop():
    rng = np.random.default_rng(0)
    x = rng.random(300)
    expect = [x[i:i + 64].mean() for i in range(300 - 64 + 1)]
    np.testing.assert_allclose(window_means(x, 64), expect, rtol=1e-12)


def test_window_of_zero_is_refused():
    with pytest.raises(ValueError, match="window"):
        window_means([0.5], 0)


def test_overlap_and_low_windows_by_hand():
    assert window_overlaps([0, 0, 1, 0, 0], 2).tolist() == [False, True, True, False]
    assert window_overlaps([0, 1], 5).tolist() == [True]
    # strictly below: a window exactly at the threshold is not low
    assert low_windows([0.4, 0.5, 0.6], 0.5).tolist() == [True, False, False]


def test_window_shares_by_hand():
    samples = [
        # windows of 3: means .667 .433 .2 .433 -> 3 low; the sensitive token 3 is in windows 1-3
        ([0.9, 0.9, 0.2, 0.2, 0.2, 0.9], [0, 0, 0, 1, 0, 0]),
        # means .367 .633 .9 -> window 0 low; only window 2 holds the sensitive token
        ([0.1, 0.1, 0.9, 0.9, 0.9], [0, 0, 0, 0, 1]),
        # shorter than the window: one window, mean .35, low, holds a sensitive token
        ([0.3, 0.4], [1, 0]),
        # never below
        ([0.8, 0.8, 0.8, 0.8], [1, 1, 0, 0]),
    ]
    s = window_shares(samples, window=3, threshold=0.5)
    assert (s.n_samples, s.samples_with_low_window) == (4, 3)
    assert (s.n_low_windows, s.low_windows_overlapping) == (5, 4)
    assert s.sample_share == pytest.approx(0.75)
    assert s.overlap_share == pytest.approx(0.8)


def test_window_shares_without_low_windows_have_no_overlap_share():
    s = window_shares([([0.9, 0.9], [1, 0])], window=2, threshold=0.5)
    assert s.sample_share == 0.0 and np.isnan(s.overlap_share)


def test_window_shares_refuse_mismatched_lengths():
    with pytest.raises(ValueError, match="length"):
        window_shares([([0.1, 0.2], [1])], window=2, threshold=0.5)


def test_ks_statistic_by_hand():
    # F_a - F_b at 1, 2, 2.5, 3, 4: 1/3, 2/3, 1/6, 1/2, 0
    assert ks_statistic([1, 2, 3], [2.5, 4]) == pytest.approx(2 / 3)
    # a tie at 1: both CDFs jump there; at 1 they are 1 and 1/2
    assert ks_statistic([0, 1, 1], [1, 2]) == pytest.approx(1 / 2)
    assert ks_statistic([0.3, 0.3], [0.3]) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_ks_matches_scipy(seed):
    rng = np.random.default_rng(seed)
    a = rng.beta(2, 5, size=rng.integers(5, 400))
    b = rng.beta(2.5, 4, size=rng.integers(5, 400))
    if seed % 2:  # ties within and across the samples
        a, b = np.round(a, 1), np.round(b, 1)
    got = ks(a, b)
    ref = ks_2samp(a, b)
    assert got.statistic == pytest.approx(ref.statistic, abs=1e-12)
    assert got.pvalue == pytest.approx(ref.pvalue, rel=1e-9)
    assert (got.n_a, got.n_b) == (len(a), len(b))


def test_ks_separates_shifted_samples():
    rng = np.random.default_rng(1)
    r = ks(rng.normal(0, 1, 2000), rng.normal(0.5, 1, 2000))
    assert r.statistic > 0.1 and r.pvalue < 1e-6


def test_ks_needs_two_samples():
    with pytest.raises(ValueError, match="non-empty"):
        ks_statistic([], [0.5])
