"""Reading files that may come from a hostile author, bounded and confined.

Two kinds of file are read:

- a file *given* on the command line (factsheet.json, its attestation, a policy): the user chose the path,
  so it may be anywhere and may be a symlink, but it must be a regular file no larger than its limit. It is
  opened with O_NONBLOCK (a FIFO without a writer would otherwise block the open for ever), checked with
  fstat before a byte is read (/dev/zero and other devices are refused, whatever link leads to them), and
  at most limit + 1 bytes are read (a file that grows meanwhile is still refused).
- a file a *document names* (raw records, signed subjects, a policy's `extends:`): the name must stay inside
  the document's folder. It is refused, before anything is opened, when it is absolute, has a `..` part,
  holds a NUL or other control character, or resolves (after symlinks) outside the folder's real path; with
  `no_symlinks` (signed subjects) any symlink on the way is refused too, so a signature only ever covers
  files really in the folder. What is then opened is the resolved path, with O_NOFOLLOW.

Every refusal is an `InputError` (exit 2) naming the path and the reason; a file that is simply absent stays
an `OSError` (FileNotFoundError) for the caller to report as missing.
"""

from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from factsheet.untrusted.limits import MAX_RECORDS_FILE_BYTES
from factsheet.untrusted.parsing import check_json_depth

# A file given on the command line is read by the one bounded reader below the factsheet (the probes'
# trace files use it too); confinement to a document's folder is the factsheet's own, here.
from probes.core.untrusted.reading import Refused, hash_fd, kind_of, open_regular, read_fd, read_given
from probes.core.untrusted.reading import shown as _shown

__all__ = [
    "Refused",
    "confined",
    "hash_confined",
    "kind_of",
    "read_confined",
    "read_given",
    "read_records_file",
]


def confined(folder: Path, name: object, what: str, *, no_symlinks: bool = False) -> Path:
    """The real path of `name` inside `folder`, or Refused naming why not (nothing is opened)."""
    if not isinstance(name, str) or not name:
        raise Refused(f"{what} {_shown(name)}: not a file name")
    bad = next((c for c in name if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        raise Refused(f"{what} {_shown(name)}: holds the control character {bad!r}")
    pure = PurePosixPath(name)
    if pure.is_absolute():
        raise Refused(f"{what} {_shown(name)}: an absolute path; it must be relative to {folder}")
    if "\\" in name:  # a Windows path (C:\\x, ..\\x): the tool writes '/' only
        raise Refused(f"{what} {_shown(name)}: holds a backslash; paths are written with '/'")
    if ".." in pure.parts:
        raise Refused(f"{what} {_shown(name)}: a '..' part leads out of {folder}")
    base = Path(folder).resolve()
    if no_symlinks:
        walked = base
        for part in pure.parts:
            walked = walked / part
            if walked.is_symlink():
                raise Refused(
                    f"{what} {_shown(name)}: {walked.relative_to(base)} is a symlink (not accepted here)"
                )
    real = (base / pure).resolve()
    if not real.is_relative_to(base):
        raise Refused(f"{what} {_shown(name)}: resolves to {real}, outside {base}")
    return real


def read_confined(folder: Path, name: object, limit: int, what: str, *, no_symlinks: bool = False) -> bytes:
    """The bytes of `name` inside `folder` (see `confined`); OSError (e.g. FileNotFoundError) if absent."""
    real = confined(folder, name, what, no_symlinks=no_symlinks)
    fd, _ = _open_confined(real, name, limit, what)
    return read_fd(fd, real, limit, what)


def hash_confined(folder: Path, name: object, limit: int, what: str, hasher) -> None:
    """Feed `name` inside `folder` to `hasher` in blocks (bounded memory), symlinks refused."""
    real = confined(folder, name, what, no_symlinks=True)
    fd, _ = _open_confined(real, name, limit, what)
    hash_fd(fd, _shown(name), limit, what, hasher)


def _open_confined(real: Path, name: object, limit: int, what: str) -> tuple[int, int]:
    try:
        return open_regular(real, limit, what, os.O_NOFOLLOW)
    except OSError as exc:
        if real.is_symlink():  # swapped for a link since it was resolved (ELOOP)
            raise Refused(f"{what} {_shown(name)}: became a symlink while read") from exc
        raise


def read_records_file(folder: Path, name: object) -> bytes:
    """A raw-records file a factsheet names: confined to its folder, within the size limit, and nested no
    deeper than the limit (scanned before any line is parsed); OSError if it is absent."""
    data = read_confined(folder, name, MAX_RECORDS_FILE_BYTES, "raw records")
    check_json_depth(data, f"raw records {name}")
    return data
