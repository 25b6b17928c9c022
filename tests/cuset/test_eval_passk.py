"""The unbiased pass@k estimator against values computed by hand from 1 - C(n-c,k)/C(n,k)."""

from __future__ import annotations

import pytest

from cuset.eval.passk import mean_pass_at_k, pass_at_k


@pytest.mark.parametrize(("n", "c", "k", "expected"), [
    (1, 0, 1, 0.0),            # n = k, c = 0
    (1, 1, 1, 1.0),            # n = k, c = n
    (3, 0, 3, 0.0),            # n = k, c = 0
    (3, 1, 3, 1.0),            # n = k, one correct: any draw of all three holds it
    (3, 3, 1, 1.0),            # c = n
    (3, 1, 1, 1 / 3),          # pass@1 is c/n
    (3, 2, 1, 2 / 3),
    (5, 2, 2, 1 - 3 / 10),     # C(3,2)=3, C(5,2)=10
    (10, 3, 5, 1 - 21 / 252),  # C(7,5)=21, C(10,5)=252
    (4, 1, 2, 1 - 3 / 6),      # C(3,2)=3, C(4,2)=6
    (200, 0, 100, 0.0),
])
def test_hand_values(n, c, k, expected):
    assert pass_at_k(n, c, k) == pytest.approx(expected, abs=1e-12)


def test_large_n_stays_finite_and_exact():
    # 1 - C(1000, 10) / C(1010, 10) with exact integers, which the product form must match.
    from math import comb

    assert pass_at_k(1010, 10, 10) == pytest.approx(1 - comb(1000, 10) / comb(1010, 10), rel=1e-12)


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 4), (3, 4, 1), (3, -1, 1), (0, 0, 1), (3, 1, 0)])
def test_out_of_range_is_refused(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)


def test_mean_over_tasks_keyed_by_k_string():
    got = mean_pass_at_k([(3, 3), (3, 1), (3, 0), (3, 0)], [1, 3])
    assert got == pytest.approx({"1": (1 + 1 / 3) / 4, "3": 2 / 4})
    assert list(got) == ["1", "3"]
    assert mean_pass_at_k([], [1]) == {"1": 0.0}
