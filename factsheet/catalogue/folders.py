"""The site's own folders: written only through real folders of the site, deleted only inside it.

A site is output that may be restored from somewhere others can write (a CI cache, a Pages branch, an
archive): a folder of it may have been replaced by a symlink to elsewhere. Before anything is written into
a folder the site names, a symlink (or a file) in its place is removed, the link itself and never what it
points to; a deletion unlinks a link and removes a real folder with `shutil.rmtree`, which does not follow
links inside it."""

from __future__ import annotations

import shutil
from pathlib import Path


def own_folder(site: Path, relative: str) -> Path:
    """`site/relative` as a real folder of the site (made when absent), no link on the way."""
    here = site
    for part in Path(relative).parts:
        here = here / part
        if here.is_symlink() or (here.exists() and not here.is_dir()):
            here.unlink()
        here.mkdir(exist_ok=True)
    return here


def remove(path: Path) -> None:
    """Delete `path` inside the site: a link or a file is unlinked, a real folder removed with its content."""
    if path.is_symlink() or not path.is_dir():
        path.unlink()
    else:
        shutil.rmtree(path)
