"""One streaming request to an OpenAI-compatible server, timed the way vLLM's `bench serve` times it."""

from __future__ import annotations

import json
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


def new_client(base_url: str, max_connections: int, timeout_s: float) -> httpx.AsyncClient:
    # One pooled client per run: connection set-up must not land inside TTFT.
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=max_connections)
    return httpx.AsyncClient(base_url=base_url, limits=limits, timeout=httpx.Timeout(timeout_s))


def _chunk_text(payload: dict, chat: bool) -> str:
    choices = payload.get("choices") or []
    if not choices:
        return ""
    if chat:
        return (choices[0].get("delta") or {}).get("content") or ""
    return choices[0].get("text") or ""


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
            async for line in resp.aiter_lines():
                now = time.perf_counter() - t0
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    done = True
                    break
                payload = json.loads(data)
                if "error" in payload:
                    record.error_kind, record.error = "protocol", f"error event: {payload['error']}"
                    return record
                if _chunk_text(payload, chat):
                    if record.first_chunk_s is None:
                        record.first_chunk_s = now
                    record.chunk_s.append(now)
                usage = payload.get("usage")
                if usage:
                    record.prompt_tokens = usage.get("prompt_tokens")
                    record.output_tokens = usage.get("completion_tokens")
                    record.output_tokens_source = "usage"
    except httpx.TimeoutException as exc:
        record.error_kind, record.error = "timeout", f"{type(exc).__name__}: {exc}"
    except httpx.ConnectError as exc:
        record.error_kind, record.error = "connect", f"{type(exc).__name__}: {exc}"
    except (httpx.ReadError, httpx.RemoteProtocolError) as exc:
        record.error_kind, record.error = "stream_cut", f"{type(exc).__name__}: {exc}"
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
