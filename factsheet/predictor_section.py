"""The factsheet's predictor section and the spec's `predictor:` section (issue 12), kept out of the shared
schema/spec modules: they import these two models and call `build_predictor` once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import Field, model_validator

from probes.core.measurement import Model, NotMeasured
from tuner.campaign.spec import CampaignSpec


class PredictorSpec(Model):
    """Feature-model predictor: a measurement campaign, then learning, Pareto front and a verified pick."""

    campaign: CampaignSpec
    campaign_dir: str | None = Field(
        None, description="campaign directory; default OUT/predictor-campaign (resumed)"
    )
    targets: list[str] = Field(default_factory=lambda: ["e2el_p50_ms", "cpu_s", "pass_at_1"])
    objective: str = Field("e2el_p50_ms", description="figure to minimise; 'max:NAME' to maximise")
    constraints: dict[str, str] = Field(
        default_factory=dict, description="recommendation constraints, e.g. {pass_at_1: '>=0.05'}"
    )
    verify_repetitions: int = Field(3, ge=0, description="live measurements of the recommendation")
    confident: bool = Field(
        False, description="constraints must hold for the prediction's whole 95 % interval, not only its mean"
    )

    @model_validator(mode="after")
    def _constraints_parse(self) -> PredictorSpec:
        parse_constraints(self.constraints)
        return self


class PredictorSection(Model):
    definition: str = (
        "configurations sampled from a UVL feature model (t-wise and uniform), measured with repetitions in "
        "random order; Random Forest vs mean and ridge baselines by k-fold CV on per-configuration means; "
        "each figure of the recommendation predicted by the candidate with the best mean k-fold CV R² "
        "(random_forest, random_forest_log, ridge_log, lasso_pairs_log; log models learn log y, only where "
        "every value > 0), with a 95 % interval from that model's out-of-fold prediction error (an estimate; "
        "multiplicative for log models); recommendation = best predicted objective meeting the constraints, "
        "then measured and compared with the interval"
    )
    campaign_dir: str
    model: dict[str, Any]
    sampling: dict[str, Any] | None
    campaign: dict[str, Any]
    notes: list[str]
    accuracy: dict[str, Any] | None = Field(
        None, description="the HumanEval+ subset, prompting and figure definitions (None: not measured)"
    )
    targets: dict[str, Any]
    pareto: dict[str, Any] | None
    recommendation: dict[str, Any] | None
    verification: dict[str, Any] | None
    summary: dict[str, Any]


def parse_constraints(raw: dict[str, str]) -> dict[str, tuple[str, float]]:
    out = {}
    for name, text in raw.items():
        op = text.strip()[:2]
        if op not in (">=", "<="):
            raise ValueError(f"constraints.{name}: '{text}' is not '>=X' or '<=X'")
        try:
            out[name] = (op, float(text.strip()[2:]))
        except ValueError:
            raise ValueError(f"constraints.{name}: '{text}' needs a number after {op}") from None
    return out


def build_predictor(spec: PredictorSpec | None, out_dir: Path, log=print) -> PredictorSection | NotMeasured:
    from factsheet.spec import NOT_REQUESTED  # here: factsheet.spec imports this module

    if spec is None:
        return NotMeasured(reason=NOT_REQUESTED)
    from tuner.campaign.runner import run_campaign
    from tuner.predictor.predict import predict_campaign

    root = Path(spec.campaign_dir) if spec.campaign_dir else out_dir / "predictor-campaign"
    log(f"predictor: campaign in {root} ({spec.campaign.feature_model}, executor {spec.campaign.executor})")
    run_campaign(spec.campaign, root)
    out = predict_campaign(
        root,
        spec.targets,
        spec.objective,
        parse_constraints(spec.constraints),
        spec.verify_repetitions,
        spec.confident,
    )
    data = json.loads(json.dumps(out, default=str))  # plain JSON types only
    return PredictorSection(campaign_dir=str(root), **data)
