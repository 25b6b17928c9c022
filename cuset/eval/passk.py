"""The unbiased pass@k estimator of Chen et al. 2021 ("Evaluating Large Language Models Trained
on Code"): with n samples of which c are correct, pass@k = 1 - C(n-c, k) / C(n, k).

The ratio of binomials is computed as the product prod_{i=n-c+1}^{n} (1 - k/i), which never forms
a large binomial (exact integers would be fine in Python, but the product is what the paper gives
and it stays in floating point without overflow for any n).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k for one task with `n` samples, `c` of them correct; needs 0 <= c <= n, 1 <= k <= n."""
    if n < 1 or not 0 <= c <= n:
        raise ValueError(f"need n >= 1 and 0 <= c <= n (got n={n}, c={c})")
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n (got k={k}, n={n})")
    if n - c < k:
        return 1.0  # every draw of k samples contains a correct one
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def mean_pass_at_k(counts: Iterable[tuple[int, int]], ks: Sequence[int]) -> dict[str, float]:
    """The per-task estimates averaged over tasks, keyed by k as a string (summary.json's form).
    `counts` holds (n, c) per task; an empty benchmark gives 0.0 for every k."""
    counts = list(counts)
    out: dict[str, float] = {}
    for k in ks:
        vals = [pass_at_k(n, c, k) for n, c in counts]
        out[str(k)] = sum(vals) / len(vals) if vals else 0.0
    return out
