"""The predictor section re-derived from the campaign's measurements the factsheet keeps:
each measurement's latency figures from its request records (the load probe's metrics), then the model
selection, learning curves, Pareto front and the recommendation's predictions re-run on the table those
measurements make (seeded: the same table gives the same answer, to float precision)."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import ConfigDict, Field

from factsheet.document.predictor import PredictorSection, parse_constraints
from factsheet.document.rules import RuleSet, rule
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.rederive.records import read_records
from probes.core.measurement import Model
from tuner.campaign.latency import LATENCY_FIGURES, LatencyEvidence, latency_figures, latency_metrics
from tuner.campaign.runner import load_model
from tuner.campaign.store import measurement_table
from tuner.features.configs import BUNDLED
from tuner.features.space import FeatureSpace
from tuner.predictor.predict import decide, summary

FIGURE = "predictor.records"
Scalar = float | int | str | bool | None


class Measurement(Model):
    """One line of the campaign's records: what `tuner.campaign.store.CampaignStore.evidence` writes."""

    model_config = ConfigDict(extra="allow")  # node, seconds, the accuracy records: kept, not re-derived here

    config_id: str
    repetition: int
    features: list[str]
    figures: dict[str, Scalar]
    latency: LatencyEvidence | None = Field(None, description="the latency requests' records")


def predictor(section: PredictorSection, rules: RuleSet, folder: Path) -> list[Discrepancy]:
    if section.records is None:
        if "keeps/predictor-records" not in rules:
            return []  # attested only, as the document's version kept none
        why = f"the campaign's measurements (schema >= {rule('keeps/predictor-records').began} keeps them)"
        return [Discrepancy(figure=FIGURE, stated="none", recomputed=why)]
    pairs, out = read_records(folder, section.records, _line, FIGURE)
    if pairs is None:
        return out
    src = section.records.path
    for i, (line, _) in enumerate(pairs):
        out += _latency(line, f"{FIGURE}[{i}]", src)
    rows = [raw for _, raw in pairs]
    features = {line.config_id: line.features for line, _ in pairs}
    df = measurement_table(features, rows)
    out += differences(section.campaign.measurements, len(df), "predictor.campaign.measurements", src)
    if df.empty or section.objective is None or section.model.feature_model not in BUNDLED:
        return out  # nothing to learn from, or inputs an older document (or a .uvl file) does not keep
    try:
        return out + _decisions(section, df, src)
    except (ValueError, KeyError, TypeError) as exc:  # measurements no campaign could have produced
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return out + [
            Discrepancy(figure=FIGURE, stated=src, recomputed=f"cannot re-run the predictor: {first}")
        ]


def _line(data: dict) -> tuple[Measurement, dict]:
    return Measurement.model_validate(data), data


def _latency(line: Measurement, where: str, src: str) -> list[Discrepancy]:
    """A measurement's latency figures against what its records give."""
    if line.latency is None:
        return []
    recomputed = latency_figures(latency_metrics(line.latency.records))
    names = [*LATENCY_FIGURES, "n_requests", "tokens_mean"]
    stated = {k: line.figures[k] for k in names if k in line.figures}
    return differences(stated, recomputed, f"{where}.figures", src) + differences(
        line.latency.metrics, latency_metrics(line.latency.records), f"{where}.latency.metrics", src
    )


def _decisions(section: PredictorSection, df, src: str) -> list[Discrepancy]:
    """Model selection, Pareto front, recommendation and summary re-run on the measurements' table."""
    space = FeatureSpace(load_model(section.model.feature_model))
    decided = json.loads(
        json.dumps(
            decide(
                df,
                space,
                list(section.targets),
                section.objective,
                parse_constraints(section.constraints or {}),
                seed=section.campaign.seed or 0,
                confident=bool(section.confident),
            ),
            default=float,
        )
    )
    out = differences(section.targets, decided["targets"], "predictor.targets", src)
    out += differences(section.pareto, decided["pareto"], "predictor.pareto", src)
    out += differences(section.recommendation, decided["recommendation"], "predictor.recommendation", src)
    stated = section.summary.model_dump(mode="json", exclude={"verified"})
    again = summary(decided, section.campaign.configurations, len(df), None)
    return out + differences(stated, again, "predictor.summary", src)
