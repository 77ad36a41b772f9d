"""An OpenAI-compatible streaming server with known timing, to calibrate and test load clients.

Every request waits for one of `slots` (queueing shows up in TTFT, as on a real server), then
streams `max_tokens` tokens: the first after `ttft_ms`, each next one `itl_ms` later, on
absolute deadlines so the timing does not drift. Faults are deterministic by request number:
every `fail_every`-th request gets HTTP 500, every `drop_every`-th is cut after `drop_after` tokens,
every `reset_every`-th has its connection reset before any response, every `stall_every`-th gets
its headers and then nothing. The first matching rule in that order applies.

With `metrics`, `/metrics` serves vLLM's names in Prometheus text (prometheus-client's own registry and
exposition), with values known from what the server did: requests holding a slot (`running`) and waiting for
one (`waiting`; an open loop above capacity grows it without bound), KV usage = running / slots, prompt
tokens (words) looked up and `prefix_hit_fraction` of them (floored, per request) found in the prefix cache,
a preemption every `preempt_every`-th request, and each request's TTFT (arrival to first token) and E2EL in
histograms with vLLM's bucket bounds. `metrics_text` serves that text verbatim instead (a broken page).

`engine` answers as that serving engine documents (probes/targets/mock_engines.py): its identity endpoints,
its /metrics names, its cache reset, how its streams end (`[DONE]` or not, usage, finish_reason, interrupts,
ignore_eos, the /v1/models shape); each of those switches can also be set on its own. `ignores_stream` answers
plain JSON to a streamed request; `eos_after` ends a reply at EOS after that many tokens unless `ignore_eos` is
asked and honoured; `prompt_tokens_extra` makes the server count more prompt tokens than the words it got.

With `serving`, a serving model with a real capacity (probes/targets/serving_model.py: continuous batching,
a step time growing with the batch and the prompt tokens prefilled, a queue past `max_num_seqs`) times every
request instead of `slots`, `ttft_ms` and `itl_ms`; `running` and `waiting` are then its batch and queue.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from typing import Literal

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from pydantic import Field

from probes.core.measurement import Model
from probes.targets.mock_engines import (
    BEHAVIOURS,
    Behaviour,
    MockEngine,
    identity_routes,
    metric_names,
    models_body,
)
from probes.targets.ports import free_port
from probes.targets.serving_model import Engine, Seq, ServingModelConfig


class MockServerConfig(Model):
    model: str = "mock-model"
    ttft_ms: float = Field(100.0, ge=0, description="delay from admission to the first token")
    itl_ms: float = Field(10.0, ge=0, description="delay between consecutive tokens")
    slots: int = Field(1024, ge=1, description="requests served at once; the rest queue")
    fail_every: int = Field(0, ge=0, description="every k-th request answers HTTP 500 (0: never)")
    drop_every: int = Field(0, ge=0, description="every k-th request's stream is cut (0: never)")
    drop_after: int = Field(2, ge=0, description="tokens sent before a cut")
    reset_every: int = Field(
        0, ge=0, description="every k-th request's connection is reset before any response (0: never)"
    )
    stall_every: int = Field(
        0, ge=0, description="every k-th request gets headers, then nothing: the client times out (0: never)"
    )
    default_max_tokens: int = Field(16, ge=1)
    tokens_per_chunk: int = Field(
        1,
        ge=1,
        description="tokens each streamed chunk carries (> 1 as with n-gram speculation); chunk j is sent "
        "at ttft_ms + j · tokens_per_chunk · itl_ms, so the time per output token stays itl_ms",
    )
    reply_text: str | None = Field(
        None, description="fixed reply (non-streaming and chat), else 'tok' tokens"
    )
    numbered_replies: bool = Field(
        False,
        description="streamed token i of request n is 'r{n}.{i} ': every reply unique and known to a test",
    )
    metrics: bool = Field(False, description="serve /metrics with vLLM's names and known values")
    prefix_hit_fraction: float = Field(0.0, ge=0, le=1, description="of each prompt's tokens, found cached")
    preempt_every: int = Field(0, ge=0, description="every k-th request counts a preemption (0: never)")
    metrics_text: str | None = Field(None, description="served verbatim on /metrics instead")
    prefix_cache_reset: bool = Field(
        True, description="answer POST /reset_prefix_cache with 200, as vLLM in development mode (else 404)"
    )
    itl_ms_after_reset: list[float] = Field(
        default_factory=list,
        description="after the k-th POST /reset_prefix_cache, tokens come itl_ms_after_reset[k − 1] apart (the "
        "last entry on from there): a deployment that moves between runs, known to a test of repeats",
    )
    engine: MockEngine = Field("vllm", description="answer as this engine documents (mock_engines.py)")
    send_done: bool | None = Field(None, description="end streams with [DONE] (None: the engine's way)")
    stream_usage: Literal["on_request", "always", "never"] | None = Field(
        None, description="usage in the stream (None: the engine's way)"
    )
    finish_reason: bool | None = Field(
        None, description="the last chunk carries finish_reason (None: engine's)"
    )
    interrupts: bool | None = Field(None, description="a new request cuts running streams (None: engine's)")
    honours_ignore_eos: bool | None = Field(
        None, description="ignore_eos runs to max_tokens (None: engine's)"
    )
    models_listing: Literal["object", "bare_list", "empty"] | None = Field(
        None, description="/v1/models shape (None: the engine's)"
    )
    ignores_stream: bool = Field(False, description="answer a streamed request with one plain JSON reply")
    eos_after: int | None = Field(
        None,
        ge=1,
        description="the model ends its reply at EOS after this many tokens unless ignore_eos holds",
    )
    prompt_tokens_extra: int = Field(0, ge=0, description="prompt tokens the server counts beyond the words")
    serving: ServingModelConfig | None = Field(
        None,
        description="a serving model with a real capacity (continuous batching, probes/targets/serving_model.py) "
        "times every request instead of slots, ttft_ms and itl_ms; one engine per server process",
    )

    def behaviour(self) -> Behaviour:
        """The engine's documented behaviour with the switches set here laid over it."""
        base = BEHAVIOURS[self.engine]
        given = {
            "send_done": self.send_done, "usage": self.stream_usage, "finish_reason": self.finish_reason,
            "interrupts": self.interrupts, "honours_ignore_eos": self.honours_ignore_eos,
            "models_listing": self.models_listing,
        }  # fmt: skip
        return base.model_copy(update={k: v for k, v in given.items() if v is not None})


