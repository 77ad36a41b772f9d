"""An OpenAI-compatible streaming server with known timing, to calibrate and test load clients.

Every request waits for one of `slots` (queueing shows up in TTFT, as on a real server), then
streams `max_tokens` tokens: the first after `ttft_ms`, each next one `itl_ms` later, on
absolute deadlines so the timing does not drift. Faults are deterministic by request number:
every `fail_every`-th request gets HTTP 500, every `drop_every`-th is cut after `drop_after` tokens,
every `reset_every`-th has its connection reset before any response, every `stall_every`-th gets
its headers and then nothing. The first matching rule in that order applies.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
import time
from collections.abc import Iterator

from aiohttp import web
from pydantic import Field

from probes.core.measurement import Model
from probes.targets.ports import free_port


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


class Received(Model):
    """A request as the mock server received it (the recording a test reads)."""

    n: int = Field(description="arrival number, from 1")
    at_s: float = Field(description="time.perf_counter() on arrival")
    path: str
    body: dict
    reply: str = Field("", description="the streamed reply's text, once sent")


def _chunk(kind: str, text: str, model: str) -> bytes:
    choice = {"index": 0, "delta": {"content": text}} if kind == "chat" else {"index": 0, "text": text}
    return b"data: " + json.dumps({"object": "chunk", "model": model, "choices": [choice]}).encode() + b"\n\n"


class _App:
    def __init__(self, cfg: MockServerConfig, recorder: list[Received] | None = None):
        self.cfg = cfg
        self.recorder = recorder
        self.entries: dict[int, Received] = {}  # by arrival number: the reply is appended as it streams
        self.count = 0
        self.slots = asyncio.Semaphore(cfg.slots)

    async def models(self, _: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.cfg.model, "object": "model"}]})

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
        prompt = body.get("prompt") or " ".join(m.get("content", "") for m in body.get("messages", []))
        async with self.slots:
            if not body.get("stream"):
                return await self._whole(kind, tokens, len(str(prompt).split()))
            return await self._stream(request, kind, tokens, len(str(prompt).split()), n)

    def _dropped(self, n: int) -> bool:
        return bool(self.cfg.drop_every and n % self.cfg.drop_every == 0)

    def _text(self, tokens: int) -> str:
        return self.cfg.reply_text if self.cfg.reply_text is not None else "tok " * tokens

    async def _whole(self, kind: str, tokens: int, prompt_tokens: int) -> web.Response:
        await asyncio.sleep((self.cfg.ttft_ms + self.cfg.itl_ms * (tokens - 1)) / 1000)
        text = self._text(tokens)
        choice = (
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            if kind == "chat"
            else {"index": 0, "text": text, "finish_reason": "stop"}
        )
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": tokens}
        return web.json_response(
            {"object": kind, "model": self.cfg.model, "choices": [choice], "usage": usage}
        )

    async def _stream(self, request, kind: str, tokens: int, prompt_tokens: int, n: int):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        start = time.perf_counter()
        cut = self.cfg.drop_every and n % self.cfg.drop_every == 0
        per = self.cfg.tokens_per_chunk
        for i in range(0, tokens, per):
            due = start + (self.cfg.ttft_ms + i * self.cfg.itl_ms) / 1000
            delay = due - time.perf_counter()
            if delay > 0:
                await asyncio.sleep(delay)
            if cut and i >= self.cfg.drop_after:
                request.transport.close()  # abrupt: no terminating chunk, no [DONE]
                return resp
            count = min(per, tokens - i)
            piece = "".join(f"r{n}.{j} " for j in range(i, i + count)) if self.cfg.numbered_replies else "tok " * count
            await resp.write(_chunk(kind, piece, self.cfg.model))
            if n in self.entries:
                self.entries[n].reply += piece
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": tokens,
            "total_tokens": prompt_tokens + tokens,
        }
        await resp.write(b"data: " + json.dumps({"choices": [], "usage": usage}).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp


def build_app(cfg: MockServerConfig, recorder: list[Received] | None = None) -> web.Application:
    handlers = _App(cfg, recorder)
    app = web.Application()
    app.add_routes(
        [
            web.get("/v1/models", handlers.models),
            web.post("/v1/completions", handlers.generate),
            web.post("/v1/chat/completions", handlers.generate),
        ]
    )
    return app


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
        await web.TCPSite(runner, "127.0.0.1", port).start()
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
