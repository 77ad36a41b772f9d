"""Reading a file given on the command line (or named by a spec) that may come from someone else, bounded.

The user chose the path, so it may be anywhere and may be a symlink, but it must be a regular file no
larger than its limit. It is opened with O_NONBLOCK (a FIFO without a writer would otherwise block the open
for ever), checked with fstat before a byte is read (/dev/zero and other devices are refused, whatever link
leads to them), and at most limit + 1 bytes are read (a file that grows meanwhile is still refused).
`given_lines` streams such a file line by line, each line bounded, so memory stays that of one line
whatever the file's size. `factsheet/untrusted/reading.py` adds the confined reads of files a document
names on top of these.
"""

from __future__ import annotations

import itertools
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from probes.core.errors import InputError

_BLOCK = 1 << 20


class Refused(InputError):
    """A file the tool will not read: outside its folder, not a regular file, or over its size limit."""


def shown(name: object, keep: int = 120) -> str:
    """A name quoted in a message, cut short: a refusal stays one readable line whatever the name."""
    text = repr(name)
    return text if len(text) <= keep else f"{text[:keep]}… ({len(text):,} characters)"


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words (for the one-line refusal)."""
    for test, name in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symlink"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def open_regular(path: Path, limit: int, what: str, flags: int = 0) -> tuple[int, int]:
    """An fd on `path` (a regular file of at most `limit` bytes) and its size; Refused otherwise."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | flags)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"{what} {path}: {kind_of(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise Refused(f"{what} {path}: {st.st_size:,} bytes, over the limit of {limit:,}")
    except BaseException:
        os.close(fd)
        raise
    return fd, st.st_size


def read_fd(fd: int, path: Path, limit: int, what: str) -> bytes:
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise Refused(f"{what} {path}: grew past the limit of {limit:,} bytes while read")
    return data


def read_given(path: Path, limit: int, what: str) -> bytes:
    """The bytes of a file named on the command line (OSError if it cannot be opened)."""
    fd, _ = open_regular(Path(path), limit, what)
    return read_fd(fd, Path(path), limit, what)


class LineTooLong(Refused):
    """A line over its limit (a text file's line, not a blob)."""


def given_lines(path: Path, limit: int, line_limit: int, what: str) -> Iterator[bytes]:
    """The lines of a file given by the user (without their newline), streamed: the size is checked before
    a byte is read, each line is at most `line_limit` bytes (LineTooLong naming its number otherwise) and
    the file at most `limit` bytes however it grows."""
    fd, _ = open_regular(Path(path), limit, what)
    read = 0
    with os.fdopen(fd, "rb") as f:
        for number in itertools.count(1):
            line = f.readline(line_limit + 2)  # the line, its newline, one byte more: too long
            if not line:
                return
            read += len(line)
            if read > limit:
                raise Refused(f"{what} {Path(path).name}: grew past the limit of {limit:,} bytes while read")
            body = line.removesuffix(b"\n")
            if len(body) > line_limit:
                raise LineTooLong(
                    f"{what} {Path(path).name} line {number}: longer than {line_limit:,} bytes "
                    "(not a line of this file)"
                )
            yield body


def hash_fd(fd: int, name: str, limit: int, what: str, hasher) -> None:
    """Feed an open file to `hasher` in blocks (bounded memory), refusing it once it grows past `limit`
    (the size was checked when it was opened; a file still being written can outgrow it)."""
    read = 0
    with os.fdopen(fd, "rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            read += len(block)
            if read > limit:
                raise Refused(f"{what} {name}: grew past the limit of {limit:,} bytes while read")
            hasher.update(block)


def hash_given(path: Path, limit: int, what: str, hasher) -> None:
    """Feed a file given by the user to `hasher` in blocks (bounded memory), within its size limit."""
    fd, _ = open_regular(Path(path), limit, what)
    hash_fd(fd, Path(path).name, limit, what, hasher)
