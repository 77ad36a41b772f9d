"""`factsheet publish` (registered in factsheet/cli/commands.py): flags -> one publish_factsheet call (factsheet.api)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factsheet import api
from factsheet.cli.common import Terminal, guarded

out = Terminal()  # run ids and digests stay whole on one line


@guarded
def publish(
    factsheet_json: Annotated[Path, typer.Argument(help="factsheet.json (its files beside it)")],
    mlflow_uri: Annotated[str, typer.Option("--mlflow-uri", help="MLflow tracking URI")],
    experiment: Annotated[
        str | None, typer.Option("--experiment", help="experiment name (default: the factsheet's name)")
    ] = None,
    registered_model: Annotated[
        str | None,
        typer.Option("--registered-model", help="tag a version of this registered model with the factsheet"),
    ] = None,
    model_version: Annotated[
        str | None,
        typer.Option("--model-version", help="existing version to tag (default: register a new version)"),
    ] = None,
) -> None:
    """Publish a factsheet to MLflow: one run (params, metrics with CIs, tags, artifacts), all or nothing."""
    published = api.publish_factsheet(
        factsheet_json,
        mlflow_uri,
        experiment=experiment,
        registered_model=registered_model,
        model_version=model_version,
    )
    for line in published.run.lines():
        out.print(line)  # names from the factsheet: shown, not sent


def register(app: typer.Typer) -> None:
    app.command("publish")(publish)
