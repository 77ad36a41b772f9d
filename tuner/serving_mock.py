"""The tuner against the mock server's serving model (probes/targets/serving_model.py): a GPU deployment's
capacity rehearsed on a CPU host, over real sockets with the real load client (issue 41 item 5).

Its figures are a simulation, not a measurement: the deployment is a stated law, and what the tuner finds on it
says how the tuner behaves on a target of that shape, not what any real server does. The restart knob
max_num_seqs is realised by restarting the mock with the profile's max_num_seqs replaced (the start-up time,
milliseconds, is charged as restart_s as a real start would be); the model has no speculative decoding, so
spec_k > 0 is unsupported, with that reason.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from probes.load.point import SLO
from probes.targets import TargetError
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.serving_model import ServingModelConfig
from tuner.knobs import OperatingPoint
from tuner.live import LiveEvaluator


@dataclass(frozen=True)
class _Served:
    """What LiveEvaluator's run reads of a started target."""

    base_url: str
    model: str
    api_key: str | None = None
    tokenizer_path: str | None = None


class ServingMockEvaluator(LiveEvaluator):
    """LiveEvaluator whose server is the mock with `serving`'s law at the point's max_num_seqs. Use as a
    context manager: it always stops the mock it started."""

    def __init__(self, serving: ServingModelConfig, *, slo_e2el_ms: float | None = None):
        self.serving = serving
        self.target = None  # no vLLM or endpoint target: the mock is started here
        self.speculation_env = None
        self.slo = SLO(e2el_ms=slo_e2el_ms) if slo_e2el_ms else SLO()
        self._stack: contextlib.ExitStack | None = None
        self._live = None
        self._server: OperatingPoint | None = None

    def _start(self, point: OperatingPoint) -> None:
        self._stop()
        if point.spec_k:
            raise TargetError(
                "the serving model has no speculative decoding (probes/targets/serving_model.py)"
            )
        law = self.serving.model_copy(update={"max_num_seqs": point.max_num_seqs})
        cfg = MockServerConfig(serving=law, metrics=True)
        stack = contextlib.ExitStack()
        self._live = _Served(base_url=stack.enter_context(running(cfg)), model=cfg.model)
        self._stack, self._server = stack, point
