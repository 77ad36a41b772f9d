"""The one way an output or cache file is written: atomically, durably, and without leftovers.

Readers see the old file or the whole new one, never a torn write: the bytes go to a temporary file
beside the target (same file system), are flushed and fsynced, then renamed over the target, and the
folder is fsynced so the rename survives a power cut. A writer killed with SIGKILL cannot clean up its
temporary file; the next write into that folder removes temporaries whose writing process is gone.
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from pathlib import Path

FILE_MODE = 0o644  # outputs are for others to read (mkstemp alone gives 0600)
_TMP = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+\.tmp$")


def write_atomic(path: Path | str, data: bytes | str) -> Path:
    """Write `data` (str is UTF-8 encoded) to `path` atomically; returns the path."""
    path = Path(path)
    if isinstance(data, str):
        data = data.encode()
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_temporaries(path.parent)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)
    return path


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
