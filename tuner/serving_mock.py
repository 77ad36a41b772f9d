"""The tuner against the mock server's serving model (probes/targets/serving_model.py): a GPU deployment's
capacity rehearsed on a CPU host, over real sockets with the real load client (issue 41 item 5).

Its figures are a simulation, not a measurement: the deployment is a stated law, and what the tuner finds on it
says how the tuner behaves on a target of that shape, not what any real server does. The restart knob
max_num_seqs is realised by restarting the mock with the profile's max_num_seqs replaced (the start-up time,
milliseconds, is charged as restart_s as a real start would be); the model has no speculative decoding, so
spec_k > 0 is unsupported, with that reason.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets import TargetError
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.serving_model import PROFILES, ServingModelConfig
from tuner.campaign.latency import measured
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


SOURCE = "the mock server's serving model (a stated law, not a GPU), streamed through the load probe"


class ServingMockMeasurer:
    """A campaign's measurer (tuner/campaign/spec.py) on the serving model: each configuration's engine
    arguments max_num_seqs and max_num_batched_tokens set the law's batch limits (the mock restarted when they
    change); every other option (sampling, dtype, chunked prefill, prefix caching) has no effect on the law,
    which states none. Per measurement, a closed loop of `users` users and `requests` requests (latency under
    load, so the batch limits show), figures from its records the load probe's way. A simulation."""

    def __init__(
        self, serving: ServingModelConfig, users: int, requests: int, input_len: int, output_len: int
    ):
        self.serving, self.users, self.requests = serving, users, requests
        self.input_len, self.output_len = input_len, output_len
        self._stack: contextlib.ExitStack | None = None
        self._url: str | None = None
        self._law: ServingModelConfig | None = None

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack, self._url, self._law = None, None, None

    def measure(self, kwargs: dict, *, seed: int) -> dict:
        engine = kwargs.get("engine", {})
        law = self.serving.model_copy(
            update={k: engine[k] for k in ("max_num_seqs", "max_num_batched_tokens") if k in engine}
        )
        if law != self._law:
            self.close()
            self._stack = contextlib.ExitStack()
            self._url, self._law = self._stack.enter_context(running(MockServerConfig(serving=law))), law
        point = LoadPoint.at(concurrency=self.users, num_requests=self.requests, input_len=self.input_len,
                             output_len=self.output_len, seed=seed)  # fmt: skip
        result = asyncio.run(run_point(self._url, MockServerConfig().model, point, SLO()))
        return measured(result.records, source=SOURCE, point=point, workload=result.workload)


def mock_measurer(
    profile: str = "tinyllama-vllm-paper", users: int = 32, requests: int = 64, input_len: int = 128,
    output_len: int = 16,
) -> ServingMockMeasurer:  # fmt: skip
    """The campaign factory (`measurer: tuner.serving_mock:mock_measurer`): a profile of
    probes/targets/serving_model.py and the load each measurement sends."""
    if profile not in PROFILES:
        raise ValueError(f"profile {profile!r}: one of {', '.join(PROFILES)}")
    return ServingMockMeasurer(PROFILES[profile], users, requests, input_len, output_len)