class Received(Model):
    """A request as the mock server received it (the recording a test reads)."""

    n: int = Field(description="arrival number, from 1")
    at_s: float = Field(description="time.perf_counter() on arrival")
    path: str
    body: dict
    reply: str = Field("", description="the streamed reply's text, once sent")


# vLLM 0.32's own bucket bounds (s) for the two latency histograms, as its /metrics page shows them
# (tests/server_view/fixtures/vllm-0.32-metrics.txt).
TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                40.0, 80.0, 160.0, 640.0, 2560.0)  # fmt: skip
E2EL_BUCKETS = (0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0,
                480.0, 960.0, 1920.0, 7680.0)  # fmt: skip


class _Absent:
    """A family the engine does not have: updates go nowhere."""

    def inc(self, *_: object) -> None: ...
    def dec(self, *_: object) -> None: ...
    def set(self, *_: object) -> None: ...
    def observe(self, *_: object) -> None: ...


class _Metrics:
    """The server's state in the engine's names (vLLM's by default), in a registry of its own (one per app)."""

    def __init__(self, engine: str = "vllm") -> None:
        r = self.registry = CollectorRegistry()
        labels = ["engine", "model_name"]
        names = metric_names(engine)

        def make(key: str, kind, *extra, **kw):
            name = names[key]
            return (
                _Absent()
                if name is None
                else kind(name, key, labels, *extra, registry=r, **kw).labels("0", "mock")
            )

        self.running, self.waiting, self.kv = (
            make("running", Gauge),
            make("waiting", Gauge),
            make("kv", Gauge),
        )
        self.queries, self.hits = make("queries", Counter), make("hits", Counter)
        self.preemptions = make("preemptions", Counter)
        self.ttft = make("ttft", Histogram, buckets=TTFT_BUCKETS)
        self.e2el = make("e2el", Histogram, buckets=E2EL_BUCKETS)


# A reference server must not drop what it is sent: aiohttp's default listen backlog (128) overflowed at 1,024
# new connections, and each dropped SYN came back 1 s later in the client's TTFT, where the server's own log
# cannot see it (bench/load_scale.py). The kernel caps it at net.core.somaxconn.
BACKLOG = 4096


