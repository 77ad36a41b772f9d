"""The feature-model predictor's commands: `factsheet features count|sample MODEL.uvl`, `factsheet campaign`
and `factsheet predict` (added to the main CLI by `register`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factsheet import api
from factsheet.cli.common import Terminal, err, guarded

out = Terminal()  # a summary is JSON on one line

features_app = typer.Typer(
    no_args_is_help=True, help="Feature models (UVL): count and sample configurations."
)


@features_app.command("count")
@guarded
def count(model: Annotated[str, typer.Argument(help="MODEL.uvl, or a bundled model's name")]) -> None:
    """Exact number of valid configurations (BDD), cross-checked by a second counter."""
    out.print(api.count_features(model).summary_json())


@features_app.command("sample")
@guarded
def sample(
    model: Annotated[str, typer.Argument(help="MODEL.uvl, or a bundled model's name")],
    method: Annotated[str, typer.Option(help="twise or uniform")] = "twise",
    t: Annotated[int, typer.Option("-t", help="strength of the t-wise sample (1-3)")] = 2,
    n: Annotated[int, typer.Option("-n", help="uniform sample size")] = 20,
    seed: int = 0,
    output: Annotated[Path | None, typer.Option("-o", help="write configurations as JSON lines here")] = None,
) -> None:
    """A t-wise sample covering every valid t-tuple, or a uniform one; reports size and coverage."""
    out.print(api.sample_features(model, method=method, t=t, n=n, seed=seed, output=output).summary_json())


def campaign(
    spec_path: Annotated[Path, typer.Argument(help="campaign spec (YAML or JSON)")],
    output: Annotated[Path, typer.Option("-o", help="campaign directory (created; resumed if it exists)")],
    executor: Annotated[str | None, typer.Option(help="local or ray (overrides the spec)")] = None,
    ray_address: Annotated[str | None, typer.Option(help="join this Ray cluster")] = None,
) -> None:
    """Measure a sample of configurations (resumable: rerun the same command after an interruption)."""
    result = api.run_campaign(
        spec_path,
        output,
        executor=executor,
        ray_address=ray_address,
        progress=lambda iid: err.print(f"measured {iid}"),
    )
    out.print(result.summary_json())


def predict(
    campaign_dir: Annotated[Path, typer.Argument(help="a campaign directory")],
    targets: Annotated[
        str, typer.Option(help="comma-separated figures to learn")
    ] = "e2el_p50_ms,cpu_s,pass_at_1",
    objective: Annotated[
        str, typer.Option(help="figure to minimise (prefix max: to maximise)")
    ] = "e2el_p50_ms",
    constraint: Annotated[list[str] | None, typer.Option(help="e.g. 'pass_at_1>=0.05' (repeatable)")] = None,
    verify_reps: Annotated[
        int, typer.Option(help="live repetitions to verify the recommendation (0: none)")
    ] = 0,
    confident: Annotated[
        bool,
        typer.Option(help="constraints must hold for the whole 95 % interval, not only the predicted mean"),
    ] = False,
) -> None:
    """Learn the campaign's figures, find the Pareto front, recommend and (optionally) verify."""
    result = api.predict_campaign(
        campaign_dir,
        targets=[t for t in targets.split(",") if t],
        objective=objective,
        constraints=constraint or [],
        verify_reps=verify_reps,
        confident=confident,
    )
    out.print(result.summary_json())


def register(app: typer.Typer) -> None:
    """Add the predictor's commands to the main CLI (one line in factsheet/cli/commands.py)."""
    app.add_typer(
        features_app, name="features", help="Feature models (UVL): count and sample configurations."
    )
    app.command("campaign")(guarded(campaign))
    app.command("predict")(guarded(predict))
