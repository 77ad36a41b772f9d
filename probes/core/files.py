"""The one way an output or cache file is written: atomically, durably, and without leftovers.

Readers see the old file or the whole new one, never a torn write: the bytes go to a temporary file
beside the target (same file system), are flushed and fsynced, then renamed over the target, and the
folder is fsynced so the rename survives a power cut. A writer killed with SIGKILL cannot clean up its
temporary file; the next write into that folder removes temporaries whose writing process is gone.

A writer stopped by SIGTERM or SIGINT can: the temporaries being written are known (`remove_in_flight`, for
a signal handler that ends the process without unwinding), and a group of files that only make sense
together (a factsheet's JSON, HTML and PDF) is written inside `together()`, during which a stop is put off
until the last file is in place: an interrupted render leaves the old set or the new one, never a mix.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

from probes.core.errors import InputError

FILE_MODE = 0o644  # outputs are for others to read (mkstemp alone gives 0600)
_TMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


def check_output(path: Path, *, file: bool = False) -> Path:
    """Refuse an output that cannot be written before any work is done (bad input: one line, exit 2,
    nothing written, the folder not created). A folder need not exist yet; an existing one is written into.
    With `file`, `path` names a file."""
    path = Path(path)
    if file and path.is_dir():
        raise InputError(f"output file {path}: is a folder")
    folder = path.parent if file else path
    existing = folder.absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
        raise InputError(f"output folder {folder}: {existing} is not a writable folder")
    return path


class _Writing:
    """What this process is writing now: its temporaries, and whether a group of files is being put in place
    (with the stop signals that arrived meanwhile, raised again when the group is complete)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # re-entrant: a signal handler may run while the main thread holds it
        self.temporaries: set[str] = set()
        self.groups = 0
        self.put_off: list[int] = []


_writing = _Writing()


def remove_in_flight() -> None:
    """Delete the temporaries this process is writing (for a signal handler that exits without unwinding,
    when the writers' own clean-up will not run)."""
    with _writing.lock:
        names = list(_writing.temporaries)
    for name in names:
        with contextlib.suppress(OSError):
            os.unlink(name)


@contextlib.contextmanager
def together() -> Iterator[None]:
    """Write a group of files as one: a stop signal arriving meanwhile (see `put_off`) takes effect once
    the group is complete. Only the renames should run inside: the slow work (rendering) comes before."""
    with _writing.lock:
        _writing.groups += 1
    try:
        yield
    finally:
        with _writing.lock:
            _writing.groups -= 1
            pending = _writing.put_off if _writing.groups == 0 else []
            if _writing.groups == 0:
                _writing.put_off = []
        for signum in dict.fromkeys(pending):
            signal.raise_signal(signum)  # the handler now acts on it


def writing_group() -> bool:
    """Whether a group of files is being put in place now (a stop signal is put off until it is complete)."""
    with _writing.lock:
        return _writing.groups > 0


def put_off(signum: int) -> bool:
    """For a stop-signal handler: True when a group of files is being written, in which case the signal is
    raised again when the group is complete and the handler should return without acting."""
    with _writing.lock:
        if _writing.groups:
            _writing.put_off.append(signum)
            return True
    return False


def write_atomic(path: Path | str, data: bytes | str) -> Path:
    """Write `data` (str is UTF-8 encoded) to `path` atomically; returns the path."""
    write_group({Path(path): data})
    return Path(path)


def write_group(files: dict[Path, bytes | str]) -> list[Path]:
    """Write several files as one: each goes to a temporary beside it first, and only once every one is
    written are they renamed over their targets (inside `together()`), so a failure on any leaves each old
    file in place (a signature and the bundles it binds: all new or all old)."""
    staged: list[tuple[Path, str]] = []
    try:
        for path, data in files.items():
            staged.append((Path(path), _stage(Path(path), data.encode() if isinstance(data, str) else data)))
        with together():
            for path, tmp in staged:
                os.replace(tmp, path)
    finally:
        for _, tmp in staged:
            Path(tmp).unlink(missing_ok=True)  # only those never renamed are still there
            with _writing.lock:
                _writing.temporaries.discard(tmp)
    for folder in dict.fromkeys(path.parent for path, _ in staged):
        _fsync_dir(folder)
    return [path for path, _ in staged]


def _stage(path: Path, data: bytes) -> str:
    """`data` written and fsynced to a temporary beside `path`; returns the temporary's name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    with _writing.lock:
        _writing.temporaries.add(tmp)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        with _writing.lock:
            _writing.temporaries.discard(tmp)
        raise
    return tmp


def is_temporary(path: Path) -> bool:
    """Whether `path` is a temporary file of `write_atomic` (never a finished output)."""
    return _TMP.match(path.name) is not None


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete temporaries in `folder` left by writers that no longer run (killed mid-write)."""
    removed = []
    with contextlib.suppress(OSError):
        for entry in folder.iterdir():
            m = _TMP.match(entry.name)
            if m and not _alive(int(m["pid"])):
                with contextlib.suppress(FileNotFoundError):
                    entry.unlink()
                    removed.append(entry)
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process: alive
    return True


def _fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # not every file system lets a folder be opened or fsynced
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