def _chunk(kind: str, text: str, model: str, finish: str | None = None) -> bytes:
    choice = {"index": 0, "delta": {"content": text}} if kind == "chat" else {"index": 0, "text": text}
    if finish is not None:
        choice["finish_reason"] = finish
    return b"data: " + json.dumps({"object": "chunk", "model": model, "choices": [choice]}).encode() + b"\n\n"


class _App:
    def __init__(
        self, cfg: MockServerConfig, recorder: list[Received] | None = None, timing: TimingSink | None = None
    ):
        self.cfg = cfg
        self.recorder = recorder
        self.timing = timing
        self.entries: dict[int, Received] = {}  # by arrival number: the reply is appended as it streams
        self.count = 0
        self.slots = asyncio.Semaphore(cfg.slots)
        self.metrics = _Metrics(cfg.engine)
        self.behaviour = cfg.behaviour()
        self.in_slot = 0
        self.asked: dict[int, int] = {}  # max_tokens asked, by arrival number
        self.options: dict[int, dict] = {}  # stream_options, by arrival number
        self.resets = 0  # POST /reset_prefix_cache answered (or the engine's own cache reset)
        self.serving = Engine(cfg.serving, self._serving_state) if cfg.serving is not None else None

    async def metrics_page(self, _: web.Request) -> web.Response:
        if self.cfg.metrics_text is not None:
            return web.Response(text=self.cfg.metrics_text, content_type="text/plain")
        return web.Response(body=generate_latest(self.metrics.registry), content_type="text/plain")

    async def reset_prefix_cache(self, _: web.Request) -> web.Response:
        self.resets += 1
        return web.Response(status=200)

    def count_reset(self) -> None:
        self.resets += 1

    @property
    def itl_ms(self) -> float:
        """The time between tokens now: the configured one, or the one for the resets so far."""
        after = self.cfg.itl_ms_after_reset
        return after[min(self.resets, len(after)) - 1] if after and self.resets else self.cfg.itl_ms

    async def models(self, _: web.Request) -> web.Response:
        body = models_body(self.cfg.engine, self.behaviour.models_listing, self.cfg.model)
        return web.json_response(body)

    async def generate(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.count += 1
        n = self.count
        if self.recorder is not None:
            self.entries[n] = Received(n=n, at_s=time.perf_counter(), path=request.path, body=body)
            self.recorder.append(self.entries[n])
        kind = "chat" if request.path.endswith("/chat/completions") else "completions"
        if self.cfg.fail_every and n % self.cfg.fail_every == 0:
            return web.json_response({"error": {"message": "injected failure"}}, status=500)
        if self.cfg.reset_every and n % self.cfg.reset_every == 0 and not self._dropped(n):
            request.transport.abort()  # RST-like close: no status line ever reaches the client
            return web.Response(status=500)
        if self.cfg.stall_every and n % self.cfg.stall_every == 0 and not self._dropped(n):
            resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
            await resp.prepare(request)
            await asyncio.sleep(3600)
            return resp
        tokens = int(body.get("max_tokens") or self.cfg.default_max_tokens)
        asked = tokens
        if self.cfg.eos_after is not None and not (
            body.get("ignore_eos") and self.behaviour.honours_ignore_eos
        ):
            tokens = min(tokens, self.cfg.eos_after)  # the model stopped at its EOS token
        self.asked[n] = asked
        self.options[n] = body.get("stream_options") if isinstance(body.get("stream_options"), dict) else {}
        prompt = body.get("prompt") or " ".join(m.get("content", "") for m in body.get("messages", []))
        arrived, words = time.perf_counter(), len(str(prompt).split()) + self.cfg.prompt_tokens_extra
        if self.serving is not None:
            return await self._served(request, body, kind, tokens, words, n, arrived)
        m = self.metrics
        m.waiting.inc()
        async with self.slots:
            m.waiting.dec()
            self._occupy(+1)
            m.queries.inc(words)
            m.hits.inc(int(words * self.cfg.prefix_hit_fraction))
            if self.cfg.preempt_every and n % self.cfg.preempt_every == 0:
                m.preemptions.inc()
            try:
                if not body.get("stream") or self.cfg.ignores_stream:
                    return await self._whole(kind, tokens, words, self._finish(n, tokens))
                return await self._stream(request, kind, tokens, words, n, arrived)
            finally:
                self._occupy(-1)
                m.e2el.observe(time.perf_counter() - arrived)

    def _occupy(self, step: int) -> None:
        self.in_slot += step
        self.metrics.running.set(self.in_slot)
        self.metrics.kv.set(self.in_slot / self.cfg.slots)

    def _serving_state(self, running: int, waiting: int) -> None:
        m = self.metrics
        m.running.set(running)
        m.waiting.set(waiting)
        m.kv.set(running / self.cfg.serving.max_num_seqs)

    async def _served(self, request, body: dict, kind: str, tokens: int, words: int, n: int, arrived: float):
        """A request timed by the serving model: its tokens as the engine's steps produce them."""
        m, engine = self.metrics, self.serving
        m.queries.inc(words)
        m.hits.inc(int(words * self.cfg.prefix_hit_fraction))
        seq = engine.submit(words, tokens)
        try:
            if not body.get("stream") or self.cfg.ignores_stream:
                await seq.until(tokens)
                return self._reply(kind, tokens, words, self._finish(n, tokens))
            return await self._stream(request, kind, tokens, words, n, arrived, seq)
        finally:
            engine.abort(seq)  # a client gone before the end frees its slot, as vLLM aborts it
            m.e2el.observe(time.perf_counter() - arrived)

    def _dropped(self, n: int) -> bool:
        return bool(self.cfg.drop_every and n % self.cfg.drop_every == 0)

    def _text(self, tokens: int) -> str:
        return self.cfg.reply_text if self.cfg.reply_text is not None else "tok " * tokens

    def _finish(self, n: int, tokens: int) -> str:
        return "length" if tokens >= self.asked.get(n, tokens) else "stop"

    async def _whole(self, kind: str, tokens: int, prompt_tokens: int, finish: str = "stop") -> web.Response:
        await asyncio.sleep((self.cfg.ttft_ms + self.itl_ms * (tokens - 1)) / 1000)
        return self._reply(kind, tokens, prompt_tokens, finish)

    def _reply(self, kind: str, tokens: int, prompt_tokens: int, finish: str) -> web.Response:
        text = self._text(tokens)
        choice = (
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}
            if kind == "chat"
            else {"index": 0, "text": text, "finish_reason": finish}
        )
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": tokens}
        return web.json_response(
            {"object": kind, "model": self.cfg.model, "choices": [choice], "usage": usage}
        )

    async def _stream(
        self,
        request,
        kind: str,
        tokens: int,
        prompt_tokens: int,
        n: int,
        arrived: float,
        seq: Seq | None = None,
    ):
        """Stream `tokens` tokens, `tokens_per_chunk` a chunk: on deadlines from ttft_ms and itl_ms, or as the
        serving model's `seq` produces them."""
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        start = time.perf_counter()
        cut = self.cfg.drop_every and n % self.cfg.drop_every == 0
        per = self.cfg.tokens_per_chunk
        sent = _Sent(arrived, start) if self.timing is not None and seq is None else None
        how = self.behaviour
        for i in range(0, tokens, per):
            if how.interrupts and self.count > n:  # a newer request arrived: this stream is cancelled
                if how.send_done:
                    await resp.write(b"data: [DONE]\n\n")
                await resp.write_eof()
                self._log(sent, n)
                return resp
            if seq is not None:
                await seq.until(min(i + per, tokens))
            due = start + (self.cfg.ttft_ms + i * self.itl_ms) / 1000
            delay = due - time.perf_counter()
            if delay > 0 and seq is None:
                await asyncio.sleep(delay)
            if sent is not None:
                sent.chunk(due, time.perf_counter())
            if cut and i >= self.cfg.drop_after:
                request.transport.close()  # abrupt: no terminating chunk, no [DONE]
                self._log(sent, n)
                return resp
            count = min(per, tokens - i)
            piece = (
                "".join(f"r{n}.{j} " for j in range(i, i + count))
                if self.cfg.numbered_replies
                else "tok " * count
            )
            last = i + count >= tokens
            finish = self._finish(n, tokens) if last and how.finish_reason else None
            await resp.write(_chunk(kind, piece, self.cfg.model, finish))
            if n in self.entries:
                self.entries[n].reply += piece
            if i == 0:
                self.metrics.ttft.observe(time.perf_counter() - arrived)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": tokens,
            "total_tokens": prompt_tokens + tokens,
        }
        asked = bool(self.options.pop(n, {}).get("include_usage"))
        if how.usage == "always" or (how.usage == "on_request" and asked):
            await resp.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        if how.send_done:
            await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        self._log(sent, n)
        return resp

    def _log(self, sent: _Sent | None, n: int) -> None:
        if sent is not None and self.timing is not None:
            self.timing(sent.line(n))


