"""`publish_factsheet` (`factsheet publish`) and `build_catalogue` (`factsheet catalogue`): a factsheet
handed to MLflow, and a static site over many builds."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import ValidationError

from factsheet.api.results import Result
from factsheet.catalogue.site import CatalogueResult
from factsheet.catalogue.site import build_catalogue as build
from factsheet.publish.mlflow import PublishResult
from factsheet.publish.mlflow import publish_factsheet as publish
from factsheet.spec.publish import PublishSpec
from probes.core.errors import InputError, describe_validation_error


class Publication(Result):
    """The MLflow run (and registered model version) the factsheet is in."""

    run: PublishResult


def publish_factsheet(
    factsheet_json: Path,
    mlflow_uri: str,
    *,
    experiment: str | None = None,
    registered_model: str | None = None,
    model_version: str | None = None,
) -> Publication:
    """One MLflow run holding the factsheet's figures, CIs, verdict and files, all or nothing (a run of
    the same digest is not sent twice); with `registered_model`, a version tagged with the factsheet."""
    if model_version is not None and registered_model is None:
        raise InputError("--model-version needs --registered-model (the model whose version it is)")
    try:
        spec = PublishSpec(
            mlflow_uri=mlflow_uri,
            experiment=experiment,
            registered_model=registered_model,
            model_version=model_version,
        )
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc)) from None
    return Publication(run=publish(Path(factsheet_json), spec))


class Catalogue(Result):
    site: CatalogueResult


def build_catalogue(
    folders: Sequence[Path],
    output: Path,
    pubkeys: Sequence[Path] = (),
    progress: Callable[[str], None] | None = None,
) -> Catalogue:
    """A static, offline site in `output` over every factsheet.json under `folders` (each re-derived and
    rendered afresh on every run: nothing is read back from an earlier site), signatures checked with
    `pubkeys`; `progress` is told how far it got (every 50 factsheets, every 10 diffs)."""
    site = build([Path(f) for f in folders], Path(output), [Path(k) for k in pubkeys], progress)
    return Catalogue(site=site, written=(site.index,))
