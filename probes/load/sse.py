"""Server-sent events of an OpenAI-compatible stream, applied to a request record as they arrive."""

from __future__ import annotations

import json

from probes.load.records import RequestRecord


def _chunk_text(payload: dict, chat: bool) -> str:
    choices = payload.get("choices") or []
    if not choices:
        return ""
    if chat:
        return (choices[0].get("delta") or {}).get("content") or ""
    return choices[0].get("text") or ""


class SSEParser:
    """Feed raw body bytes with their arrival time; every event in one read gets that read's time."""

    __slots__ = ("chat", "record", "buffer", "finished", "text")

    def __init__(self, chat: bool, record: RequestRecord):
        self.chat, self.record = chat, record
        self.buffer = b""
        self.finished = False  # [DONE] seen
        self.text: list[str] = []  # the reply, piece by piece (a chat session's next turn carries it)

    def feed(self, data: bytes, now: float) -> str:
        """Returns 'done' after [DONE], 'error' after an error event, else 'more'."""
        self.buffer += data.replace(b"\r\n", b"\n")  # SSE allows CRLF line ends
        *events, self.buffer = self.buffer.split(b"\n\n")
        for event in events:
            state = self._event(event, now)
            if state != "more":
                return state
        return "more"

    def _event(self, event: bytes, now: float) -> str:
        rec = self.record
        for line in event.splitlines():
            if not line.startswith(b"data:"):
                continue
            data = line[5:].strip()
            if data == b"[DONE]":
                self.finished = True
                return "done"
            payload = json.loads(data)
            if "error" in payload:
                rec.error_kind, rec.error = "protocol", f"error event: {payload['error']}"
                return "error"
            choices = payload.get("choices") or []
            reason = choices[0].get("finish_reason") if choices and isinstance(choices[0], dict) else None
            if reason:
                rec.finish_reason = str(reason)
            text = _chunk_text(payload, self.chat)
            if text:
                self.text.append(text)
                if rec.first_chunk_s is None:
                    rec.first_chunk_s = now
                rec.chunk_s.append(now)
            usage = payload.get("usage")
            if usage:
                rec.prompt_tokens = usage.get("prompt_tokens")
                rec.prompt_tokens_source = "usage" if rec.prompt_tokens is not None else None
                rec.output_tokens = usage.get("completion_tokens")
                rec.output_tokens_source = "usage"
        return "more"

    @property
    def ended(self) -> bool:
        """The reply ended as the server meant it to: [DONE], or a finish_reason (transformers serve ends
        its stream after the chunk with finish_reason and usage, without [DONE])."""
        return self.finished or self.record.finish_reason is not None

    def close(self) -> None:
        """Derive end time and (fallback) token count once the exchange is over."""
        rec = self.record
        rec.reply = "".join(self.text)
        if rec.chunk_s:
            rec.end_s = rec.chunk_s[-1]
        if rec.output_tokens is None and rec.chunk_s and rec.error_kind is None:
            # Fallback when the server sent no usage: one token per content chunk (stated in the record).
            rec.output_tokens, rec.output_tokens_source = len(rec.chunk_s), "chunks"
