"""The output folder: checked writable before anything is measured, an earlier build's refused unless resumed
or overwritten; raw records written atomically, each file headed by the context it binds to (the build's
checkpoints are factsheet.build.checkpoint's)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from factsheet.binding import Context, header_line
from factsheet.document.files import BUILD_OUTPUTS
from factsheet.document.schema import RecordsFile
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.files import write_atomic

__all__ = ["OutputDir", "OutputFolderInUse", "check_output", "prepare_output"]


def check_output(path: Path, *, file: bool = False) -> Path:
    """Refuse an output that cannot be written before any work is done (bad input: one line, exit 2,
    nothing written). A folder need not exist yet; an existing one is written into. With `file`, `path`
    names a file."""
    if file and path.is_dir():
        raise InputError(f"output file {path}: is a folder")
    OutputDir(path.parent if file else path).check_writable()
    return path


class OutputDir:
    def __init__(self, root: Path):
        self.root = root

    def check_writable(self) -> None:
        """Fail before measuring anything, without creating the folder (bad input writes nothing)."""
        existing = self.root.absolute()
        while not existing.exists():
            existing = existing.parent
        if not existing.is_dir() or not os.access(existing, os.W_OK | os.X_OK):
            raise InputError(f"output folder {self.root}: {existing} is not a writable folder")

    def records(self, name: str, data: bytes, count: int, context: Context) -> RecordsFile:
        """`data` (one record a line) under `records/<name>`, after a header binding it to `context`;
        `count` is the records', the header is not one."""
        rel = f"records/{name}"
        data = header_line(context) + data
        write_atomic(self.root / rel, data)
        return RecordsFile(path=rel, sha256=sha256_bytes(data), records=count)


class OutputFolderInUse(InputError):
    """The output folder holds an earlier build and neither --resume nor --overwrite was given."""


def prepare_output(root: Path, *, resume: bool, overwrite: bool) -> None:
    """Refuse a non-empty output folder unless resuming; with `overwrite`, remove an earlier build's files."""
    root = Path(root)
    if not root.is_dir() or not any(root.iterdir()):
        return
    if resume:
        return
    if overwrite:
        for name in BUILD_OUTPUTS:
            path = root / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        return
    raise OutputFolderInUse(
        f"output folder {root}: not empty (an earlier build?); pass --resume to reuse its measurements, "
        "--overwrite to replace it, or choose another folder with -o"
    )
