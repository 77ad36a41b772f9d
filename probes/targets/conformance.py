"""The conformance preflight: a few requests before the first measured one, asking how the server answers what
the load probe relies on. Each check's verdict is stated in the factsheet (its `conformance` section):

- streaming honoured (`stream: true` answered with server-sent events, not one JSON reply);
- `data: [DONE]` sent at a stream's end, or not (then a reply is complete by its finish_reason);
- usage in the stream when `stream_options.include_usage` asks;
- `finish_reason` present on the last chunk;
- `ignore_eos` honoured: a reply runs to exactly `max_tokens`;
- concurrent requests do not interrupt each other: a second stream started while the first runs leaves the
  first to reach its length;
- tokenizer agreement: the server's prompt token count against the tokenizer's (a completions endpoint).

A server that would make the measurement void (no streaming; cut streams; no way to tell a complete reply from a
cut one) is refused with one line naming the cause and the known remedy (TargetError, exit 2); a milder
deviation is measured and stated.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from typing import Literal

import httpx
from pydantic import Field

from probes.core.measurement import Model
from probes.load.client import Endpoint
from probes.load.workloads.workload import load_tokenizer
from probes.targets.engines import BY_NAME, EngineIdentity
from probes.targets.errors import TargetError

CHECK_TOKENS = 32  # long enough for a second request to arrive while the first streams
PROMPT = "Write a long story about a lighthouse keeper who finds a message in a bottle on the shore."
REQUEST_TIMEOUT_S = 120.0
MAX_REPLY_BYTES = 1024 * 1024
METHOD = (
    f"before the first measured request: one streamed request of max_tokens {CHECK_TOKENS} (temperature 0, "
    "stream_options.include_usage, ignore_eos where the target supports it), then two overlapping ones (the "
    "second sent once the first's first token arrived), on the load's endpoint with the load's model id"
)
Verdict = Literal["conforms", "deviates", "voids", "not checked"]
CheckName = Literal[
    "streaming", "done_event", "stream_usage", "finish_reason", "ignore_eos", "concurrency", "tokenizer"
]
GENERIC_REMEDY = {
    "streaming": "serve the OpenAI API with streaming (stream: true answered as server-sent events)",
    "done_event": "serve streams that end with data: [DONE] or carry a finish_reason",
    "concurrency": "serve concurrent requests without cancelling running ones",
}


class ConformanceCheck(Model):
    name: CheckName
    verdict: Verdict = Field(
        description="conforms; deviates (measured, and stated); voids (the build is refused); not checked (why)"
    )
    detail: str = Field(description="what the server answered, in words")
    remedy: str | None = Field(
        None, description="how to start the server for a valid measurement, where known"
    )


class Conformance(Model):
    """How the server answered the preflight, and the engine found."""

    engine: EngineIdentity
    endpoint: Literal["completions", "chat"]
    requests: int = Field(ge=0, description="requests the preflight sent")
    checks: list[ConformanceCheck]
    method: str = METHOD

    def deviations(self) -> list[ConformanceCheck]:
        return [c for c in self.checks if c.verdict == "deviates"]


@dataclass
class Reply:
    """One streamed request's answer, as the preflight reads it."""

    status: int
    streamed: bool
    done: bool = False
    finish: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    chunks: int = 0  # chunks with content
    first_at: float | None = None
    sent_at: float = 0.0
    ended_at: float = 0.0

    @property
    def tokens(self) -> int:
        """Output tokens: the server's usage where given, else content chunks (one token each on these engines)."""
        return self.completion_tokens if self.completion_tokens is not None else self.chunks


def _event(reply: Reply, data: bytes, chat: bool) -> None:
    if data.strip() == b"[DONE]":
        reply.done = True
        return
    try:
        payload = json.loads(data)
    except ValueError:
        return
    if not isinstance(payload, dict):
        return
    for choice in payload.get("choices") or []:
        if not isinstance(choice, dict):
            continue
        text = (choice.get("delta") or {}).get("content") if chat else choice.get("text")
        if text:
            reply.chunks += 1
            reply.first_at = reply.first_at or time.perf_counter()
        if choice.get("finish_reason"):
            reply.finish = str(choice["finish_reason"])
    usage = payload.get("usage")
    if isinstance(usage, dict):
        reply.prompt_tokens = _int(usage.get("prompt_tokens"), reply.prompt_tokens)
        reply.completion_tokens = _int(usage.get("completion_tokens"), reply.completion_tokens)


