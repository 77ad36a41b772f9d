"""The output folder: checked writable before anything is measured, an earlier build's refused unless resumed
or overwritten; raw records written atomically, each file headed by the context it binds to (the build's
checkpoints are factsheet.builder.checkpoint's; the check that an output can be written is probes.core.files's
`check_output`, shared with the probes' and the catalogue's outputs)."""

from __future__ import annotations

import shutil
from pathlib import Path

from factsheet.binding import Context, header_line
from factsheet.document.files import BUILD_OUTPUTS, RECORDS_DIR
from factsheet.document.schema import RecordsFile
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError
from probes.core.files import write_atomic

__all__ = ["OutputDir", "OutputFolderInUse", "prepare_output"]


class OutputDir:
    def __init__(self, root: Path):
        self.root = root

    def records(self, name: str, data: bytes, count: int, context: Context) -> RecordsFile:
        """`data` (one record a line) under `records/<name>`, after a header binding it to `context`;
        `count` is the records', the header is not one."""
        rel = f"{RECORDS_DIR}/{name}"
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
