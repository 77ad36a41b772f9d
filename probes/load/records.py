"""The raw per-request record every load metric is computed from (kept beside the factsheet)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from pydantic import Field

from probes.core.measurement import Model
from probes.core.records_header import parse_record_line, split_header

ErrorKind = Literal[
    "http", "timeout", "connect", "reset", "read", "stream_cut", "protocol", "cancelled", "not_streamed"
]
# How a request ended: `completed` only when the reply ended as asked (OUTCOME_RULE);
# `truncated`: an answer that ended short of it (a stream cut by the server, a stop while EOS is ignored);
# `failed`: no answer (an error, or no content at all).
Outcome = Literal["completed", "truncated", "failed"]
TokenSource = Literal["usage", "tokenizer", "chunks"]
OUTCOME_RULE = (
    "completed: no error, content received, and the reply ended as asked: its output tokens reached max_tokens "
    "(by the server's usage.completion_tokens when sent; else by finish_reason 'length' or the count of its "
    "source), or finish_reason 'stop' when the request did not ask to ignore EOS; truncated: content "
    "received but ended otherwise (no finish_reason and short, 'stop' while EOS is ignored, any other "
    "reason); failed: an error or no content. A stream that ends after a finish_reason without "
    "`data: [DONE]` is whole; one that stops before any finish_reason and [DONE] is cut (failed, stream_cut)"
)
TOKEN_SOURCE_RULE = (
    "output tokens by the best source available: the server's usage.completion_tokens ('usage'), else the "
    "workload's tokenizer over the streamed text ('tokenizer'), else one per content chunk ('chunks'); each "
    "record names its source"
)


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
    prompt_tokens_source: Literal["usage", "tokenizer"] | None = Field(
        None,
        description="where prompt_tokens comes from: the server's usage.prompt_tokens, else the workload's "
        "tokenizer over the prompt sent (completions endpoint only: a chat template adds tokens)",
    )
    output_tokens: int | None = None
    output_tokens_source: TokenSource | None = Field(None, description=TOKEN_SOURCE_RULE)
    max_tokens: int | None = Field(
        None, description="the reply length the request asked for (None: an older record)"
    )
    finish_reason: str | None = Field(
        None,
        description="the reply's finish_reason as the server sent it; None when no chunk carried one",
    )
    outcome: Outcome | None = Field(
        None, description=f"None: an older record, judged by `ok`. {OUTCOME_RULE}"
    )
    http_status: int | None = None
    error_kind: ErrorKind | None = None
    error: str | None = None
    session: int | None = Field(None, description="chat-sessions: the session this turn belongs to")
    turn: int | None = Field(None, description="chat-sessions: turn index in its session, from 1")
    worker: int | None = Field(None, description="load.workers > 1: the worker process that sent it, from 0")
    written_s: float | None = Field(
        None,
        description="when the request's last byte was handed to the kernel (its socket buffer): every record "
        "(an older one only with load.workers > 1); None when no byte left (connect failed). "
        "sent_s is when the client began writing it, its body built and encoded (before, "
        "the body was built after sent_s), a new connection connected after it. Send lag and every latency "
        "run from sent_s; the open loop's write lag and achieved rate by the last byte from written_s",
    )
    # The reply's text, kept only while the run needs it (a session's next turn carries it); never written.
    reply: str | None = Field(None, exclude=True)

    @property
    def answered(self) -> bool:
        """Content received without an error: completed or truncated."""
        return self.error_kind is None and self.first_chunk_s is not None

    @property
    def ok(self) -> bool:
        """Completed (OUTCOME_RULE); an older record states no outcome: answered."""
        return self.answered if self.outcome is None else self.outcome == "completed"

    @property
    def truncated(self) -> bool:
        return self.outcome == "truncated"

    @property
    def send_lag_s(self) -> float | None:
        return None if self.scheduled_s is None else self.sent_s - self.scheduled_s - self.queued_s

    @property
    def write_lag_s(self) -> float | None:
        """As `send_lag_s`, to the last byte (written_s) instead of the first (sent_s)."""
        if self.scheduled_s is None or self.written_s is None:
            return None
        return self.written_s - self.scheduled_s - self.queued_s


def judge(rec: RequestRecord, ignore_eos: bool) -> Outcome:
    """The request's outcome by OUTCOME_RULE from its own fields and whether EOS was to be ignored: the run
    and `validate` both call this. A record without `max_tokens` (an older one) is judged as it was."""
    if not rec.answered:
        return "failed"
    if rec.max_tokens is None:
        return "completed"
    count = rec.output_tokens
    if rec.output_tokens_source == "usage" and count is not None:
        reached = count >= rec.max_tokens
    else:  # a re-tokenized text or a chunk count is not exact: the server's finish_reason decides too
        reached = rec.finish_reason == "length" or (count is not None and count >= rec.max_tokens)
    if reached or (rec.finish_reason == "stop" and not ignore_eos):
        return "completed"
    return "truncated"


def counted_by_tokenizer(records: list[RequestRecord], count, ignore_eos: bool, prompt_of=None) -> None:
    """Token counts the server did not send, from the workload's tokenizer (`count`: text → tokens), each
    record's outcome judged again with them (TOKEN_SOURCE_RULE): output tokens over the streamed text (kept
    only while the run runs, so a worker process's records keep their chunk count), prompt tokens over the
    prompt sent (`prompt_of`: index → prompt text; None for chat, whose template adds tokens)."""
    for r in records:
        if r.output_tokens_source != "usage" and r.answered and r.reply:
            r.output_tokens, r.output_tokens_source = count(r.reply), "tokenizer"
            r.outcome = judge(r, ignore_eos)
        if r.prompt_tokens is None and prompt_of is not None and r.answered:
            r.prompt_tokens, r.prompt_tokens_source = count(prompt_of(r.index)), "tokenizer"


_SESSION_FIELDS = frozenset({"session", "turn"})


_JUDGED_FIELDS = frozenset({"max_tokens", "finish_reason", "outcome", "prompt_tokens_source"})


def _left_out(r: RequestRecord) -> set[str]:
    out = set(_SESSION_FIELDS if r.session is None else ())
    if r.outcome is None:  # a record read from an older file: written as it was, byte for byte
        out |= _JUDGED_FIELDS
    if r.worker is None:
        out.add("worker")
        if r.written_s is None:  # an older one-worker record without it: as it was written
            out.add("written_s")
    return out


def record_line(r: RequestRecord) -> bytes:
    """One record as its line in a records file."""
    return r.model_dump_json(exclude=_left_out(r)).encode() + b"\n"


def records_jsonl(records: Iterable[RequestRecord]) -> bytes:
    # Records outside a session are written without session/turn keys, and records of one worker without
    # the worker key, but with `written_s`, which a record read from an older file lacks and so is written without, byte for byte.
    return b"".join(record_line(r) for r in records)


def load_records(data: bytes) -> list[RequestRecord]:
    """The requests of a records file, after its header line when it has one."""
    _, lines = split_header(data)
    return [RequestRecord.model_validate(parse_record_line(line)) for line in lines]
