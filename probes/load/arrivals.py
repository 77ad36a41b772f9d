"""Open-loop arrival schedules, as absolute offsets from the run's start (never chained sleeps)."""

from __future__ import annotations

import math

import numpy as np


def arrival_offsets(
    n: int, rate: float, burstiness: float = 1.0, seed: int = 0, *, rng: np.random.Generator | None = None
) -> np.ndarray:
    """Send times (s) of `n` requests: gaps ~ gamma(shape=burstiness, scale=1/(rate*burstiness)),
    vLLM's meaning (burstiness 1 = Poisson, < 1 burstier, inf = constant). The first is sent at 0.

    The one arrival process: the load probe and the tuner's simulator both draw from it. `rng`, if
    given, is drawn from instead of a generator seeded with `seed` (the simulator goes on drawing its
    step jitter from the same stream); the draws are the same as from `default_rng(seed)`."""
    if n <= 0:
        return np.zeros(0)
    if math.isinf(burstiness):
        gaps = np.full(n - 1, 1.0 / rate)
    else:
        rng = rng if rng is not None else np.random.default_rng(seed)
        gaps = rng.gamma(shape=burstiness, scale=1.0 / (rate * burstiness), size=n - 1)
    return np.concatenate(([0.0], np.cumsum(gaps)))
