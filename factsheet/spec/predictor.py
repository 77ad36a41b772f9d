"""The spec's `predictor:` section and the one constraint grammar (`parse_constraints`): a constraint is
`NAME: '>=X'` or `NAME: '<=X'`, in the spec and (through the same function) on the command line."""

from __future__ import annotations

from pydantic import Field, model_validator

from factsheet.document.predictor import parse_constraints
from probes.core.measurement import Count, Model
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
    verify_repetitions: Count = Field(3, ge=0, description="live measurements of the recommendation")
    confident: bool = Field(
        False, description="constraints must hold for the prediction's whole 95 % interval, not only its mean"
    )

    @model_validator(mode="after")
    def _constraints_parse(self) -> PredictorSpec:
        parse_constraints(self.constraints)
        return self
