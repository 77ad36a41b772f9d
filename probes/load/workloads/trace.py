"""`trace`: replay a JSONL request trace (the published Mooncake traces' format) at its absolute schedule.

One JSON object a line: `timestamp` (ms from the trace's start, non-decreasing), `input_length` and
`output_length` (tokens, ≥ 1) and optional `hash_ids` (ids of `block_size`-token prompt blocks: equal ids
are equal blocks, so two requests sharing leading ids share that prefix token for token). The text is
generated: block `h` is the same words wherever it appears (drawn from the seed and `h`), the rest of a
prompt beyond its blocks is unique to it. Send time = (timestamp − first timestamp) × time_scale."""

from __future__ import annotations

import functools
import hashlib
import json
import math
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from probes.core.digests import prefixed
from probes.core.errors import InputError
from probes.core.untrusted.limits import (
    MAX_HASH_IDS,
    MAX_REQUESTS,
    MAX_TOKENS,
    MAX_TRACE_BYTES,
    MAX_TRACE_LINE_BYTES,
)
from probes.core.untrusted.parsing import NotFinite, TooDeep, parse_json
from probes.core.untrusted.reading import LineTooLong, given_lines, hash_given
from probes.load.workloads.context import BuildContext, stamped
from probes.load.workloads.drawn import LazyPrompts, streamed_digest
from probes.load.workloads.plan import Plan, digest_json
from probes.load.workloads.profiles import TraceProfile
from probes.load.workloads.vocabulary import Vocabulary
from probes.load.workloads.workload import Workload, WorkloadError

GENERATOR_VERSION = "trace/1"
BLOCK_CACHE = 1024  # blocks (of 512 tokens by default: ~4 MiB of word references)


@dataclass(frozen=True)
class TraceRequest:
    timestamp_ms: float
    input_length: int
    output_length: int
    hash_ids: tuple[int, ...]


def _where(path: str, line: int) -> str:
    return f"workload.path: {Path(path).name} line {line}"


def _int(row: dict, key: str, where: str, minimum: int) -> int:
    v = row.get(key)
    if v is None:
        raise WorkloadError(f"{where}: missing '{key}'")
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise WorkloadError(f"{where}: '{key}' must be an integer ≥ {minimum}, got {v!r}")
    if v > MAX_TOKENS:
        raise WorkloadError(f"{where}: '{key}' is {v:,} tokens, over the limit of {MAX_TOKENS:,}")
    return v


def _request(row: object, where: str, previous: float | None) -> TraceRequest:
    if not isinstance(row, dict):
        raise WorkloadError(f"{where}: not a JSON object")
    ts = row.get("timestamp")
    if ts is None:
        raise WorkloadError(f"{where}: missing 'timestamp'")
    if isinstance(ts, bool) or not isinstance(ts, int | float) or not math.isfinite(ts) or ts < 0:
        raise WorkloadError(f"{where}: 'timestamp' must be a number of ms ≥ 0, got {ts!r}")
    if previous is not None and ts < previous:
        raise WorkloadError(
            f"{where}: timestamp {ts:g} is before the previous line's {previous:g} (not in order)"
        )
    ids = row.get("hash_ids", [])
    if isinstance(ids, list) and len(ids) > MAX_HASH_IDS:
        raise WorkloadError(f"{where}: 'hash_ids' holds {len(ids):,} ids, over the limit of {MAX_HASH_IDS:,}")
    if not isinstance(ids, list) or any(isinstance(h, bool) or not isinstance(h, int) or h < 0 for h in ids):
        raise WorkloadError(f"{where}: 'hash_ids' must be a list of integers ≥ 0")
    return TraceRequest(
        float(ts), _int(row, "input_length", where, 1), _int(row, "output_length", where, 1), tuple(ids)
    )


def read_trace(path: str, limit: int) -> tuple[str, list[TraceRequest]]:
    """The file's sha256 and its first `limit` requests, checked line by line (the first bad line is named).
    The file is streamed, never read whole: its size is checked before a byte is read, each line is at
    most MAX_TRACE_LINE_BYTES and parsed by the bounded parser (depth, finite numbers, integer digits). What
    the lines ask for together is not limited: the prompts are made one at a time when due (TracePrompts), so
    a run's memory is that of its lines, not of its text (the whole Mooncake hour asks for ~134 M tokens)."""
    p = Path(path)
    if not p.is_file():
        raise WorkloadError(
            f"workload.path: {path}: {'not a regular file' if p.exists() else 'no such file'}"
        )
    limit = min(limit, MAX_REQUESTS)
    out: list[TraceRequest] = []
    lines = given_lines(p, MAX_TRACE_BYTES, MAX_TRACE_LINE_BYTES, "workload.path:")
    try:
        for i, line in enumerate(lines, 1):
            if len(out) == limit:
                break
            if not line.strip():
                continue
            where = _where(path, i)
            if b"\0" in line:
                raise WorkloadError(f"{where}: not a JSONL text line (binary file?)")
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError:
                raise WorkloadError(f"{where}: not UTF-8 text (binary file?)") from None
            try:
                row = parse_json(text, where)
            except (TooDeep, NotFinite) as exc:  # named with the line already
                raise WorkloadError(str(exc)) from None
            except InputError as exc:
                cause = exc.__cause__
                raise WorkloadError(
                    f"{where}: not JSON ({cause.msg if isinstance(cause, json.JSONDecodeError) else exc})"
                ) from None
            out.append(_request(row, where, out[-1].timestamp_ms if out else None))
    except LineTooLong as exc:
        raise WorkloadError(str(exc)) from None
    finally:
        lines.close()
    if not out:
        raise WorkloadError(f"workload.path: {Path(path).name}: holds no requests")
    digest = hashlib.sha256()
    hash_given(p, MAX_TRACE_BYTES, "workload.path:", digest)
    return prefixed(digest.hexdigest()), out


