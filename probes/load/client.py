"""One streaming request to an OpenAI-compatible server, timed the way vLLM's `bench serve` times it."""

from __future__ import annotations

import json
from collections.abc import Awaitable
from dataclasses import dataclass, field

from probes.load.records import RequestRecord, judge
from probes.load.transport import Pool


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    kind: str = "completions"  # or "chat"
    api_key: str | None = None
    ignore_eos: bool = True
    # sampling parameters sent with every request (a tuner configuration's): they override the defaults
    sampling: dict = field(default_factory=dict)

    @property
    def path(self) -> str:
        return "/v1/chat/completions" if self.kind == "chat" else "/v1/completions"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.api_key}"} if self.api_key else {}

    def body(self, prompt: str | list[dict[str, str]], max_tokens: int) -> dict:
        """The request body; `prompt` as a list is a chat conversation's messages (chat endpoint only)."""
        body: dict = {
            "model": self.model,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if isinstance(prompt, list):
            body["messages"] = prompt
        elif self.kind == "chat":
            body["messages"] = [{"role": "user", "content": prompt}]
        else:
            body["prompt"] = prompt
        if self.ignore_eos:
            body["ignore_eos"] = True
        return {**body, **self.sampling}


def new_client(base_url: str, timeout_s: float, headers: dict[str, str]) -> Pool:
    """The run's connection pool; connection set-up lands in TTFT once per connection. Every request's
    record gets `written_s`, when its last byte left (RequestRecord)."""
    return Pool(base_url, timeout_s, headers)


async def warm(pool: Pool, t0: float) -> None:
    """One GET /v1/models before the clock starts, so that first-use costs (imports, the first
    connection) do not land in the first request's TTFT. Its outcome is not judged here."""
    await pool.request(RequestRecord(index=-1, sent_s=0.0), t0, b"", chat=False, method="GET",
                       path="/v1/models", is_stream=False)  # fmt: skip


async def stream_request(
    pool: Pool, endpoint: Endpoint, prompt: str, max_tokens: int, record: RequestRecord, t0: float
) -> RequestRecord:
    """Fill `record` (whose `sent_s` is set by the caller) from the response stream; never raises."""
    return await begin_request(pool, endpoint, prompt, max_tokens, record, t0)


def begin_request(
    pool: Pool, endpoint: Endpoint, prompt: str, max_tokens: int, record: RequestRecord, t0: float
) -> Awaitable[RequestRecord]:
    """Like `stream_request`, but the bytes leave now when a kept-alive connection is free."""
    return begin_body(pool, endpoint, request_body(endpoint, prompt, max_tokens), record, t0, max_tokens)


def request_body(endpoint: Endpoint, prompt: str | list[dict[str, str]], max_tokens: int) -> bytes:
    """The bytes sent for one request (what a workload's requests digest covers)."""
    return json.dumps(endpoint.body(prompt, max_tokens)).encode()


def begin_body(
    pool: Pool, endpoint: Endpoint, body: bytes, record: RequestRecord, t0: float, max_tokens: int
) -> Awaitable[RequestRecord]:
    """Send `body` (asking for `max_tokens`) now (see `begin_request`); once it is over, the record states
    its outcome (records.judge)."""
    record.max_tokens = max_tokens
    pending = pool.begin(record, t0, body, chat=endpoint.kind == "chat", path=endpoint.path)
    return _judged(pending, record, endpoint.ignore_eos)


async def _judged(
    pending: Awaitable[RequestRecord], record: RequestRecord, ignore_eos: bool
) -> RequestRecord:
    try:
        return await pending
    finally:  # a cancelled request too (failed)
        record.outcome = judge(record, ignore_eos)
