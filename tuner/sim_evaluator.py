"""The simulator behind the `Evaluator` protocol, so the tuner runs on it exactly as on a live target."""

from __future__ import annotations

from tuner.evaluation import Evaluation, RunSample, run_seed
from tuner.knobs import OperatingPoint, needs_restart
from tuner.simulator import SimParams, simulate
from tuner.spec import TuningLoad


class SimulatorEvaluator:
    """Evaluates operating points on the simulator; charges modelled run and restart time."""

    source = "simulator"

    def __init__(self, params: SimParams):
        self.params = params
        self._server: OperatingPoint | None = None
        self.events = 0

    def evaluate(self, point: OperatingPoint, workload: TuningLoad, *, repeats: int, seed: int) -> Evaluation:
        restart = needs_restart(self._server, point)
        self._server = point
        runs = []
        for r in range(repeats):
            sim = simulate(self.params, point, workload, seed=run_seed(seed, r))
            self.events += sim.events
            runs.append(
                RunSample.from_seconds(
                    duration_s=sim.duration_s,
                    ttft_s=sim.ttft_s.tolist(),
                    e2el_s=sim.e2el_s.tolist(),
                    output_tokens=sim.output_tokens.tolist(),
                    sent_s=sim.sent_s.tolist(),
                    validate=False,
                )
            )
        return Evaluation(
            point=point,
            source=self.source,
            runs=runs,
            restart_s=self.params.restart_s if restart else 0.0,
            run_s=sum(r.duration_s for r in runs),
            notes=[f"simulated; parameters: {self.params.provenance}"],
        )
