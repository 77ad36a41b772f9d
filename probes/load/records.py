"""The raw per-request record every load metric is computed from (kept beside the factsheet)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from probes.core.measurement import Model
from probes.core.records_header import parse_record_line, split_header

ErrorKind = Literal["http", "timeout", "connect", "reset", "read", "stream_cut", "protocol", "cancelled"]


class RequestRecord(Model):
    """Times are seconds since the run's start (monotonic clock); `None` when the event never happened."""

    index: int
    scheduled_s: float | None = Field(None, description="open loop: when the arrival process scheduled it")
    queued_s: float = Field(0.0, description="time spent waiting for a concurrency slot")
    sent_s: float
    first_chunk_s: float | None = None
    chunk_s: list[float] = Field(default_factory=list, description="arrival of every chunk with content")
    end_s: float | None = None
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    output_tokens_source: Literal["usage", "chunks"] | None = None
    http_status: int | None = None
    error_kind: ErrorKind | None = None
    error: str | None = None
    session: int | None = Field(None, description="chat-sessions: the session this turn belongs to")
    turn: int | None = Field(None, description="chat-sessions: turn index in its session, from 1")
    worker: int | None = Field(None, description="load.workers > 1: the worker process that sent it, from 0")
    written_s: float | None = Field(
        None,
        description="when the request's last byte was handed to the kernel (its socket buffer): every record "
        "of schema >= 1.8.0, before that only with load.workers > 1; None when no byte left (connect failed). "
        "sent_s is when the client began writing it, its body built and encoded (schema >= 1.7.0; before, "
        "the body was built after sent_s), a new connection connected after it. Send lag and every latency "
        "run from sent_s; the open loop's write lag and achieved rate by the last byte from written_s",
    )
    # The reply's text, kept only while the run needs it (a session's next turn carries it); never written.
    reply: str | None = Field(None, exclude=True)

    @property
    def ok(self) -> bool:
        return self.error_kind is None and self.first_chunk_s is not None

    @property
    def send_lag_s(self) -> float | None:
        return None if self.scheduled_s is None else self.sent_s - self.scheduled_s - self.queued_s

    @property
    def write_lag_s(self) -> float | None:
        """As `send_lag_s`, to the last byte (written_s) instead of the first (sent_s)."""
        if self.scheduled_s is None or self.written_s is None:
            return None
        return self.written_s - self.scheduled_s - self.queued_s


_SESSION_FIELDS = frozenset({"session", "turn"})


def _left_out(r: RequestRecord) -> set[str]:
    out = set(_SESSION_FIELDS if r.session is None else ())
    if r.worker is None:
        out.add("worker")
        if r.written_s is None:  # a one-worker record without it: as written before 1.8.0
            out.add("written_s")
    return out


def record_line(r: RequestRecord) -> bytes:
    """One record as its line in a records file."""
    return r.model_dump_json(exclude=_left_out(r)).encode() + b"\n"


def records_jsonl(records: Iterable[RequestRecord]) -> bytes:
    # Records outside a session are written as before schema 1.3.0 (no session/turn keys), and records of
    # one worker as before 1.6.0 (no worker key) but for `written_s` (1.8.0), which a record read from an
    # older file lacks and so is written without, byte for byte.
    return b"".join(record_line(r) for r in records)


def load_records(data: bytes) -> list[RequestRecord]:
    """The requests of a records file, after its header line when it has one (schema >= 1.2.0)."""
    _, lines = split_header(data)
    return [RequestRecord.model_validate(parse_record_line(line)) for line in lines]
