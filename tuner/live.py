"""The live target behind the `Evaluator` protocol: a thin adapter over the load probe and targets.

Restart knobs (max_num_seqs, speculation) are realised by (re)starting a vLLM server with the mapped
flags; the start-up time is charged as restart_s. An endpoint target cannot be restarted, so those knobs
are reported unsupported there. A server that fails to start with a speculation flag marks that knob
unsupported with the server's own message.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets import EndpointTarget, TargetError, VllmTarget, open_target
from tuner.calibration import CalibrationError
from tuner.evaluation import Evaluation, RunSample, Unsupported, run_seed
from tuner.knobs import OperatingPoint, needs_restart, vllm_server_flags
from tuner.spec import TuningLoad
from tuner.speculation import SpecDecodeCounters, read_spec_decode_counters

# Whether servers with n-gram speculation get LD_PRELOAD of the serving environment's libiomp5.so
# (Intel OpenMP). Set from the measurement in bench/tuner_results.md ("Intel OpenMP preload").
PRELOAD_IOMP_FOR_SPECULATION = False


def iomp_library(target: VllmTarget) -> str | None:
    """The libiomp5.so shipped in the serving environment (…/lib next to …/bin/python), if any."""
    try:
        python = target.serving_python()
    except TargetError:
        return None
    lib = Path(python).parent.parent / "lib" / "libiomp5.so" if python else None
    return str(lib) if lib is not None and lib.is_file() else None


class LiveEvaluator:
    """Use as a context manager: it owns at most one running server and always stops it."""

    source = "live"

    def __init__(
        self,
        target: VllmTarget | EndpointTarget,
        *,
        slo_e2el_ms: float | None = None,
        speculation_env: dict[str, str] | None = None,
    ):
        """`speculation_env`: environment for servers with speculation on; None = this module's measured choice."""
        self.target = target
        self.speculation_env = speculation_env
        self.slo = SLO(e2el_ms=slo_e2el_ms) if slo_e2el_ms else SLO()
        self._stack: contextlib.ExitStack | None = None
        self._live = None
        self._server: OperatingPoint | None = None

    def __enter__(self) -> LiveEvaluator:
        return self

    def __exit__(self, *exc) -> None:
        self._stop()

    @property
    def server(self) -> OperatingPoint | None:
        """The operating point whose launch flags the running server has (None: none running)."""
        return self._server

    def spec_decode_counters(self) -> SpecDecodeCounters | None:
        """vLLM's cumulative speculation counters of the running server (None: it exports none)."""
        if self._live is None:
            raise CalibrationError("no server is running to read /metrics from")
        return read_spec_decode_counters(self._live.base_url, api_key=self._live.api_key)

    def evaluate(self, point: OperatingPoint, workload: TuningLoad, *, repeats: int, seed: int) -> Evaluation:
        restart_s = 0.0
        if needs_restart(self._server, point):
            refused = self._refuses(point)
            if refused is not None:
                return Evaluation(point=point, source="live", unsupported=refused)
            t0 = time.perf_counter()
            try:
                self._start(point)
            except TargetError as exc:
                return Evaluation(
                    point=point, source="live", restart_s=time.perf_counter() - t0,
                    unsupported=_unsupported_from(point, self._server, exc),
                )  # fmt: skip
            restart_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        runs = [self._run(point, workload, run_seed(seed, r)) for r in range(repeats)]
        return Evaluation(
            point=point, source="live", runs=[r for r in runs if r is not None],
            restart_s=restart_s, run_s=time.perf_counter() - t0,
        )  # fmt: skip

    def _refuses(self, point: OperatingPoint) -> Unsupported | None:
        if isinstance(self.target, EndpointTarget) and self._server is not None:
            knob = "spec_k" if point.spec_k != self._server.spec_k else "max_num_seqs"
            return Unsupported(
                knob=knob, value=getattr(point, knob),
                reason="endpoint target: its launch flags are not under the tool's control",
            )  # fmt: skip
        return None

    def _start(self, point: OperatingPoint) -> None:
        self._stop()
        stack = contextlib.ExitStack()
        if isinstance(self.target, VllmTarget):
            # The target's own --max-num-seqs is replaced; speculation flags are appended.
            env = {**self.target.env, **self._speculation_env(point)}
            cfg = self.target.model_copy(update={"max_num_seqs": point.max_num_seqs, "env": env})
            flags = vllm_server_flags(point)[2:]
            self._live = stack.enter_context(open_target(cfg, flags=flags))
        else:
            self._live = stack.enter_context(open_target(self.target))
        self._stack, self._server = stack, point

    def _speculation_env(self, point: OperatingPoint) -> dict[str, str]:
        if point.spec_k == 0 or "LD_PRELOAD" in self.target.env:
            return {}  # the user's own preload wins
        if self.speculation_env is not None:
            return self.speculation_env
        lib = iomp_library(self.target) if PRELOAD_IOMP_FOR_SPECULATION else None
        return {"LD_PRELOAD": lib} if lib else {}

    def _stop(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack, self._live, self._server = None, None, None

    def _run(self, point: OperatingPoint, workload: TuningLoad, seed: int) -> RunSample | None:
        closed = workload.mode == "closed"
        lp = LoadPoint.at(
            concurrency=point.concurrency if closed else None,
            rate=None if closed else workload.rate_rps,
            burstiness=workload.burstiness,
            max_concurrency=None if closed else point.concurrency,
            num_requests=workload.num_requests,
            input_len=workload.input_len,
            output_len=workload.output_len,
            seed=seed,
        )
        live = self._live
        res = asyncio.run(
            run_point(live.base_url, live.model, lp, self.slo, api_key=live.api_key,
                      tokenizer_path=live.tokenizer_path)
        )  # fmt: skip
        if not any(r.ok for r in res.records) or not res.metrics.duration_s:
            return None
        return RunSample.from_records(
            res.records, duration_s=res.metrics.duration_s, failed=res.metrics.failed
        )


def _unsupported_from(
    point: OperatingPoint, previous: OperatingPoint | None, exc: TargetError
) -> Unsupported:
    knob = (
        "spec_k" if point.spec_k and (previous is None or previous.spec_k != point.spec_k) else "max_num_seqs"
    )
    lines = [ln for ln in str(exc).splitlines() if ln.strip()]
    return Unsupported(
        knob=knob, value=getattr(point, knob), reason="server did not start: " + " | ".join(lines[-3:])
    )
