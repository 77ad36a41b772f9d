"""`factsheet validate` re-derives the predictor section from the campaign's measurements the factsheet keeps
(schema 1.3.0): a hand-edited R², prediction or summary figure, or a measurement whose latency figure no longer
matches its request records, is exit 1 naming the field; the untouched section is exit 0.

The factsheet is the 1.0.0 fixture (tests/factsheet/fixtures) with a predictor section built from a campaign of
a known-truth measurer whose latency figures come from request records (tests/support/campaign_measurers.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.builder.predictor import build_predictor
from factsheet.cli.commands import app
from factsheet.spec.predictor import PredictorSpec
from probes.core.digests import sha256_bytes

pytestmark = pytest.mark.system

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"
runner = CliRunner()


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """The fixture's folder with a predictor section and its campaign records: built once, copied per test."""
    folder = tmp_path_factory.mktemp("built") / "sheet"
    shutil.copytree(FIXTURE, folder)
    spec = PredictorSpec.model_validate(
        {
            "campaign": {
                "feature_model": "vllm_serving",
                "sample": {"method": "uniform", "n": 8, "seed": 5},
                "repetitions": 2,
                "measurer": "tests.support.campaign_measurers:with_latency_records",
            },
            "campaign_dir": str(folder.parent / "campaign"),
            "targets": ["e2el_p50_ms", "cpu_s"],
            "constraints": {"cpu_s": "<=1e9"},
            "verify_repetitions": 0,
        }
    )
    section = build_predictor(spec, folder, log=lambda *_: None)
    doc = json.loads((folder / "factsheet.json").read_text())
    doc["predictor"] = section.model_dump(mode="json")
    (folder / "factsheet.json").write_text(json.dumps(doc, indent=2))
    return folder


@pytest.fixture()
def sheet(built, tmp_path) -> Path:
    shutil.copytree(built, tmp_path / "sheet")
    return tmp_path / "sheet" / "factsheet.json"


def _edit(sheet: Path, change) -> None:
    doc = json.loads(sheet.read_text())
    change(doc["predictor"])
    sheet.write_text(json.dumps(doc, indent=2))


def test_untouched_section_rederives(sheet):
    doc = json.loads(sheet.read_text())["predictor"]
    assert doc["records"]["path"] == "records/predictor-campaign.jsonl" and doc["records"]["records"] == 16
    result = runner.invoke(app, ["validate", str(sheet)])
    assert result.exit_code == 0, result.output


def _scale(node: dict, key: str, factor: float) -> None:
    node[key] = node[key] * factor


EDITS = [
    ("R² of the selected model", lambda p: _scale(p["targets"]["e2el_p50_ms"]["selection"]["cv"]["r2"], "mean", 0.5),
     "predictor.targets.e2el_p50_ms.selection.cv.r2.mean"),
    ("predicted value", lambda p: _scale(p["recommendation"]["predicted"]["e2el_p50_ms"], "mean", 0.9),
     "predictor.recommendation.predicted.e2el_p50_ms.mean"),
    ("summary R²", lambda p: _scale(p["summary"]["r2_random_forest"], "e2el_p50_ms", 1.2),
     "predictor.summary.r2_random_forest.e2el_p50_ms"),
    ("learning curve", lambda p: _scale(p["targets"]["cpu_s"]["learning_curve"][0], "r2_mean", 0.5),
     "predictor.targets.cpu_s.learning_curve[0].r2_mean"),
]  # fmt: skip


def test_hand_edited_predictor_figures_are_named_and_exit_1(sheet):
    # every edit in one document (one re-run of the selection and recommendation): each is named
    for _, edit, _ in EDITS:
        _edit(sheet, edit)
    result = runner.invoke(app, ["validate", str(sheet)])
    assert result.exit_code == 1, result.output
    for kind, _, name in EDITS:
        assert name in result.output, f"{kind}: {result.output}"


def test_a_measurement_disagreeing_with_its_request_records_is_named(sheet):
    """A latency figure rewritten in the kept measurements, the file's sha256 restated: its records give it away."""
    path = sheet.parent / "records" / "predictor-campaign.jsonl"
    lines = path.read_text().splitlines()
    first = json.loads(lines[0])
    first["figures"]["e2el_p50_ms"] *= 0.8
    lines[0] = json.dumps(first, sort_keys=True)
    path.write_text("\n".join(lines) + "\n")
    _edit(sheet, lambda p: p["records"].update(sha256=sha256_bytes(path.read_bytes())))
    result = runner.invoke(app, ["validate", str(sheet)])
    assert result.exit_code == 1, result.output
    assert "predictor.records[0].figures.e2el_p50_ms" in result.output


def test_altered_campaign_records_fail_their_digest(sheet):
    path = sheet.parent / "records" / "predictor-campaign.jsonl"
    path.write_bytes(path.read_bytes().replace(b'"repetition": 0', b'"repetition": 1', 1))
    result = runner.invoke(app, ["validate", str(sheet)])
    assert result.exit_code == 1, result.output
    assert "predictor-campaign.jsonl do not match the factsheet's sha256" in result.output