def _prompt(req: TraceRequest, i: int, words: list[str], block_size: int, seed: int, block=None) -> str:
    """Request i's prompt; `block(h)` gives block h's words (drawn here when not given)."""
    if block is None:
        block = lambda h: _draw(words, np.random.default_rng([seed, h]), block_size)  # noqa: E731
    # only the blocks the prompt reaches: ids past input_length / block_size add no token
    used = req.hash_ids[: -(-req.input_length // block_size)]
    # The words joined a block at a time (the text is that of joining them all: every piece holds ≥ 1 word);
    # word by word, a Mooncake hour's 136 M tokens took a minute to plan, most of it in per-word Python.
    pieces, have = [], 0
    for h in used:
        blk = block(h)
        take = min(len(blk), req.input_length - have)
        pieces.append(" ".join(blk if take == len(blk) else blk[:take]))
        have += take
    rest = req.input_length - have
    if rest > 0:  # the part beyond its blocks is this request's own (a stream keyed by the line, not an id)
        pieces.append(" ".join(_draw(words, np.random.default_rng([seed, 1 << 40, i]), rest)))
    return " ".join(pieces)


def _draw(words: list[str], rng: np.random.Generator, tokens: int) -> list[str]:
    # Vocabulary.draw's draw, on the words alone (a worker process is sent the words, not the tokenizer);
    # indexed by Python ints (.tolist()) in C (map): a numpy integer as a list index costs several times more
    return list(map(words.__getitem__, rng.integers(0, len(words), size=tokens).tolist()))


class TracePrompts(LazyPrompts):
    """The trace's prompts, each generated when it is asked for (when its request is due) from its line's
    lengths and hash ids and the seed: what is held is the lines, never the text. A Mooncake prompt is
    ~7k tokens (~40 kB of text); 12,031 of them held at once were most of a replay's memory (issue 31)."""

    def __init__(self, reqs: list[TraceRequest], words: list[str], block_size: int, seed: int):
        self.reqs, self.words, self.block_size, self.seed = reqs, words, block_size, seed
        self.count = len(reqs)
        # The most recently used blocks' words: a trace's shared prefixes recur, and a block drawn again
        # costs what most of a prompt costs (~1.6 ms for 7k tokens, on the sending loop). Bounded, so
        # memory stays that of BLOCK_CACHE blocks whatever the trace's length.
        self._blocks: OrderedDict[int, list[str]] = OrderedDict()

    def __getstate__(self) -> dict:  # a worker process is sent the lines, not the cache
        return {**self.__dict__, "_blocks": OrderedDict()}

    def _block(self, h: int) -> list[str]:
        words = self._blocks.get(h)
        if words is not None:
            self._blocks.move_to_end(h)
            return words
        words = _draw(self.words, np.random.default_rng([self.seed, h]), self.block_size)
        self._blocks[h] = words
        if len(self._blocks) > BLOCK_CACHE:
            self._blocks.popitem(last=False)
        return words

    def _prompt(self, i: int) -> str:
        return _prompt(self.reqs[i], i, self.words, self.block_size, self.seed, self._block)

    @functools.cached_property
    def digest(self) -> str:  # type: ignore[override]  # every prompt made once, one at a time
        return streamed_digest(self)


def scheduled_rate(offsets: list[float]) -> float | None:
    span = offsets[-1] - offsets[0] if len(offsets) > 1 else 0.0
    return (len(offsets) - 1) / span if span > 0 else None


def build(profile: TraceProfile, ctx: BuildContext) -> Plan:
    file_digest, reqs = read_trace(profile.path, ctx.count)
    vocab = Vocabulary(ctx.tokenizer_path)
    prompts = TracePrompts(reqs, vocab.words, profile.block_size, ctx.seed)
    t0 = reqs[0].timestamp_ms
    offsets = [(r.timestamp_ms - t0) / 1000 * profile.time_scale for r in reqs]
    outs = [r.output_length for r in reqs]
    workload = Workload(
        prompts_digest=prompts.digest,
        input_len=round(sum(r.input_length for r in reqs) / len(reqs)),
        length_method=(
            f"{len(reqs)} requests of {Path(profile.path).name} at their input_length; hash_ids blocks of "
            f"{profile.block_size} tokens shared wherever an id repeats, the rest unique; {vocab.method}"
        ),
        num_prompts=len(prompts),
        source="trace",
        output_lens_digest=digest_json(outs),
        output_len_method="max_tokens = the line's output_length",
        file_digest=file_digest,
    )
    return Plan(prompts, outs, stamped(workload, profile, GENERATOR_VERSION), offsets=offsets)


def trace_shape(profile: TraceProfile, count: int) -> tuple[float, int, int, int]:
    """What a trace point states: the trace's own open-loop rate after time_scale (its `rate`), its request
    count and its mean input and output lengths (rounded)."""
    _, reqs = read_trace(profile.path, count)
    offsets = [(r.timestamp_ms - reqs[0].timestamp_ms) / 1000 * profile.time_scale for r in reqs]
    rate = scheduled_rate(offsets)
    if rate is None:
        raise WorkloadError(
            f"workload.path: {Path(profile.path).name}: needs two requests at different times"
        )
    n = len(reqs)
    return (
        rate,
        n,
        round(sum(r.input_length for r in reqs) / n),
        round(sum(r.output_length for r in reqs) / n),
    )
