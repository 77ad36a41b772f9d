"""Prompts for a load point: synthetic text of given token lengths, HumanEval+ prompts or a user's
JSONL file, reproducible from a seed, always with the digest of exactly what was sent.

The prompts are made when each is asked for (probes/load/workloads/drawn.py), never held whole: synthetic
ones are drawn from checkpoints of their random stream, a prompt file's are read back from the file by
byte offset (`PromptFile`), so memory does not grow with the point's count (issue 31 item 1). Same spec
and seed, same prompts and digests as the lists built up front before. Measured (tracemalloc peak of
building a plan of 200,000 requests, and its build time, 2-core host), before / after: synthetic (64 tokens)
180.2 / 0.4 MiB, 1.75 / 1.76 s; code (HumanEval+) 1,024 / 11.5 MiB, 2.77 / 2.21 s; jsonl (a 20,000-row
file of 64-word prompts) 1,024 / 5.8 MiB, 6.00 / 1.29 s (1,024 MiB: the whole-file read allocated a buffer
of the size limit, MAX_TRACE_BYTES)."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import weakref
import zlib
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from probes.core.digests import BLOCK, prefixed, sha256_bytes
from probes.core.errors import InputError
from probes.core.measurement import Model
from probes.core.untrusted.limits import MAX_PROMPT_FILE_INTEGER_DIGITS, MAX_TOKENS, MAX_TRACE_BYTES
from probes.core.untrusted.parsing import NotFinite, TooDeep, parse_json
from probes.core.untrusted.reading import Refused, open_regular
from probes.load.workloads.drawn import CycledPrompts, DrawnPrompts, LazyPrompts
from probes.load.workloads.profiles import WorkloadProfile

# Common one-token English words: without a tokenizer, one word ≈ one token (stated as the method).
WORDS = (
    "the of and to in is was for on are with as by at be this from that have or one had not but what all "
    "were when we there can an your which their said if do will each about how up out them then she many "
    "some so these would other into has more her two like him see time could no make than first been its "
    "who now people my made over did down only way find use may water long little very after words called "
    "just where most know get through back much go good new write our me man too any day same right look"
).split()

# Beside the repository checkout (../shared/data), wherever the command is run from.
DEFAULT_HUMANEVAL_PATH = str(
    Path(__file__).resolve().parents[4] / "shared/data/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz"
)


class WorkloadError(InputError):
    """A workload that cannot be built: bad spec field, unreadable or malformed file."""


class WorkloadConfig(Model):
    """What to send (the prompts' source and lengths), as the user configures it; builds a `Workload`."""

    source: Literal["synthetic", "humaneval", "jsonl"] = "synthetic"
    input_len: int = Field(128, ge=1, le=MAX_TOKENS, description="synthetic: mean prompt length, tokens")
    output_len: int = Field(
        64, ge=1, le=MAX_TOKENS, description="mean max_tokens (a JSONL line's output_len wins)"
    )
    length_distribution: Literal["fixed", "uniform", "normal"] = Field(
        "fixed",
        description="spread of input and output lengths around their means: uniform on "
        "[mean·(1 − spread), mean·(1 + spread)] (vLLM's range ratio) or normal with sd = spread·mean",
    )
    length_spread: float = Field(0.0, ge=0, le=1, description="see length_distribution")
    path: str | None = Field(None, description="humaneval: the .jsonl.gz file; jsonl: the user's file")
    tokenizer_path: str | None = Field(
        None, description="target's tokenizer.json for exact synthetic lengths"
    )
    seed: int = 0

    @model_validator(mode="after")
    def _check(self) -> WorkloadConfig:
        if self.source == "jsonl" and not self.path:
            raise WorkloadError("workload.path: required when source is 'jsonl'")
        if self.length_distribution == "fixed" and self.length_spread:
            raise WorkloadError("workload.length_spread: needs length_distribution 'uniform' or 'normal'")
        return self


class SystemPrompt(Model):
    """A system message the workload sent: its text's digest, never the text."""

    sha256: str = Field(description="sha256 of the system prompt's text, UTF-8")
    size_bytes: int = Field(ge=0, description="length of the text, UTF-8 bytes")
    sessions: int = Field(ge=1, description="sessions (or requests) that sent it")


class Workload(Model):
    """The workload as sent: its digest identifies the exact prompts and lengths."""

    prompts_digest: str = Field(description="sha256 of the JSON list of prompts sent")
    input_len: int = Field(description="nominal (mean) prompt length, tokens")
    length_method: str
    num_prompts: int
    source: str = "synthetic"
    output_lens_digest: str | None = Field(None, description="sha256 of the per-request max_tokens list")
    output_len_method: str | None = None
    file_digest: str | None = Field(None, description="sha256 of the source file (humaneval, jsonl)")
    spec: WorkloadConfig | None = Field(None, description="the configuration it was built from")
    profile: str | None = Field(None, description="workload profile (older: synthetic)")
    generator_version: str | None = Field(
        None, description="version of the profile's generator: equal version, spec and seed → equal requests"
    )
    parameters: WorkloadProfile | None = Field(None, description="the profile's parameters (files by name)")
    requests_digest: str | None = Field(
        None,
        description="sha256 of every request body exactly as sent, in request-index order, each followed by "
        "a newline",
    )
    system_prompts: list[SystemPrompt] | None = Field(
        None,
        description="each distinct system prompt sent, in the order first sent; []: no request carries a "
        "system message (each is the prompt alone, as the user turn) (None: not recorded)",
    )


@dataclass(frozen=True)
class Prompts:
    """A built workload: its prompts, made when each is asked for (never a list of them all)."""

    prompts: LazyPrompts
    output_lens: list[int] | None  # per-request max_tokens; None: the point's output_len
    workload: Workload


def _digest(obj) -> str:
    # json.dumps as written since 1.0 (keys in order, default separators): the recorded digests stay comparable
    return sha256_bytes(json.dumps(obj).encode())


def load_tokenizer(path: str | None):
    # Absent tokenizer: documented fallback to word counts (the description says so), not an error.
    if not path or not Path(path).is_file():
        return None
    # deferred: the tokenizer library loads only when a spec names a tokenizer folder to trim prompts with
    from tokenizers import Tokenizer

    try:
        return Tokenizer.from_file(path)
    except Exception as exc:  # noqa: BLE001 - the library raises a bare Exception for any unreadable file
        raise WorkloadError(f"workload.tokenizer_path: {path}: not a tokenizer.json ({exc})") from None


def _fit_to_tokens(words: list[str], target: int, tokenizer) -> str:
    """Trim the word list until the tokenizer counts at most `target` tokens (closest below)."""
    n = min(len(words), target)
    # Bisect on the word count: token count grows with words, so the longest fitting prefix is unique.
    lo, hi = 1, n
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if len(tokenizer.encode(" ".join(words[:mid]), add_special_tokens=False).ids) <= target:
            lo = mid
        else:
            hi = mid - 1
    return " ".join(words[:lo])


def _length_array(rng: np.random.Generator, mean: int, count: int, spec: WorkloadConfig) -> np.ndarray:
    """`count` lengths, at least 1 each (8 bytes a request; a fixed length is one value seen `count` times)."""
    if spec.length_distribution == "uniform":
        lo, hi = round(mean * (1 - spec.length_spread)), round(mean * (1 + spec.length_spread))
        vals = rng.integers(max(1, lo), max(1, hi) + 1, size=count)
    elif spec.length_distribution == "normal":
        vals = np.rint(rng.normal(mean, spec.length_spread * mean, size=count))
    else:
        return np.broadcast_to(np.int64(max(1, mean)), (count,))
    return np.maximum(vals, 1).astype(np.int64)


def _lengths(rng: np.random.Generator, mean: int, count: int, spec: WorkloadConfig) -> list[int]:
    return _length_array(rng, mean, count, spec).tolist()


def _length_desc(spec: WorkloadConfig, what: str, mean: int) -> str:
    if spec.length_distribution == "fixed":
        return f"{what} {mean}"
    return (
        f"{what} {spec.length_distribution} around {mean} (spread {spec.length_spread:g}, seed {spec.seed})"
    )


def synthetic_prompts(
    count: int,
    input_len: int,
    seed: int = 0,
    tokenizer_path: str | None = None,
    output_len: int | None = None,
) -> tuple[LazyPrompts, Workload]:
    """`count` prompts of `input_len` tokens (the lead's original entry point; fixed lengths). `output_len`:
    the max_tokens every request asks for, so that the recorded spec states it (without it,
    the configuration's default, as before)."""
    lengths = {"output_len": output_len} if output_len is not None else {}
    spec = WorkloadConfig(input_len=input_len, seed=seed, tokenizer_path=tokenizer_path, **lengths)
    built = synthetic_workload(spec, count, fixed_output=True)
    return built.prompts, built.workload


def synthetic_workload(spec: WorkloadConfig, count: int, *, fixed_output: bool = False) -> Prompts:
    rng = np.random.default_rng(spec.seed)
    tok = load_tokenizer(spec.tokenizer_path)
    in_lens = _length_array(rng, spec.input_len, count, spec)
    # Each prompt drawn when its request is due, from the stream the list was drawn from (the lengths
    # first, then each prompt's words in turn, then the output lengths): the same text, never all held.
    prompts = DrawnPrompts(
        rng, count, partial(_synthetic_prompt, in_lens, tok), partial(_synthetic_skip, in_lens)
    )
    lens = _length_desc(spec, "tokens", spec.input_len)
    name = Path(spec.tokenizer_path).name if spec.tokenizer_path else None
    desc = (
        f"random common words trimmed to {lens} by the target's tokenizer ({name}, "
        f"{sha256_bytes(Path(spec.tokenizer_path).read_bytes())})"
        if tok and spec.tokenizer_path
        else f"random common English words, {lens} words (≈1 token each; no tokenizer "
        f"{'found at ' + str(name) if name else 'given'}, so the server's "
        "usage.prompt_tokens in the raw records gives the exact count)"
    )
    out = None if fixed_output else _lengths(rng, spec.output_len, count, spec)
    return _prompts(prompts, out, spec, desc, "synthetic", None)


def _synthetic_prompt(in_lens: np.ndarray, tok, rng: np.random.Generator, i: int) -> str:
    n = int(in_lens[i])
    words = [WORDS[k] for k in rng.integers(0, len(WORDS), size=n)]
    return _fit_to_tokens(words, n, tok) if tok else " ".join(words)


def _synthetic_skip(in_lens: np.ndarray, rng: np.random.Generator, i: int) -> None:
    rng.integers(0, len(WORDS), size=int(in_lens[i]))  # _synthetic_prompt's one draw from the stream


def _prompts(prompts: LazyPrompts, out_lens, spec, desc, source, file_digest) -> Prompts:
    return Prompts(
        prompts=prompts,
        output_lens=out_lens,
        workload=Workload(
            prompts_digest=prompts.digest,
            input_len=spec.input_len,
            length_method=desc,
            num_prompts=len(prompts),
            source=source,
            output_lens_digest=_digest(out_lens) if out_lens is not None else None,
            output_len_method=_length_desc(spec, "max_tokens", spec.output_len) if out_lens else None,
            file_digest=file_digest,
            spec=_as_recorded(spec),
        ),
    )


class PromptFile(Sequence[str]):
    """The `prompt` of each row of a prompt file, kept on disk: each row's prompt is written, once checked,
    to an unlinked temporary file and read back from there when asked for. What memory holds is per row its
    offset and size there and its output_len (24 bytes a row, whatever its prompt's length); the user's
    file is read once, so a change to it afterwards changes nothing sent. Pickled for a worker process
    (which may be on another node), it is the list of the rows' prompts."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()
        self.fd, self.end = self.file.fileno(), 0
        self.starts, self.sizes = array("q"), array("q")
        self.output_lens = array("q")  # 0: none given (the spec's); -1: not an integer in range
        self.bad_output_len: tuple[int, int] | None = None  # (row, line) of the first such -1
        weakref.finalize(self, self.file.close)

    def add(self, row: dict, line: int) -> None:
        n = row.get("output_len", 0)
        if "output_len" in row and (
            isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TOKENS
        ):
            n = -1
            if self.bad_output_len is None:
                self.bad_output_len = (len(self.starts), line)
        data = row["prompt"].encode("utf-8", "surrogatepass")  # a JSON "\ud800" is a lone surrogate
        self.file.write(data)
        self.starts.append(self.end)
        self.sizes.append(len(data))
        self.end += len(data)
        self.output_lens.append(n)

    def done(self) -> PromptFile:
        self.file.flush()
        return self

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, k):  # an int: one row's prompt (Sequence's iteration and slicing build on it)
        if isinstance(k, slice):
            return [self[j] for j in range(*k.indices(len(self)))]
        return os.pread(self.fd, self.sizes[k], self.starts[k]).decode("utf-8", "surrogatepass")

    def __reduce__(self):
        return (list, (list(self),))


class _Rows:
    """A prompt file's rows found as its content streams past, checked as the whole text was before: lines
    as str.splitlines splits the text (counted so, blank ones skipped), each by the bounded parser. The
    first error is kept, not raised, so the one reported is the one reading the whole file first gave: a
    read or gzip error, then the first line not UTF-8, then the first bad row."""

    def __init__(self, path: str):
        self.path, self.rows = path, PromptFile()
        self.parts: list[bytes] = []  # the line read so far (one line's memory, however long)
        self.physical = self.line = 0  # "\n" lines; lines as splitlines counts them
        self.not_utf8: int | None = None  # the first "\n" line not UTF-8 (counted as the whole text's error)
        self.error: str | None = None

    def feed(self, block: bytes) -> None:
        start = 0
        while (end := block.find(b"\n", start)) != -1:
            self.parts.append(block[start : end + 1])
            self._physical(b"".join(self.parts))
            self.parts.clear()
            start = end + 1
        if start < len(block):
            self.parts.append(block[start:])

    def close(self) -> PromptFile:
        if self.parts:
            self._physical(b"".join(self.parts))
        if self.not_utf8 is not None:
            raise WorkloadError(f"workload.path: {self.path} line {self.not_utf8}: not UTF-8 text")
        if self.error is not None:
            raise WorkloadError(self.error)
        if not len(self.rows):
            raise WorkloadError(f"workload.path: {self.path} holds no prompts")
        return self.rows.done()

    def _physical(self, data: bytes) -> None:
        self.physical += 1
        if self.not_utf8 is not None:
            return
        try:
            text = data.decode("utf-8")  # "\n" is never inside a UTF-8 sequence: a line decodes alone
        except UnicodeDecodeError:
            self.not_utf8 = self.physical
            return
        for body in text.splitlines():  # "\r", "\u2028"... end a line too, as they always did
            self.line += 1
            if body.strip() and self.error is None:
                self._row(body)

    def _row(self, body: str) -> None:
        where = f"workload.path: {self.path} line {self.line}"
        try:  # the bounded parser: depth, finite numbers, integer digits
            row = parse_json(body, where, integer_digits=MAX_PROMPT_FILE_INTEGER_DIGITS)
        except (TooDeep, NotFinite) as exc:
            self.error = str(exc)
            return
        except InputError as exc:
            cause = exc.__cause__
            msg = cause.msg if isinstance(cause, json.JSONDecodeError) else str(exc)
            self.error = f"{where}: not JSON ({msg})"
            return
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            self.error = f"{where}: needs a string field 'prompt'"
            return
        self.rows.add(row, self.line)


def _raw_blocks(fd: int, path: str, digest) -> Iterator[bytes]:
    """The file's bytes block by block, each fed to `digest`; refused once past MAX_TRACE_BYTES (its size
    was checked when opened; a file still being written can outgrow it)."""
    read = 0
    while block := os.read(fd, BLOCK):
        read += len(block)
        if read > MAX_TRACE_BYTES:
            raise Refused(
                f"workload.path: {path}: grew past the limit of {MAX_TRACE_BYTES:,} bytes while read"
            )
        digest.update(block)
        yield block


def _inflated(blocks: Iterator[bytes], path: str) -> Iterator[bytes]:
    """A .gz stream's content (its first member, as zlib reads it), block by block, at most MAX_TRACE_BYTES
    of it (a small gzip bomb expands a thousandfold); the rest of the file is still read (its digest)."""
    inflate = zlib.decompressobj(wbits=31)
    total = 0
    for block in blocks:
        pending = block
        while not inflate.eof:
            data = inflate.decompress(pending, BLOCK)
            pending = inflate.unconsumed_tail
            total += len(data)
            if total > MAX_TRACE_BYTES:
                raise WorkloadError(
                    f"workload.path: {path}: expands past the limit of {MAX_TRACE_BYTES:,} bytes"
                )
            if data:
                yield data
            if not pending and len(data) < BLOCK:  # a full block may leave output inside zlib: ask again
                break
    if not inflate.eof:
        raise WorkloadError(f"workload.path: {path}: cannot read (a truncated gzip stream)")


def _prompt_file(path: str) -> tuple[str, PromptFile]:
    """The file's sha256 and its rows' prompts, streamed: read once, never whole."""
    p = Path(path)
    if not p.exists():
        raise WorkloadError(f"workload.path: no such file {path}")
    if not p.is_file():
        raise WorkloadError(f"workload.path: {path} is not a regular file")
    digest = hashlib.sha256()
    try:
        fd, _ = open_regular(p, MAX_TRACE_BYTES, "workload.path:")  # size before read
        rows = _Rows(path)
        try:
            blocks = _raw_blocks(fd, path, digest)
            for data in _inflated(blocks, path) if path.endswith(".gz") else blocks:
                rows.feed(data)
        finally:
            os.close(fd)
    except (OSError, zlib.error) as exc:  # a bad gzip header or stream included
        raise WorkloadError(f"workload.path: {path}: cannot read ({exc})") from None
    return prefixed(digest.hexdigest()), rows.close()


def humaneval_prompts(spec: WorkloadConfig, count: int) -> Prompts:
    path = spec.path or DEFAULT_HUMANEVAL_PATH
    file_digest, rows = _prompt_file(path)
    # Shuffled with the seed, then cycled: a run longer than the 164 tasks repeats them in that order.
    order = np.random.default_rng(spec.seed).permutation(len(rows))
    prompts = CycledPrompts(rows, count, order)
    out = _lengths(np.random.default_rng(spec.seed + 1), spec.output_len, count, spec)
    desc = f"HumanEval+ task prompts from {Path(path).name}, seed-{spec.seed} order, cycled"
    return _prompts(prompts, out, spec, desc, "humaneval", file_digest)


def jsonl_prompts(spec: WorkloadConfig, count: int) -> Prompts:
    path = spec.path or ""
    file_digest, rows = _prompt_file(path)
    # A row's output_len is checked when the run sends that row (the first `count` rows), as it was.
    if rows.bad_output_len is not None and rows.bad_output_len[0] < count:
        raise WorkloadError(
            f"workload.path: {path} line {rows.bad_output_len[1]}: output_len must be an integer from 1 to "
            f"{MAX_TOKENS:,}"
        )
    n = len(rows)
    out = [rows.output_lens[i % n] or spec.output_len for i in range(count)]
    desc = f"user prompts from {Path(path).name}, in file order, cycled"
    return _prompts(CycledPrompts(rows, count), out, spec, desc, "jsonl", file_digest)


def _as_recorded(spec: WorkloadConfig) -> WorkloadConfig:
    """The configuration as a factsheet records it: files by name (their sha256 is beside it), never the
    machine path they were read from (a home cache, a temporary or checkout folder)."""
    names = {k: Path(v).name for k, v in (("path", spec.path), ("tokenizer_path", spec.tokenizer_path)) if v}
    return spec.model_copy(update=names)


def build_workload(spec: WorkloadConfig, count: int) -> Prompts:
    """The `count` prompts (and max_tokens) a point sends, from `spec`."""
    if count < 1:
        raise WorkloadError(f"workload: count must be ≥ 1, got {count}")
    if spec.source == "humaneval":
        return humaneval_prompts(spec, count)
    if spec.source == "jsonl":
        return jsonl_prompts(spec, count)
    return synthetic_workload(spec, count)
