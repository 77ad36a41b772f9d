"""A serving engine with a real capacity, for the mock server: continuous batching as vLLM schedules it, run
on the mock's event loop, so that a capacity of hundreds of users is rehearsed on a CPU host (issue 41 item 5).

The law (every timing the mock serves follows from it; the parameters are the profile's, stated in the
mock's config and readable at /metrics as vLLM's running and waiting gauges):
- One engine steps back to back while it has work. At a step's start it admits waiting requests, first come
  first served, while fewer than `max_num_seqs` run and their prompts fit the step's token budget
  (`max_num_batched_tokens` less one token per running sequence, as vLLM counts a decode as one scheduled
  token); an idle engine takes the first waiting prompt whatever its length.
- A step lasts step_ms = base_ms + per_seq_ms · batch + per_prefill_token_ms · prefill_tokens, where batch
  counts the sequences in the step (running and admitted) and prefill_tokens the admitted prompts' tokens
  (a prompt is prefilled whole in the step that admits it).
- At a step's end each sequence in it gains one token: an admitted one its first, a running one its next;
  one that has all its tokens leaves.
So at a steady batch B with no admission, TPOT = base_ms + per_seq_ms · B; past max_num_seqs requests queue
(TTFT grows by their wait) and TPOT stops growing. Not modelled: KV-cache capacity and preemption, chunked
prefill of one prompt over several steps, speculative decoding. The tuner's simulator (tuner/simulator.py)
models a target with the same step law; here it is served over real sockets to the real load client.

Time is the event loop's clock, and steps are on absolute deadlines: a step starts when the last one ended,
not when the loop got round to it, so a busy loop delays tokens without slowing the model (`late_ms` says by
how much). The work per step is one pass over the batch (a counter each) and a wake-up per chunk due, so one
loop serves about a thousand streams.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from pydantic import Field

from probes.core.measurement import Model


class ServingModelConfig(Model):
    """One profile of the serving model: its batch limits and the step law's three costs (ms)."""

    max_num_seqs: int = Field(256, ge=1, description="most sequences in one step (vLLM --max-num-seqs)")
    max_num_batched_tokens: int = Field(
        8192, ge=1, description="most tokens scheduled in one step (vLLM --max-num-batched-tokens)"
    )
    base_ms: float = Field(ge=0, description="fixed cost of a step (scheduling, sampling, launch)")
    per_seq_ms: float = Field(ge=0, description="added per sequence in the step (one token's decode)")
    per_prefill_token_ms: float = Field(ge=0, description="added per prompt token prefilled in the step")

    def step_ms(self, batch: int, prefill_tokens: int) -> float:
        return self.base_ms + self.per_seq_ms * batch + self.per_prefill_token_ms * prefill_tokens

    def scaled(self, factor: float) -> ServingModelConfig:
        """The same engine on hardware `factor`× slower (each cost × factor; 0.5: twice as fast)."""
        return self.model_copy(update={"base_ms": self.base_ms * factor, "per_seq_ms": self.per_seq_ms * factor,
                                       "per_prefill_token_ms": self.per_prefill_token_ms * factor})  # fmt: skip

    def describe(self) -> str:
        return (
            f"step_ms = {self.base_ms:g} + {self.per_seq_ms:g}·batch + {self.per_prefill_token_ms:g}·prefill_tokens; "
            f"max_num_seqs {self.max_num_seqs}, max_num_batched_tokens {self.max_num_batched_tokens}"
        )


class Seq:
    """One request in the engine: how many tokens it has, and the stream handler's wake-up."""

    __slots__ = ("prompt_tokens", "max_tokens", "emitted", "want", "waiter")

    def __init__(self, prompt_tokens: int, max_tokens: int):
        self.prompt_tokens, self.max_tokens = prompt_tokens, max_tokens
        self.emitted = 0  # tokens generated so far
        self.want = 1  # the handler is woken when `emitted` reaches this
        self.waiter: asyncio.Future | None = None

    @property
    def finished(self) -> bool:
        return self.emitted >= self.max_tokens

    async def until(self, tokens: int) -> None:
        """Wait until the engine has generated `tokens` tokens of this reply (at most its max_tokens)."""
        if self.emitted < tokens:
            self.want = min(tokens, self.max_tokens)
            self.waiter = asyncio.get_running_loop().create_future()
            await self.waiter

    def _gain(self) -> None:
        self.emitted += 1
        if self.waiter is not None and self.emitted >= self.want:
            if not self.waiter.done():
                self.waiter.set_result(None)
            self.waiter = None


