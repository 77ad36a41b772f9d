"""Prompts for a load point: synthetic text of given token lengths, HumanEval+ prompts or a user's
JSONL file, reproducible from a seed, always with the digest of exactly what was sent."""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, model_validator

from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.measurement import Model
from probes.core.untrusted.limits import MAX_PROMPT_FILE_INTEGER_DIGITS, MAX_TOKENS, MAX_TRACE_BYTES
from probes.core.untrusted.parsing import NotFinite, TooDeep, parse_json
from probes.core.untrusted.reading import read_given
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
    Path(__file__).resolve().parents[3] / "shared/data/humanevalplus/HumanEvalPlus-v0.1.10.jsonl.gz"
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
    """A system message the workload sent: its text's digest, never the text (schema >= 1.7.0)."""

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
    profile: str | None = Field(None, description="workload profile (schema >= 1.3.0; older: synthetic)")
    generator_version: str | None = Field(
        None, description="version of the profile's generator: equal version, spec and seed → equal requests"
    )
    parameters: WorkloadProfile | None = Field(None, description="the profile's parameters (files by name)")
    requests_digest: str | None = Field(
        None,
        description="sha256 of every request body exactly as sent, in request-index order, each followed by "
        "a newline (schema >= 1.3.0)",
    )
    system_prompts: list[SystemPrompt] | None = Field(
        None,
        description="each distinct system prompt sent, in the order first sent; []: no request carries a "
        "system message (each is the prompt alone, as the user turn) (schema >= 1.7.0; None: not recorded)",
    )


class Prompts(Model):
    prompts: list[str]
    output_lens: list[int] | None = Field(description="per-request max_tokens; None: the point's output_len")
    workload: Workload


def _digest(obj) -> str:
    # json.dumps as written since 1.0 (keys in order, default separators): the recorded digests stay comparable
    return sha256_bytes(json.dumps(obj).encode())


def load_tokenizer(path: str | None):
    # Absent tokenizer: documented fallback to word counts (the description says so), not an error.
    if not path or not Path(path).is_file():
        return None
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


def _lengths(rng: np.random.Generator, mean: int, count: int, spec: WorkloadConfig) -> list[int]:
    if spec.length_distribution == "uniform":
        lo, hi = round(mean * (1 - spec.length_spread)), round(mean * (1 + spec.length_spread))
        vals = rng.integers(max(1, lo), max(1, hi) + 1, size=count)
    elif spec.length_distribution == "normal":
        vals = np.rint(rng.normal(mean, spec.length_spread * mean, size=count))
    else:
        vals = np.full(count, mean)
    return [int(max(1, v)) for v in vals]


def _length_desc(spec: WorkloadConfig, what: str, mean: int) -> str:
    if spec.length_distribution == "fixed":
        return f"{what} {mean}"
    return (
        f"{what} {spec.length_distribution} around {mean} (spread {spec.length_spread:g}, seed {spec.seed})"
    )


def synthetic_prompts(
    count: int, input_len: int, seed: int = 0, tokenizer_path: str | None = None
) -> tuple[list[str], Workload]:
    """`count` prompts of `input_len` tokens (the lead's original entry point; fixed lengths)."""
    spec = WorkloadConfig(input_len=input_len, seed=seed, tokenizer_path=tokenizer_path)
    built = synthetic_workload(spec, count, fixed_output=True)
    return built.prompts, built.workload


def synthetic_workload(spec: WorkloadConfig, count: int, *, fixed_output: bool = False) -> Prompts:
    rng = np.random.default_rng(spec.seed)
    tok = load_tokenizer(spec.tokenizer_path)
    in_lens = _lengths(rng, spec.input_len, count, spec)
    prompts = []
    for n in in_lens:
        words = [WORDS[i] for i in rng.integers(0, len(WORDS), size=n)]
        prompts.append(_fit_to_tokens(words, n, tok) if tok else " ".join(words))
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


