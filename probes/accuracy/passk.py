"""pass@k with the unbiased estimator of Chen et al. (2021), averaged over tasks."""

from __future__ import annotations

import numpy as np

ESTIMATOR = "unbiased pass@k = mean over tasks of 1 - C(n-c, k)/C(n, k) (Chen et al. 2021)"
_KS = (1, 2, 5, 10, 20, 50, 100)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Probability that at least one of k draws (without replacement) from n samples, c correct, passes."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n} c={c} k={k}")
    if n - c < k:
        return 1.0
    return float(1.0 - np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))


def pass_at_ks(counts: list[tuple[int, int]]) -> dict[str, float]:
    """{'pass@k': value} for each standard k no larger than the smallest n; `counts` is (n, c) per task."""
    if not counts:
        return {}
    n_min = min(n for n, _ in counts)
    return {f"pass@{k}": float(np.mean([pass_at_k(n, c, k) for n, c in counts])) for k in _KS if k <= n_min}
