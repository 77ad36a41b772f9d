"""An evaluator with a known score surface and controllable noise, for testing the climber."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from tuner.evaluation import Evaluation, RunSample, Unsupported
from tuner.knobs import OperatingPoint
from tuner.spec import TuningLoad


class SyntheticEvaluator:
    """Completions form a Poisson stream at the surface's rate, so goodput's noise is ~ 1/sqrt(n)."""

    def __init__(
        self,
        rate: Callable[[OperatingPoint], float],
        *,
        source: str = "live",
        latency_s: Callable[[OperatingPoint], float] = lambda p: 0.1,
        restart_s: float = 0.0,
        unsupported: Callable[[OperatingPoint], str | None] = lambda p: None,
        noise: bool = True,
    ):
        self.rate, self.source, self.latency_s = rate, source, latency_s
        self.restart_s, self.unsupported, self.noise = restart_s, unsupported, noise
        self.calls: list[OperatingPoint] = []
        self._server: tuple | None = None

    def evaluate(self, point: OperatingPoint, workload: TuningLoad, *, repeats: int, seed: int) -> Evaluation:
        self.calls.append(point)
        restart = self._server != point.server_key()
        why = self.unsupported(point)
        if why is not None:
            return Evaluation(point=point, source=self.source, unsupported=Unsupported(
                knob="spec_k", value=point.spec_k, reason=why), restart_s=self.restart_s)  # fmt: skip
        self._server = point.server_key()
        rng = np.random.default_rng(seed)
        runs = [self._run(point, workload.num_requests, rng) for _ in range(repeats)]
        return Evaluation(
            point=point, source=self.source, runs=runs,
            restart_s=self.restart_s if restart else 0.0, run_s=sum(r.duration_s for r in runs),
        )  # fmt: skip

    def _run(self, point: OperatingPoint, n: int, rng) -> RunSample:
        g = self.rate(point)
        gaps = rng.exponential(1.0 / g, size=n) if self.noise else np.full(n, 1.0 / g)
        done = np.cumsum(gaps)
        lat = np.full(n, self.latency_s(point))
        return RunSample.from_seconds(
            duration_s=float(done[-1]), ttft_s=(lat / 2).tolist(), e2el_s=lat.tolist(),
            output_tokens=[16] * n, sent_s=(done - lat).tolist(),
        )  # fmt: skip
