"""Build the predictor section: run (or resume) the campaign, learn, decide, verify, and type the result."""

from __future__ import annotations

import json
from pathlib import Path

from factsheet.predictor.section import PredictorSection
from factsheet.predictor.spec import PredictorSpec, parse_constraints
from probes.core.measurement import NotMeasured

NOT_REQUESTED = "no predictor section in the spec"


def build_predictor(spec: PredictorSpec | None, out_dir: Path, log=print) -> PredictorSection | NotMeasured:
    if spec is None:
        return NotMeasured(reason=NOT_REQUESTED)
    from tuner.campaign.runner import run_campaign
    from tuner.predictor.report import predict_campaign

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
    # plain JSON types (numpy scalars too), then every field checked against the section's models
    data = json.loads(json.dumps(out, default=float))
    return PredictorSection.model_validate({"campaign_dir": str(root), **data})
