"""The feature-model predictor's commands: `factsheet features count|sample MODEL.uvl`, `factsheet campaign`
and `factsheet predict` (added to the main CLI by `register`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from factsheet.cli_common import check_output, guarded
from probes.core.errors import InputError
from probes.core.files import write_atomic

features_app = typer.Typer(
    no_args_is_help=True, help="Feature models (UVL): count and sample configurations."
)


def _space(model: str):
    """A UVL file, or the name of a bundled model (generation_config, vllm_serving)."""
    from tuner.features.configs import BUNDLED, load_bundled
    from tuner.features.space import FeatureSpace
    from tuner.features.uvl import UVLError, parse_uvl

    try:
        m = load_bundled(model) if model in BUNDLED else parse_uvl(Path(model).read_text(encoding="utf-8"))
    except UVLError as exc:
        raise InputError(f"{model}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{model}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{model}: not UTF-8 text (a UVL file is)") from None
    return m, FeatureSpace(m)


@features_app.command("count")
@guarded
def count(model: Annotated[str, typer.Argument(help="MODEL.uvl, or a bundled model's name")]) -> None:
    """Exact number of valid configurations (BDD), cross-checked by a second counter."""
    import time

    start = time.perf_counter()
    m, space = _space(model)
    exact = space.count()
    if space.count_walk() != exact:
        raise RuntimeError("the two exact counters disagree")
    lib, ver = m.root.attributes.get("library"), m.root.attributes.get("library_version")
    out = {
        "model": model,
        "features": len(space.names),
        "constraints": len(m.constraints),
        "valid_configurations": exact,
        "dead_features": space.dead_features(),
        "library": f"{lib} {ver}" if lib else None,
        "seconds": round(time.perf_counter() - start, 3),
    }
    typer.echo(json.dumps(out))


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
    from tuner.features import sampling
    from tuner.features.configs import kwargs_of

    # options checked before the diagram exists: an exception holding it in a traceback cycle makes dd
    # complain when the cycle is collected
    if method not in ("twise", "uniform"):
        raise InputError(f"--method: '{method}' is not twise or uniform")
    if method == "twise" and t not in (1, 2, 3):
        raise InputError(f"-t: must be 1, 2 or 3, got {t}")
    if method == "uniform" and n < 1:
        raise InputError(f"-n: must be at least 1, got {n}")
    if output is not None:
        check_output(output, file=True)
    m, space = _space(model)
    smp = sampling.twise(space, t, seed) if method == "twise" else sampling.uniform(space, n, seed)
    cov = {f"{k}-wise": round(sampling.coverage(space, smp.configs, k), 4) for k in (1, 2)}
    lines = [json.dumps({"features": sorted(c), "kwargs": kwargs_of(m, c)}) for c in smp.configs]
    if output is not None:
        write_atomic(output, "\n".join(lines) + "\n")
    typer.echo(
        json.dumps(
            {
                "method": smp.method,
                "t": smp.t,
                "seed": seed,
                "size": len(smp.configs),
                "coverage": cov,
                "seconds": round(smp.seconds, 3),
            }
        )
    )


def _campaign_errors():
    from pydantic import ValidationError

    from tuner.campaign.store import CampaignError

    return CampaignError, ValidationError


def campaign(
    spec_path: Annotated[Path, typer.Argument(help="campaign spec (YAML or JSON)")],
    output: Annotated[Path, typer.Option("-o", help="campaign directory (created; resumed if it exists)")],
    executor: Annotated[str | None, typer.Option(help="local or ray (overrides the spec)")] = None,
    ray_address: Annotated[str | None, typer.Option(help="join this Ray cluster")] = None,
) -> None:
    """Measure a sample of configurations (resumable: rerun the same command after an interruption)."""
    import yaml

    from probes.core.errors import describe_validation_error
    from tuner.campaign.runner import run_campaign
    from tuner.campaign.spec import CampaignSpec

    campaign_error, validation_error = _campaign_errors()
    try:
        data = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
        if executor is not None:
            data["executor"] = executor
        if ray_address is not None:
            data["ray_address"] = ray_address
        spec = CampaignSpec.model_validate(data)
    except OSError as exc:
        raise InputError(f"{spec_path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{spec_path}: not UTF-8 text (a campaign spec is YAML)") from None
    except (yaml.YAMLError, TypeError) as exc:
        raise InputError(f"{spec_path}: not a YAML mapping ({str(exc).splitlines()[0]})") from None
    except validation_error as exc:
        raise InputError(f"{spec_path}: {describe_validation_error(exc)}") from None
    check_output(output)
    try:
        store = run_campaign(spec, output, progress=lambda iid: typer.echo(f"measured {iid}", err=True))
    except campaign_error as exc:
        raise InputError(str(exc)) from None
    plan = store.plan()
    typer.echo(
        json.dumps(
            {
                "campaign": str(output),
                "configurations": len(plan["configs"]),
                "repetitions": plan["repetitions"],
                "measured": len(store.done()),
            }
        )
    )


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
    from tuner.predictor.predict import predict_campaign

    campaign_error, _ = _campaign_errors()
    cons = {}
    for c in constraint or []:
        for op in (">=", "<="):
            if op in c:
                name, _, value = c.partition(op)
                try:
                    cons[name.strip()] = (op, float(value))
                except ValueError:
                    raise InputError(f"--constraint: '{c}' needs a number after {op}") from None
                break
        else:
            raise InputError(f"--constraint: '{c}' is not NAME>=X or NAME<=X")
    try:
        out = predict_campaign(
            campaign_dir, [t for t in targets.split(",") if t], objective, cons, verify_reps, confident
        )
    except campaign_error as exc:
        raise InputError(str(exc)) from None
    typer.echo(json.dumps(out["summary"]))


def register(app: typer.Typer) -> None:
    """Add the predictor's commands to the main CLI (one line in factsheet/cli.py)."""
    app.add_typer(
        features_app, name="features", help="Feature models (UVL): count and sample configurations."
    )
    app.command("campaign")(guarded(campaign))
    app.command("predict")(guarded(predict))
