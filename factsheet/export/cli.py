"""`factsheet export` (registered in factsheet/cli.py)."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from factsheet.cli_common import guarded

out = Console(soft_wrap=True)


class Format(StrEnum):
    hf = "hf"
    cyclonedx = "cyclonedx"
    spdx = "spdx"


@guarded
def export(
    factsheet_json: Annotated[Path, typer.Argument(help="factsheet.json")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="hf, cyclonedx or spdx")],
    output: Annotated[Path, typer.Option("-o", "--output", help="output folder")],
) -> None:
    """Export a factsheet for a model registry: HF model card, CycloneDX 1.6 BOM or SPDX 3.0.1."""
    from factsheet.export import cyclonedx, hf, spdx
    from factsheet.export.readout import source
    from factsheet.render import RenderError
    from factsheet.validate import load_factsheet

    sheet = load_factsheet(factsheet_json)
    if output.exists() and not output.is_dir():
        raise RenderError(f"output folder {output}: exists and is not a folder")
    writer = {Format.hf: hf.write, Format.cyclonedx: cyclonedx.write, Format.spdx: spdx.write}[fmt]
    src = source(factsheet_json, sheet)
    out.print(f"{writer(src, output)} (from factsheet {src.sha256})")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
