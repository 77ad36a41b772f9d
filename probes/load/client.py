"""One streaming request to an OpenAI-compatible server, timed the way vLLM's `bench serve` times it."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import ssl
import sys
import time
from dataclasses import dataclass

import httpx

from probes.load.records import RequestRecord


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    kind: str = "completions"  # or "chat"
    api_key: str | None = None
    ignore_eos: bool = True

    @property
    def path(self) -> str:
        return "/v1/chat/completions" if self.kind == "chat" else "/v1/completions"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def body(self, prompt: str, max_tokens: int) -> dict:
        body: dict = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if self.kind == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if self.ignore_eos:
            body["ignore_eos"] = True
        return body


def _remember_missing_sniffio() -> None:
    # httpcore retries `import sniffio` at every lock set-up; when the package is absent each retry
    # is a sys.path search. Profiled at 200 req/s it cost more CPU than the HTTP work and halved the
    # rate the client sustains. A None entry makes that import fail at dict-lookup cost (the
    # documented sys.modules behaviour); httpcore then assumes asyncio, which is what runs here.
    if "sniffio" not in sys.modules and importlib.util.find_spec("sniffio") is None:
        sys.modules["sniffio"] = None  # type: ignore[assignment]


CONNECTIONS_PER_SHARD = 16


class ClientPool:
    """Several pooled httpx clients, used round robin.

    httpcore assigns each request by scanning every connection of its pool, on request start and
    on close: quadratic in connections in flight (profiled at 300 req/s: the client's top cost).
    Shards of ≤ 16 connections keep each scan short. Shards have no connection cap, so a request
    never queues inside httpx: the only client-side queue is the one the load point asks for."""

    def __init__(self, base_url: str, max_in_flight: int, timeout_s: float):
        _remember_missing_sniffio()
        shards = max(1, min(64, -(-max_in_flight // CONNECTIONS_PER_SHARD)))
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=CONNECTIONS_PER_SHARD * 2)
        tls = ssl.create_default_context()  # one context: building it costs ~0.1 s per client
        self.clients = [
            httpx.AsyncClient(base_url=base_url, limits=limits, timeout=httpx.Timeout(timeout_s), verify=tls)
            for _ in range(shards)
        ]
        self._next = 0

    def pick(self) -> httpx.AsyncClient:
        self._next = (self._next + 1) % len(self.clients)
        return self.clients[self._next]

    async def warm(self, headers: dict[str, str]) -> None:
        """One GET /v1/models before the clock starts: the first exchange loads httpx's lazy parts
        (~30 ms, measured), which would otherwise land in the first request's TTFT and delay the
        next sends. Its outcome is not judged here: an unreachable target shows in the run itself."""
        with contextlib.suppress(httpx.HTTPError):
            await self.clients[0].get("/v1/models", headers=headers)

    async def __aenter__(self) -> ClientPool:
        return self

    async def __aexit__(self, *exc) -> None:
        for c in self.clients:
            await c.aclose()


def new_client(base_url: str, max_connections: int, timeout_s: float) -> ClientPool:
    # Pooled clients per run: connection set-up must not land inside TTFT more than once per connection.
    return ClientPool(base_url, max_connections, timeout_s)


def _chunk_text(payload: dict, chat: bool) -> str:
    choices = payload.get("choices") or []
    if not choices:
        return ""
    if chat:
        return (choices[0].get("delta") or {}).get("content") or ""
    return choices[0].get("text") or ""


def _take_event(event: bytes, chat: bool, now: float, record: RequestRecord) -> str:
    """Apply one SSE event to `record`; returns 'done', 'error' or 'more'."""
    for line in event.splitlines():
        if not line.startswith(b"data:"):
            continue
        data = line[5:].strip()
        if data == b"[DONE]":
            return "done"
        payload = json.loads(data)
        if "error" in payload:
            record.error_kind, record.error = "protocol", f"error event: {payload['error']}"
            return "error"
        if _chunk_text(payload, chat):
            if record.first_chunk_s is None:
                record.first_chunk_s = now
            record.chunk_s.append(now)
        usage = payload.get("usage")
        if usage:
            record.prompt_tokens = usage.get("prompt_tokens")
            record.output_tokens = usage.get("completion_tokens")
            record.output_tokens_source = "usage"
    return "more"


async def stream_request(
    client: httpx.AsyncClient,
    endpoint: Endpoint,
    prompt: str,
    max_tokens: int,
    record: RequestRecord,
    t0: float,
) -> RequestRecord:
    """Fill `record` (whose `sent_s` is set by the caller) from the response stream; never raises."""
    chat = endpoint.kind == "chat"
    done = False
    try:
        async with client.stream(
            "POST", endpoint.path, json=endpoint.body(prompt, max_tokens), headers=endpoint.headers()
        ) as resp:
            record.http_status = resp.status_code
            if resp.status_code != 200:
                detail = (await resp.aread())[:300].decode(errors="replace")
                record.error_kind, record.error = "http", f"HTTP {resp.status_code}: {detail}"
                return record
            buffer = b""
            # Raw reads, split into SSE events here: every event in one read gets that read's
            # arrival time, and no per-line decoding layer sits between the socket and the clock.
            async for data in resp.aiter_raw():
                now = time.perf_counter() - t0
                buffer += data.replace(b"\r\n", b"\n")  # SSE allows CRLF line ends
                *events, buffer = buffer.split(b"\n\n")
                for event in events:
                    state = _take_event(event, chat, now, record)
                    if state == "done":
                        done = True
                    elif state == "error":
                        return record
                if done:
                    break
    except httpx.TimeoutException as exc:
        record.error_kind, record.error = "timeout", f"{type(exc).__name__}: {exc}"
    except httpx.ConnectError as exc:
        record.error_kind, record.error = "connect", f"{type(exc).__name__}: {exc}"
    except (httpx.ReadError, httpx.WriteError, httpx.RemoteProtocolError) as exc:
        # Before the status line the server reset the connection; after it, it cut the stream.
        record.error_kind = "reset" if record.http_status is None else "stream_cut"
        record.error = f"{type(exc).__name__}: {exc}"
    except (httpx.HTTPError, json.JSONDecodeError) as exc:
        record.error_kind, record.error = "protocol", f"{type(exc).__name__}: {exc}"
    else:
        if not done:
            record.error_kind, record.error = "stream_cut", "stream ended without [DONE]"
        elif record.first_chunk_s is None:
            record.error_kind, record.error = "protocol", "stream carried no content"
    finally:
        if record.chunk_s:
            record.end_s = record.chunk_s[-1]
        if record.output_tokens is None and record.chunk_s and record.error_kind is None:
            # Fallback when the server sent no usage: one token per content chunk (stated in the record).
            record.output_tokens, record.output_tokens_source = len(record.chunk_s), "chunks"
    return record