# Where the server's own send times go: one JSON line per streamed request (see _Sent.line).
TimingSink = Callable[[bytes], None]


class _Sent:
    """One streamed request's own timing, on the server's clock (time.perf_counter(), CLOCK_MONOTONIC on
    Linux: the same clock as a client process on the same host). A chunk's send time is taken just
    before it is written; its lateness is that time minus its deadline."""

    __slots__ = ("arrived", "admitted", "first", "last", "late", "chunks")

    def __init__(self, arrived: float, admitted: float):
        self.arrived, self.admitted = arrived, admitted
        self.first: float | None = None
        self.last = admitted
        self.late = 0.0
        self.chunks = 0

    def chunk(self, due: float, now: float) -> None:
        if self.first is None:
            self.first = now
        self.last, self.late, self.chunks = now, max(self.late, now - due), self.chunks + 1

    def line(self, n: int) -> bytes:
        return json.dumps({
            "pid": os.getpid(), "n": n, "arrived_s": self.arrived, "admitted_s": self.admitted,
            "first_chunk_s": self.first, "last_chunk_s": self.last, "late_ms": 1000 * self.late,
            "chunks": self.chunks,
        }).encode() + b"\n"  # fmt: skip


def build_app(
    cfg: MockServerConfig, recorder: list[Received] | None = None, timing: TimingSink | None = None
) -> web.Application:
    handlers = _App(cfg, recorder, timing)
    app = web.Application()
    if cfg.engine in ("transformers-serve", "llama-cpp-python"):
        app.on_response_prepare.append(_uvicorn_headers(cfg.engine))
    app.add_routes(identity_routes(cfg.engine, cfg.model, cfg.slots, handlers.count_reset))
    app.add_routes(
        [
            web.get("/v1/models", handlers.models),
            *(
                [web.get("/metrics", handlers.metrics_page)]
                if cfg.metrics or cfg.metrics_text is not None
                else []
            ),
            web.post("/v1/completions", handlers.generate),
            web.post("/v1/chat/completions", handlers.generate),
            *(
                [web.post("/reset_prefix_cache", handlers.reset_prefix_cache)]
                if cfg.prefix_cache_reset and cfg.engine == "vllm"
                else []
            ),
        ]
    )
    return app


