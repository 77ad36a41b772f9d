"""Discrete-event model of a continuous-batching server (vLLM-style) under closed or open load.

Model (every assumption is here, so the simulator's fidelity figures can be read against it):
- The server runs steps back to back. At each step boundary it admits waiting requests, FIFO, up to
  `max_num_seqs` running sequences and, if set, a prefill token budget per step. An admitted request is
  prefilled within that step and emits its first token at the step's end (chunked-prefill style mixed
  batch: running requests decode in the same step).
- A step's duration is `StepTimeModel.duration(batch, prefill_tokens, spec_k)`: linear in the running
  batch, the prefill tokens and the speculative tokens verified.
- Without speculation each running request gains one token per step; with n-gram width k it gains
  1 + a tokens, a = min(k, G), P(G ≥ j) = α^j (α = per-position conditional acceptance rate).
- Clients: the load probe's semantics. Requests become ready at their arrival time (closed loop: all
  at t = 0; open loop: the probe's own schedule, `probes.load.arrivals.arrival_offsets`: first send at
  t = 0, gamma gaps with mean 1/rate and shape `burstiness`, constant gaps for infinite burstiness; for
  a seed, the same send times the probe draws) and are sent while fewer than `concurrency` are in
  flight; latency is measured from sending.
Between events (arrival that can be admitted, completion) the batch is constant, so runs of identical
decode steps are advanced in one jump; that is what makes the model fast.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from probes.core.measurement import Model
from probes.load.arrivals import arrival_offsets
from tuner.knobs import OperatingPoint
from tuner.spec import TuningLoad


class StepTimeModel(Model):
    """Duration of one engine step (s) as a linear function of what the step processes."""

    base_s: float = Field(ge=0, description="fixed per-step overhead (scheduling, sampling, launch)")
    per_seq_s: float = Field(ge=0, description="added per running sequence (decode of one token)")
    per_prefill_token_s: float = Field(ge=0, description="added per prompt token prefilled in the step")
    per_draft_token_s: float = Field(
        0.0, ge=0, description="added per speculative token verified (per sequence, per draft position)"
    )
    spec_base_s: float = Field(
        0.0, ge=0, description="extra per-step overhead while speculation is on (e.g. no async scheduling)"
    )

    def duration(self, batch: int, prefill_tokens: int, spec_k: int) -> float:
        t = self.base_s + self.per_seq_s * batch + self.per_prefill_token_s * prefill_tokens
        if spec_k:
            t += self.spec_base_s + self.per_draft_token_s * batch * spec_k
        return t


class SimParams(Model):
    """A calibrated target: step times, speculation acceptance, restart cost, and where they came from."""

    step: StepTimeModel
    acceptance_rate: float = Field(
        0.0, ge=0, le=1, description="α: probability a draft token is accepted given the previous one was"
    )
    restart_s: float = Field(ge=0, description="time to restart the server and warm it up (s)")
    step_jitter_cv: float = Field(
        0.0, ge=0, description="coefficient of variation of step durations (lognormal, per event)"
    )
    prefill_token_budget: int | None = Field(
        None, ge=1, description="most prompt tokens prefilled per step (vLLM max_num_batched_tokens)"
    )
    provenance: str = Field(description="how these parameters were obtained")


@dataclass
class SimRun:
    """Per-request outcome of one simulated run (seconds), plus the event count for speed figures."""

    ttft_s: np.ndarray
    e2el_s: np.ndarray
    output_tokens: np.ndarray
    sent_s: np.ndarray
    duration_s: float
    events: int
    steps: int


def arrival_times(workload: TuningLoad, rng: np.random.Generator) -> np.ndarray:
    """Closed loop: every request ready at 0. Open loop: the load probe's own arrival process, drawn
    from `rng` (a fresh `default_rng(seed)` gives the probe's schedule for that seed)."""
    n = workload.num_requests
    if workload.mode == "closed":
        return np.zeros(n)
    return arrival_offsets(n, workload.rate_rps, workload.burstiness, rng=rng)


class _SpecStream:
    """Pre-drawn tokens-per-step stream; each request consumes its own stretch of it."""

    def __init__(self, k: int, alpha: float, rng: np.random.Generator, size: int):
        self._k, self._alpha, self._rng = k, alpha, rng
        self._refill(size)

    def _refill(self, size: int) -> None:
        if self._alpha <= 0:
            accepted = np.zeros(size, dtype=np.int64)
        elif self._alpha >= 1:
            accepted = np.full(size, self._k, dtype=np.int64)
        else:
            accepted = np.minimum(self._rng.geometric(1.0 - self._alpha, size=size) - 1, self._k)
        self._cum = np.cumsum(accepted + 1)
        self._pos = 0

    def steps_for(self, tokens: int) -> int:
        """Decode steps needed to produce `tokens` tokens."""
        if tokens <= 0:
            return 0
        if self._pos + tokens > self._cum.size:
            self._refill(max(self._cum.size, 4 * tokens))
        before = self._cum[self._pos - 1] if self._pos else 0
        end = int(np.searchsorted(self._cum, before + tokens, side="left"))
        steps = end - self._pos + 1
        self._pos = end + 1
        return steps


def simulate(params: SimParams, point: OperatingPoint, workload: TuningLoad, *, seed: int = 0) -> SimRun:
    """One run of `workload` at `point`; deterministic for a given seed."""
    rng = np.random.default_rng(seed)
    return _Engine(params, point, workload, rng).run()


class _Engine:
    def __init__(self, params: SimParams, point: OperatingPoint, workload: TuningLoad, rng):
        self.p, self.pt, self.w = params, point, workload
        n = workload.num_requests
        self.arrivals = arrival_times(workload, rng).tolist()
        self.sent = [0.0] * n
        self.ttft = [0.0] * n
        self.e2el = [0.0] * n
        self.spec = (
            _SpecStream(point.spec_k, params.acceptance_rate, rng, n * workload.output_len)
            if point.spec_k
            else None
        )
        cv = params.step_jitter_cv
        # One lognormal factor per event with mean 1 and the given CV; recycled when exhausted.
        sigma = math.sqrt(math.log1p(cv * cv))
        self.jitter = rng.lognormal(-sigma * sigma / 2, sigma, size=4 * n + 64).tolist() if cv > 0 else None
        self.ji = 0

    def _factor(self) -> float:
        if self.jitter is None:
            return 1.0
        self.ji = (self.ji + 1) % len(self.jitter)
        return self.jitter[self.ji]

    def run(self) -> SimRun:
        p, pt, w = self.p, self.pt, self.w
        n, limit, mseq, k = w.num_requests, pt.concurrency, pt.max_num_seqs, pt.spec_k
        arrivals, sent, ttft, e2el = self.arrivals, self.sent, self.ttft, self.e2el
        in_len, out_len = w.input_len, w.output_len
        budget = p.prefill_token_budget
        per_step_admit = mseq if budget is None else max(1, budget // in_len)
        step_time = p.step.duration
        decode_steps = (
            (lambda: out_len - 1) if self.spec is None else (lambda: self.spec.steps_for(out_len - 1))
        )
        running: list[tuple[int, int]] = []  # (finish step, request id)
        waiting: deque[int] = deque()
        t, step, events, done, ai, in_flight = 0.0, 0, 0, 0, 0, 0
        free_since = 0.0  # when a client slot last became free after all were taken
        while done < n:
            # Requests ready by now are sent, FIFO, while the client limit allows.
            while ai < n and arrivals[ai] <= t and in_flight < limit:
                # Sent on arrival, or when a slot freed if the client limit held it back.
                sent[ai] = max(arrivals[ai], free_since)
                waiting.append(ai)
                ai += 1
                in_flight += 1
                events += 1
            if waiting and len(running) < mseq:
                admit = min(len(waiting), mseq - len(running), per_step_admit)
                batch = len(running) + admit
                t += step_time(batch, admit * in_len, k) * self._factor()
                step += 1
                for _ in range(admit):
                    rid = waiting.popleft()
                    ttft[rid] = t - sent[rid]
                    heapq.heappush(running, (step + decode_steps(), rid))
                events += 1
            elif running:
                batch = len(running)
                dt = step_time(batch, 0, k) * self._factor()
                jump = running[0][0] - step
                if batch < mseq and ai < n and in_flight < limit:
                    # Stop at the first step boundary at or after the next arrival, to admit it.
                    jump = min(jump, max(1, math.ceil((arrivals[ai] - t) / dt)))
                t += jump * dt
                step += jump
                events += 1
            else:
                t = max(t, arrivals[ai])
                continue
            while running and running[0][0] <= step:
                _, rid = heapq.heappop(running)
                e2el[rid] = t - sent[rid]
                done += 1
                if in_flight == limit:
                    free_since = t
                in_flight -= 1
                events += 1
        first = min(self.sent)
        return SimRun(
            ttft_s=np.asarray(ttft),
            e2el_s=np.asarray(e2el),
            output_tokens=np.full(n, out_len),
            sent_s=np.asarray(self.sent) - first,
            duration_s=t - first,
            events=events,
            steps=step,
        )