# (running, waiting) after every change: the mock's /metrics gauges
StateSink = Callable[[int, int], None]


class Engine:
    """The serving model on the running event loop: `submit` a request, read its tokens from the returned
    `Seq`, `abort` it when its client goes (vLLM frees a disconnected request's slot)."""

    def __init__(self, cfg: ServingModelConfig, on_state: StateSink | None = None):
        self.cfg = cfg
        self.on_state = on_state
        self.waiting: deque[Seq] = deque()
        self.running: list[Seq] = []
        self.steps = 0
        self.late_ms = 0.0  # the latest a step's end was handled after its deadline
        self._task: asyncio.Task | None = None

    def submit(self, prompt_tokens: int, max_tokens: int) -> Seq:
        seq = Seq(max(prompt_tokens, 1), max(max_tokens, 1))
        self.waiting.append(seq)
        self._state()
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._run())
        return seq

    def abort(self, seq: Seq) -> None:
        if seq in self.running:
            self.running.remove(seq)
        elif seq in self.waiting:
            self.waiting.remove(seq)
        else:
            return
        self._state()

    def _state(self) -> None:
        if self.on_state is not None:
            self.on_state(len(self.running), len(self.waiting))

    def _admit(self) -> int:
        """Admit what this step takes (see the module's law); the prompt tokens admitted."""
        cfg, prefill = self.cfg, 0
        budget = cfg.max_num_batched_tokens - len(self.running)
        while self.waiting and len(self.running) < cfg.max_num_seqs:
            head = self.waiting[0]
            if prefill + head.prompt_tokens > budget and prefill > 0:
                break
            if head.prompt_tokens > budget and self.running:
                break  # a long prompt waits for a step it fits, or for an idle engine
            self.running.append(self.waiting.popleft())
            prefill += head.prompt_tokens
        return prefill

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        start = loop.time()
        while self.waiting or self.running:
            prefill = self._admit()
            if prefill:
                self._state()
            end = start + self.cfg.step_ms(len(self.running), prefill) / 1000
            await asyncio.sleep(
                max(end - loop.time(), 0.0)
            )  # always yields: a late engine never starves the loop
            self.late_ms = max(self.late_ms, 1000 * (loop.time() - end))
            self.steps += 1
            left = len(self.running)
            for seq in self.running:
                seq._gain()
            self.running = [s for s in self.running if not s.finished]
            if len(self.running) != left:
                self._state()
            start = end


# Named profiles (`factsheet mock-server --serving NAME`); each states what it stands for.
PROFILES: dict[str, ServingModelConfig] = {
    # A GPU-scale deployment for capacity searches: one step at 512 running sequences takes 8 + 0.06·512 ≈ 39 ms,
    # ~13,000 tokens/s. A closed loop of B ≤ 512 users with 64 output tokens has E2EL ≈ 64 steps of 8 + 0.06·B ms,
    # more for the start's prefill waves: measured with the load client (128 prompt / 64 output tokens, 3 requests
    # a user, 2-core host), p50 / p99 E2EL 2.00 / 2.30 s at 340 users, 2.26 / 2.62 s at 400, so its capacity under
    # a 2.5 s p99 E2EL SLO lies between them; past 512 users requests queue.
    "gpu-scale": ServingModelConfig(
        max_num_seqs=512,
        max_num_batched_tokens=8192,
        base_ms=8.0,
        per_seq_ms=0.06,
        per_prefill_token_ms=0.004,
    ),
    # TinyLlama-1.1B on vLLM as the SLO-Tuner paper reports it, rehearsed: the law's costs were chosen so that the
    # default point (closed loop, 32 users, max_num_seqs 256, 512 prompt and 128 output tokens, 96 requests a
    # run) gives the paper's default figures, p99 E2EL ≈ 1.36 s and goodput ≈ 8 req/s under a 1.2 s p99 SLO
    # (bench/tuner_gpu_mock.py states both). A calibrated simulation, not a measurement of any GPU.
    "tinyllama-vllm-paper": ServingModelConfig(
        max_num_seqs=256,
        max_num_batched_tokens=2048,
        base_ms=4.95,
        per_seq_ms=0.12,
        per_prefill_token_ms=0.005,
    ),
}
