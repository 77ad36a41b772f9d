"""`factsheet export` (registered in factsheet/cli/commands.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factsheet import api
from factsheet.cli.common import Terminal, guarded
from factsheet.export.formats import ExportFormat as Format

out = Terminal()


@guarded
def export(
    factsheet_json: Annotated[Path, typer.Argument(help="factsheet.json")],
    fmt: Annotated[Format, typer.Option("--format", "-f", help="hf, cyclonedx, spdx or gpai-coverage")],
    output: Annotated[Path, typer.Option("-o", "--output", help="output folder")],
) -> None:
    """Export a factsheet for a model registry: HF model card, CycloneDX 1.6 BOM or SPDX 3.0.1; or which EU
    GPAI documentation items it covers (gpai-coverage.json)."""
    result = api.export_factsheet(factsheet_json, fmt, output)
    out.print(f"{result.document} (from factsheet {result.factsheet_sha256})")


def register(app: typer.Typer) -> None:
    app.command("export")(export)