def _int(value: object, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _plain(reply: Reply, body: bytes) -> None:
    """A JSON reply to a streamed request: its usage and finish_reason still count."""
    try:
        payload = json.loads(body)
    except ValueError:
        return
    if isinstance(payload, dict):
        usage = payload.get("usage") or {}
        if isinstance(usage, dict):
            reply.prompt_tokens = _int(usage.get("prompt_tokens"), None)
            reply.completion_tokens = _int(usage.get("completion_tokens"), None)


def send(endpoint: Endpoint, max_tokens: int, started: threading.Event | None = None) -> Reply:
    """One request as the load sends it, read whole (bounded); `started` is set at its first content chunk."""
    chat, sent_at = endpoint.kind == "chat", time.perf_counter()
    with httpx.Client(headers=endpoint.headers(), timeout=REQUEST_TIMEOUT_S) as client:
        with client.stream(
            "POST", endpoint.base_url + endpoint.path, json=endpoint.body(PROMPT, max_tokens)
        ) as resp:
            streamed = resp.headers.get("content-type", "").startswith("text/event-stream")
            reply, buffer, read = Reply(status=resp.status_code, streamed=streamed, sent_at=sent_at), b"", 0
            for data in resp.iter_bytes():
                read += len(data)
                if read > MAX_REPLY_BYTES or time.perf_counter() - sent_at > REQUEST_TIMEOUT_S:
                    break  # a reply that never ends is read no further: what came is judged
                buffer += data.replace(b"\r\n", b"\n")
                *events, buffer = buffer.split(b"\n\n")
                for event in events:
                    for line in event.splitlines():
                        if line.startswith(b"data:") and streamed:
                            _event(reply, line[5:], chat)
                if started is not None and reply.first_at is not None:
                    started.set()
            if not streamed:
                _plain(reply, buffer)
    reply.ended_at = time.perf_counter()
    if started is not None:
        started.set()
    return reply


def _overlapping(endpoint: Endpoint, max_tokens: int) -> tuple[Reply, Reply]:
    """Two streams, the second sent once the first's first token arrived."""
    first: list[Reply] = []
    started = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            first.append(send(endpoint, max_tokens, started))
        except (httpx.HTTPError, OSError) as exc:  # stated below, as no reply
            errors.append(exc)
            started.set()

    thread = threading.Thread(target=run, name="conformance-first", daemon=True)
    thread.start()
    started.wait(REQUEST_TIMEOUT_S)
    second = send(endpoint, max_tokens)
    thread.join(REQUEST_TIMEOUT_S)
    if errors or not first:
        raise TargetError(
            f"target: the conformance preflight's first overlapping request failed: {errors[:1]}"
        )
    return first[0], second


def check(
    endpoint: Endpoint, identity: EngineIdentity, tokenizer_path: str | None, ignore_eos: bool
) -> Conformance:
    """Run the preflight; TargetError (exit 2) with the remedy when a check voids the measurement."""
    try:
        alone = send(endpoint, CHECK_TOKENS)
        if alone.status != 200:
            raise TargetError(f"target: a streamed request to {endpoint.path} answered HTTP {alone.status}")
        first, second = _overlapping(endpoint, CHECK_TOKENS) if alone.streamed else (alone, alone)
    except httpx.HTTPError as exc:
        raise TargetError(f"target: the conformance preflight got no answer: {type(exc).__name__}") from None
    checks = judge(alone, first, second, identity, tokenizer_path, ignore_eos, endpoint.kind == "chat")
    found = Conformance(
        engine=identity, endpoint=endpoint.kind, requests=3 if alone.streamed else 1, checks=checks
    )
    refuse(found)
    return found


def refuse(found: Conformance) -> None:
    """One line naming the first check that voids the measurement, and its remedy."""
    for c in found.checks:
        if c.verdict == "voids":
            remedy = f"; {c.remedy}" if c.remedy else ""
            raise TargetError(f"target: {found.engine.label} {c.detail}{remedy}")


def _remedy(identity: EngineIdentity, name: str) -> str | None:
    return BY_NAME[identity.engine].remedies.get(name) or GENERIC_REMEDY.get(name)


def judge(
    alone: Reply, first: Reply, second: Reply, identity: EngineIdentity, tokenizer_path: str | None,
    ignore_eos: bool, chat: bool,
) -> list[ConformanceCheck]:  # fmt: skip
    """Every check's verdict from the three replies (pure: the tests give known replies)."""
    out = [_streaming(alone, identity)]
    if not alone.streamed:
        skipped = "not checked: the server does not stream"
        return out + [
            ConformanceCheck(name=n, verdict="not checked", detail=skipped)
            for n in ("done_event", "stream_usage", "finish_reason", "ignore_eos", "concurrency")
        ] + [_tokenizer(alone, tokenizer_path, chat)]  # fmt: skip
    return out + [
        _done(alone, identity),
        ConformanceCheck(name="stream_usage", verdict="conforms", detail="usage in the stream when asked")
        if alone.completion_tokens is not None
        else ConformanceCheck(
            name="stream_usage", verdict="deviates",
            detail="no usage in the stream although stream_options.include_usage asked: output tokens are "
            "counted without the server's count (the tokenizer over the text, else chunks)",
        ),
        ConformanceCheck(name="finish_reason", verdict="conforms", detail=f"finish_reason {alone.finish!r}")
        if alone.finish is not None
        else ConformanceCheck(
            name="finish_reason", verdict="deviates",
            detail="no chunk carries a finish_reason: a reply's end is told by its length alone",
        ),
        _ignore_eos(alone, ignore_eos),
        _concurrency(alone, first, second, identity),
        _tokenizer(alone, tokenizer_path, chat),
    ]  # fmt: skip


def _streaming(alone: Reply, identity: EngineIdentity) -> ConformanceCheck:
    if alone.streamed:
        return ConformanceCheck(
            name="streaming", verdict="conforms", detail="stream: true answered as server-sent events"
        )
    return ConformanceCheck(
        name="streaming", verdict="voids",
        detail="answers a streamed request with one JSON reply: no time to first token or between tokens can be "
        "measured",
        remedy=_remedy(identity, "streaming"),
    )  # fmt: skip


def _done(alone: Reply, identity: EngineIdentity) -> ConformanceCheck:
    if alone.done:
        return ConformanceCheck(name="done_event", verdict="conforms", detail="streams end with data: [DONE]")
    if alone.finish is not None:
        return ConformanceCheck(
            name="done_event", verdict="deviates",
            detail="streams end after the chunk with finish_reason, without data: [DONE]: a reply is complete "
            "by its finish_reason",
        )  # fmt: skip
    return ConformanceCheck(
        name="done_event", verdict="voids",
        detail="ends its streams with neither data: [DONE] nor a finish_reason: a complete reply cannot be told "
        "from a cut one",
        remedy=_remedy(identity, "done_event"),
    )  # fmt: skip


def _ignore_eos(alone: Reply, asked: bool) -> ConformanceCheck:
    if not asked:
        return ConformanceCheck(
            name="ignore_eos", verdict="not checked",
            detail="not asked (target.supports_ignore_eos false): a reply ends at the model's EOS or at max_tokens",
        )  # fmt: skip
    if alone.tokens == CHECK_TOKENS:
        return ConformanceCheck(
            name="ignore_eos", verdict="conforms", detail=f"a reply ran to exactly max_tokens {CHECK_TOKENS}"
        )
    return ConformanceCheck(
        name="ignore_eos", verdict="deviates",
        detail=f"ignore_eos asked with max_tokens {CHECK_TOKENS}, the reply had {alone.tokens} tokens: replies "
        "end at the model's EOS, their lengths vary",
    )  # fmt: skip


def _concurrency(alone: Reply, first: Reply, second: Reply, identity: EngineIdentity) -> ConformanceCheck:
    length = alone.tokens
    ended = ("length", "stop", "eos_token")
    cut = [
        r for r in (first, second) if r.tokens < length and (alone.finish is None or r.finish not in ended)
    ]
    if not cut and first.ended_at <= second.sent_at:
        return ConformanceCheck(
            name="concurrency", verdict="not checked",
            detail=f"the first stream ended before the second was sent ({length} tokens too fast to overlap)",
        )  # fmt: skip
    if not cut:
        return ConformanceCheck(
            name="concurrency", verdict="conforms",
            detail=f"two overlapping streams both reached {length} tokens ({first.tokens}, {second.tokens})",
        )  # fmt: skip
    return ConformanceCheck(
        name="concurrency", verdict="voids",
        detail=f"cuts running streams when a new request arrives (an overlapping stream ended at {cut[0].tokens} of "
        f"{length} tokens)",
        remedy=_remedy(identity, "concurrency"),
    )  # fmt: skip


def _tokenizer(alone: Reply, tokenizer_path: str | None, chat: bool) -> ConformanceCheck:
    name = "tokenizer"
    if tokenizer_path is None:
        return ConformanceCheck(
            name=name, verdict="not checked", detail="no tokenizer_path: prompts are sized in words"
        )
    if chat:
        return ConformanceCheck(
            name=name, verdict="not checked",
            detail="a chat request's prompt tokens include the chat template, which the tokenizer's count does not apply",
        )  # fmt: skip
    if alone.prompt_tokens is None:
        return ConformanceCheck(name=name, verdict="not checked", detail="the server states no prompt_tokens")
    tokenizer = load_tokenizer(tokenizer_path)
    if tokenizer is None:
        return ConformanceCheck(name=name, verdict="not checked", detail="the tokenizer file is not there")
    counted = len(tokenizer.encode(PROMPT).ids)
    if counted == alone.prompt_tokens:
        return ConformanceCheck(
            name=name, verdict="conforms", detail=f"server and tokenizer both count {counted} prompt tokens"
        )
    return ConformanceCheck(
        name=name, verdict="deviates",
        detail=f"the server counts {alone.prompt_tokens} prompt tokens, the tokenizer {counted}: input lengths "
        "stated from the tokenizer differ from the server's",
    )  # fmt: skip