def _uvicorn_headers(engine: str):
    """FastAPI servers answer as uvicorn; transformers serve also names every request (x-request-id)."""

    async def stamp(_: web.Request, resp: web.StreamResponse) -> None:
        resp.headers["server"] = "uvicorn"
        if engine == "transformers-serve":
            resp.headers["x-request-id"] = "00000000-0000-4000-8000-000000000000"

    return stamp


@contextlib.contextmanager
def running(
    cfg: MockServerConfig, port: int | None = None, recorder: list[Received] | None = None
) -> Iterator[str]:
    """Serve `cfg` on 127.0.0.1 in a background thread; yields the base URL. `recorder`, if given, gets
    every generation request as received, with the reply streamed to it."""
    port = port or free_port()
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    # Short shutdown grace: stalled (fault-injected) handlers must not hold the test run for a minute.
    runner = web.AppRunner(build_app(cfg, recorder), access_log=None, shutdown_timeout=1.0)

    async def start() -> None:
        await runner.setup()
        await web.TCPSite(runner, "127.0.0.1", port, backlog=BACKLOG).start()
        ready.set()

    thread = threading.Thread(
        target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True
    )
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("mock server did not start")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        asyncio.run_coroutine_threadsafe(runner.cleanup(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)


def serve_forever(cfg: MockServerConfig, host: str = "127.0.0.1", port: int = 8000) -> None:
    web.run_app(build_app(cfg), host=host, port=port, access_log=None, print=None)
