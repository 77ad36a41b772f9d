"""Host side of the execution sandbox: one fresh, isolated process per program.

The child (`_runner.py`) only reports outputs; this side enforces every deadline, caps what it reads,
decodes pure data (never unpickles) and kills the whole process group when done or late.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import Field

from probes.core.measurement import Count, Model

_RUNNER = Path(__file__).with_name("_runner.py")
_READ_CHUNK = 1 << 16
# The sandbox's own start (a Python process, its isolation, the test inputs read): 10 s was passed on a 2-core
# host with a busy loop on one core and a real vLLM on the other, and a start that is late is no verdict.
SETUP_GRACE_S = 30.0


class SandboxLimits(Model):
    """OS limits applied to each sandboxed program."""

    # EvalPlus sets 4 GiB on its own worker, whose imports already map ~2.1 GiB (measured through the
    # parity bench), so a program gets ~1.9-2.0 GiB there; this runner maps 14 MiB.
    address_space_bytes: Count = Field(
        2 << 30, gt=0, description="RLIMIT_AS per sandbox process (what EvalPlus leaves a program)"
    )
    file_size_bytes: Count = Field(1 << 20, ge=0, description="RLIMIT_FSIZE: largest file it may write")
    open_files: Count = Field(64, gt=8, description="RLIMIT_NOFILE")
    processes: Count = Field(
        64,
        gt=1,
        description="RLIMIT_NPROC for the sandbox's own unprivileged uid (one per sandbox, never shared)",
    )
    output_bytes: Count = Field(
        64 << 20, gt=0, description="cap on the bytes of one result line (one output)"
    )
    namespaces: bool = Field(True, description="use net/mount/pid namespaces where the kernel allows")


@dataclass
class Record:
    """One line from the runner, already decoded to pure data."""

    # "L" program loaded, "R" output, "E" exception, "X" load failure, "D" set done, "C" the set's
    # process ended (message: how), "K" nothing usable before the deadline (killed, closed, malformed)
    kind: str
    output: object = None
    seconds: float | None = None
    message: str = ""
    gap: float = 0.0  # parent-observed time since the previous record: call + encode + transfer + decode


@dataclass
class SandboxRun:
    """Handle on a running sandbox: `start()`, `header()`, `next(limit)` per record, then `close()`.

    Each of `sets` (base inputs, plus inputs) runs in a fresh process; per set the runner sends L (or X),
    an R (or E) per input, D, then C once that process has ended.
    """

    program: str
    entry_point: str
    sets: list[list]
    limits: SandboxLimits
    cpu_s: int
    graded: bool = False  # the runner goes on after an input that raised (the harness's graded mode)
    isolation: list[str] = field(default_factory=list)
    wall_seconds: float = 0.0
    _started: float = 0.0
    _proc: subprocess.Popen | None = None
    _fd: int = -1
    _workdir: str = ""
    _buffer: bytes = b""

    def start(self) -> None:
        self._started = time.monotonic()
        self._workdir = tempfile.mkdtemp(prefix="factsheet-sandbox-")
        read_fd, write_fd = os.pipe()
        payload = {
            "program": self.program,
            "entry_point": self.entry_point,
            "sets": self.sets,
            "workdir": self._workdir,
            "namespaces": self.limits.namespaces,
            "graded": self.graded,
            "limits": {
                "cpu_s": self.cpu_s,
                "address_space_bytes": self.limits.address_space_bytes,
                "file_size_bytes": self.limits.file_size_bytes,
                "open_files": self.limits.open_files,
                "processes": self.limits.processes if os.geteuid() == 0 else None,
            },
        }
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", str(_RUNNER), str(write_fd)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                pass_fds=(write_fd,),
                cwd=self._workdir,
                env=_child_env(),
                start_new_session=True,
            )
        finally:
            os.close(write_fd)
        self._fd = read_fd
        try:
            self._proc.stdin.write(json.dumps(payload).encode())
            self._proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def header(self) -> bool:
        """Reads the isolation header; False if the sandbox did not come up."""
        header = self._next_line(time.monotonic() + SETUP_GRACE_S)
        if header is None or not header.startswith(b"H "):
            return False
        self.isolation = _decode_isolation(header[2:])
        return True

    def next(self, limit: float) -> Record:
        """The next record, which must arrive within `limit` seconds."""
        begin = time.monotonic()
        record = _parse(self._next_line(begin + limit), limit)
        record.gap = time.monotonic() - begin
        return record

    def close(self) -> None:
        if self._proc is not None:
            _kill_group(self._proc)
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        shutil.rmtree(self._workdir, ignore_errors=True)
        self.wall_seconds = time.monotonic() - self._started

    def _next_line(self, deadline: float) -> bytes | None:
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or len(self._buffer) > self.limits.output_bytes:
                return None
            ready, _, _ = select.select([self._fd], [], [], remaining)
            if not ready:
                return None
            chunk = os.read(self._fd, _READ_CHUNK)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line


def _child_env() -> dict[str, str]:
    # Nothing from the host environment leaks in (tokens, proxies, PYTHON*).
    return {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1", "HOME": "/"}


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def _decode_isolation(raw: bytes) -> list[str]:
    try:
        value = json.loads(raw)
    except ValueError:
        return []
    return [str(v) for v in value] if isinstance(value, list) else []


def _parse(line: bytes | None, limit: float) -> Record:
    if line is None:
        return Record(
            "K", message=f"no result within {limit:.3g} s (timeout, crash, early exit or output cap)"
        )
    tag, _, rest = line.partition(b" ")
    try:
        if tag == b"R":
            seconds, _, data = rest.partition(b" ")
            return Record("R", output=decode_output(json.loads(data)), seconds=float(seconds))
        if tag in (b"E", b"X", b"C"):
            return Record(tag.decode(), message=str(json.loads(rest)))
        if tag in (b"L", b"D"):
            return Record(tag.decode())
    except (ValueError, RecursionError, TypeError, KeyError, IndexError) as exc:
        return Record("K", message=f"malformed result line: {type(exc).__name__}")
    return Record("K", message="malformed result line")


class Opaque:
    """A returned value the runner could not express as data; equal to nothing."""

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __eq__(self, other: object) -> bool:
        return False

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<opaque {self.type_name}>"


class _Int(int):
    pass


class _Float(float):
    pass


class _Str(str):
    pass


class _List(list):
    pass


class _Tuple(tuple):
    pass


class _Dict(dict):
    pass


class _Set(set):
    pass


class _FrozenSet(frozenset):
    pass


# `$like`: a returned subclass of a builtin (numpy scalars too) -> equal to its value, not of its type.
_LIKE = {
    "int": _Int,
    "float": _Float,
    "str": _Str,
    "list": _List,
    "tuple": _Tuple,
    "dict": _Dict,
    "set": _Set,
    "frozenset": _FrozenSet,
}


def decode_output(value: object) -> object:
    """Tagged JSON (see `_runner._encode`) back to builtin values."""
    if isinstance(value, list):
        return [decode_output(v) for v in value]
    if not isinstance(value, dict):
        return value
    (tag, inner), *rest = value.items()
    if rest:
        raise ValueError("bad tag")
    if tag == "$tuple":
        return tuple(decode_output(v) for v in inner)
    if tag == "$dict":
        return {_hashable(decode_output(k)): decode_output(v) for k, v in inner}
    if tag == "$set":
        return {_hashable(decode_output(v)) for v in inner}
    if tag == "$int":
        return int(inner, 16)
    if tag == "$opaque":
        return Opaque(str(inner))
    if tag == "$like":
        base, value = inner
        return _LIKE[base](decode_output(value))
    raise ValueError("bad tag")


def _hashable(value: object) -> object:
    try:
        hash(value)
    except TypeError as exc:
        raise ValueError("unhashable key") from exc
    return value