def _prompts(prompts, out_lens, spec, desc, source, file_digest) -> Prompts:
    return Prompts(
        prompts=prompts,
        output_lens=out_lens,
        workload=Workload(
            prompts_digest=_digest(prompts),
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


def _decompressed(raw: bytes, path: str) -> bytes:
    """A .gz file's content, at most MAX_TRACE_BYTES of it (a small gzip bomb expands a thousandfold)."""
    inflate = zlib.decompressobj(wbits=31)
    data = inflate.decompress(raw, MAX_TRACE_BYTES + 1)
    if len(data) > MAX_TRACE_BYTES or inflate.unconsumed_tail:
        raise WorkloadError(f"workload.path: {path}: expands past the limit of {MAX_TRACE_BYTES:,} bytes")
    if not inflate.eof:
        raise WorkloadError(f"workload.path: {path}: cannot read (a truncated gzip stream)")
    return data


def _read(path: str, field: str) -> tuple[bytes, list[dict]]:
    p = Path(path)
    if not p.exists():
        raise WorkloadError(f"workload.path: no such file {path}")
    if not p.is_file():
        raise WorkloadError(f"workload.path: {path} is not a regular file")
    try:
        raw = read_given(p, MAX_TRACE_BYTES, "workload.path:")  # size before read
        data = _decompressed(raw, path) if path.endswith(".gz") else raw
    except (OSError, zlib.error) as exc:  # a bad gzip header or stream included
        raise WorkloadError(f"workload.path: {path}: cannot read ({exc})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise WorkloadError(f"workload.path: {path} line {line}: not UTF-8 text") from None
    rows = []
    for i, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:  # the bounded parser: depth, finite numbers, integer digits
            row = parse_json(
                line, f"workload.path: {path} line {i}", integer_digits=MAX_PROMPT_FILE_INTEGER_DIGITS
            )
        except (TooDeep, NotFinite) as exc:
            raise WorkloadError(str(exc)) from None
        except InputError as exc:
            cause = exc.__cause__
            msg = cause.msg if isinstance(cause, json.JSONDecodeError) else str(exc)
            raise WorkloadError(f"workload.path: {path} line {i}: not JSON ({msg})") from None
        if not isinstance(row, dict) or not isinstance(row.get("prompt"), str):
            raise WorkloadError(f"workload.path: {path} line {i}: needs a string field '{field}'")
        rows.append(row)
    if not rows:
        raise WorkloadError(f"workload.path: {path} holds no prompts")
    return raw, rows


def humaneval_prompts(spec: WorkloadConfig, count: int) -> Prompts:
    path = spec.path or DEFAULT_HUMANEVAL_PATH
    raw, rows = _read(path, "prompt")
    # Shuffled with the seed, then cycled: a run longer than the 164 tasks repeats them in that order.
    order = np.random.default_rng(spec.seed).permutation(len(rows))
    prompts = [rows[order[i % len(rows)]]["prompt"] for i in range(count)]
    out = _lengths(np.random.default_rng(spec.seed + 1), spec.output_len, count, spec)
    desc = f"HumanEval+ task prompts from {Path(path).name}, seed-{spec.seed} order, cycled"
    return _prompts(prompts, out, spec, desc, "humaneval", sha256_bytes(raw))


def jsonl_prompts(spec: WorkloadConfig, count: int) -> Prompts:
    raw, rows = _read(spec.path or "", "prompt")
    picked = [rows[i % len(rows)] for i in range(count)]
    out = []
    for i, row in enumerate(picked):
        n = row.get("output_len", spec.output_len)
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_TOKENS:
            raise WorkloadError(
                f"workload.path: line {i % len(rows) + 1}: output_len must be an integer from 1 to "
                f"{MAX_TOKENS:,}"
            )
        out.append(n)
    desc = f"user prompts from {Path(spec.path or '').name}, in file order, cycled"
    return _prompts([r["prompt"] for r in picked], out, spec, desc, "jsonl", sha256_bytes(raw))


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
