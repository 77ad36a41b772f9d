"""`factsheet catalogue` (registered in factsheet/cli/commands.py): flags to one call of build_catalogue."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factsheet import api
from factsheet.cli.common import Terminal, guarded

out = Terminal()
err = Terminal(stderr=True)


@guarded
def catalogue(
    folders: Annotated[
        list[Path], typer.Argument(help="folders to look for factsheet.json in (recursively)")
    ],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="the site's folder (new, or an earlier catalogue)")
    ],
    pubkey: Annotated[
        list[Path] | None,
        typer.Option("--pubkey", help="Ed25519 public key (PEM) to verify signatures with (repeatable)"),
    ] = None,
) -> None:
    """A static, offline site over every build: index, per-deployment trends and diffs, documents."""

    def progress(line: str) -> None:  # hundreds of builds take a minute: say how far it got
        err.print(f"catalogue: {line}")

    result = api.build_catalogue(folders, output, pubkey or [], progress).site
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(result.signatures.items()))
    out.print(
        f"catalogue: {result.builds} builds of {result.deployments} deployments ({statuses or 'none'}); "
        f"{len(result.read)} factsheets read and re-derived, {result.unsupported} do not re-derive; "
        f"{result.diffs_computed} diffs computed",
        highlight=False,
        markup=False,
    )
    out.print(f"  {result.index}")


def register(app: typer.Typer) -> None:
    app.command("catalogue")(catalogue)
