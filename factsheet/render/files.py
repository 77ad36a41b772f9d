"""Writing a document's set of files: all rendered first, then put in place together, each atomically.

A render stopped by a signal (or failing) leaves the folder as it was, or with the whole new set: the slow
work (HTML, PDF) is done before `write_set` is called, and the renames run inside `together`.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from probes.core.errors import InputError
from probes.core.files import together, write_atomic


class RenderError(InputError):
    """A document cannot be rendered where asked (bad output folder, missing templates)."""


def check_folder(out_dir: Path) -> Path:
    """`out_dir` as a Path, refused in one line when it exists and is not a folder."""
    out_dir = Path(out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise RenderError(f"output folder {out_dir}: exists and is not a folder")
    return out_dir


def write_set(files: Sequence[tuple[Path, bytes]]) -> list[Path]:
    """Write every (path, bytes) atomically, as one group (see module doc); returns the paths in order."""
    with together():
        for path, data in files:
            write_atomic(path, data)
    return [path for path, _ in files]
