"""Build the predictor section: run (or resume) the campaign, learn, decide, verify, type the result, and keep
the campaign's measurements beside the factsheet (records/predictor-campaign.jsonl) for `validate`."""

from __future__ import annotations

import json
from pathlib import Path

from factsheet.document.files import PREDICTOR_RECORDS, RECORDS_DIR
from factsheet.document.predictor import PredictorSection, parse_constraints
from factsheet.document.records_file import RecordsFile
from factsheet.spec.build import NOT_REQUESTED
from factsheet.spec.predictor import PredictorSpec
from probes.core.digests import sha256_bytes
from probes.core.files import write_atomic
from probes.core.measurement import NotMeasured
from tuner.campaign.runner import run_campaign
from tuner.predictor.predict import predict_campaign


def build_predictor(spec: PredictorSpec | None, out_dir: Path, log=print) -> PredictorSection | NotMeasured:
    if spec is None:
        return NotMeasured(reason=NOT_REQUESTED)

    root = Path(spec.campaign_dir) if spec.campaign_dir else out_dir / "predictor-campaign"
    log(f"predictor: campaign in {root} ({spec.campaign.feature_model}, executor {spec.campaign.executor})")
    store = run_campaign(spec.campaign, root)
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
    return PredictorSection.model_validate(
        {
            "campaign_dir": str(root),
            "objective": spec.objective,
            "constraints": spec.constraints,
            "confident": spec.confident,
            "records": keep_records(store.evidence(), out_dir),
            **data,
        }
    )


def keep_records(lines: list[dict], out_dir: Path) -> RecordsFile:
    """The campaign's measurements, one JSON line each, written beside the factsheet."""
    data = b"".join(json.dumps(line, sort_keys=True).encode() + b"\n" for line in lines)
    path = f"{RECORDS_DIR}/{PREDICTOR_RECORDS}"
    write_atomic(Path(out_dir) / path, data)
    return RecordsFile(path=path, sha256=sha256_bytes(data), records=len(lines))
