"""Exports for registries, from the render fixture (real load runs against the mock server, hand-made
accuracy and energy) and from a factsheet where nothing was measured: figures match the factsheet,
each export names its digest, nothing unmeasured appears."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.export import cyclonedx, hf, spdx
from factsheet.export.readout import headline_figures, serving_figures, source
from factsheet.rederive.validate import load_factsheet
from tests.support import sheet_fixture as fx
from tests.support.deployment import TEMPLATE, sheet_with_template

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"


def _write(folder: Path, sheet) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "factsheet.json"
    path.write_bytes(sheet.model_dump_json(indent=2).encode())
    return path


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    sheet = fx.build_sheet(fx.load_points())
    return source(_write(tmp_path_factory.mktemp("full"), sheet), sheet)


@pytest.fixture(scope="module")
def derivable(tmp_path_factory):
    """A factsheet whose every figure re-derives from its records (what the CLI exports): the 1.0.0 fixture."""
    folder = tmp_path_factory.mktemp("derivable") / "sheet"
    shutil.copytree(FIXTURE, folder)
    return source(folder / "factsheet.json", load_factsheet(folder / "factsheet.json"))


@pytest.fixture(scope="module")
def empty(tmp_path_factory):
    sheet = fx.empty_sheet()
    return source(_write(tmp_path_factory.mktemp("empty"), sheet), sheet)


def test_source_digest_is_the_file_sha256(full):
    assert full.sha256 == "sha256:" + hashlib.sha256(full.path.read_bytes()).hexdigest()


# --- Hugging Face model card -------------------------------------------------------------------


def test_hf_card_model_index_carries_pass_at_1_and_serving_figures(full, tmp_path):
    from huggingface_hub import ModelCard

    card = ModelCard.load(hf.write(full, tmp_path))
    results = card.data.eval_results
    by = {(r.dataset_config, r.metric_type): r for r in results}
    assert by[("base+plus", "pass@1")].metric_value == 0.5 and by[("base", "pass@1")].metric_value == 1.0
    entry = full.sheet.load.points[1]
    m = entry.result.metrics
    ttft = by[(entry.result.label, "ttft_ms.p99")]
    assert ttft.metric_value == m.ttft_ms.p(99) and ttft.dataset_type == hf.LOAD_DATASET
    goodput = by[(entry.result.label, "goodput")]
    assert goodput.metric_args["confidence_interval"] == [m.goodput_ci.lower, m.goodput_ci.upper]
    assert all(not r.verified for r in results)
    assert card.data.llm_factsheet["sha256"] == full.sha256 and full.sha256 in card.text
    assert card.data.license == "apache-2.0"
    # The failing point completed nothing: none of its figures appears.
    failed = full.sheet.load.points[2].result.label
    assert not [r for r in results if r.dataset_config == failed]


def test_hf_card_of_an_unmeasured_factsheet_has_no_results_and_says_why(empty, tmp_path):
    from huggingface_hub import ModelCard

    card = ModelCard.load(hf.write(empty, tmp_path))
    assert not card.data.eval_results
    assert "## Not measured" in card.text and "target did not answer (test)" in card.text
    assert "energy not requested (test)" in card.text and "kWh" not in card.text


# --- CycloneDX 1.6 -------------------------------------------------------------------------------


def _model(bom: dict) -> dict:
    (component,) = [c for c in bom["components"] if c["type"] == "machine-learning-model"]
    return component


def test_cyclonedx_bom_validates_and_carries_metrics_with_cis_and_inference_energy(full):
    bom = cyclonedx.bom(full)
    cyclonedx.validate(bom)  # CycloneDX 1.6 JSON schema bundled in cyclonedx-python-lib
    assert bom["specVersion"] == "1.6"
    model = _model(bom)
    card = model["modelCard"]
    metrics = card["quantitativeAnalysis"]["performanceMetrics"]
    entry = full.sheet.load.points[1]
    ci = entry.result.metrics.percentile_ci["ttft_ms.p50"]
    (ttft,) = [
        x
        for x in metrics
        if x["type"] == "TTFT p50 (ms)" and x["slice"] == f"load point {entry.result.label}"
    ]
    assert float(ttft["value"]) == entry.result.metrics.ttft_ms.p(50)
    assert (
        float(ttft["confidenceInterval"]["lowerBound"]),
        float(ttft["confidenceInterval"]["upperBound"]),
    ) == (
        ci.lower,
        ci.upper,
    )
    assert len(metrics) == 2 + len(headline_figures(full.sheet)) + len(serving_figures(full.sheet))
    (consumption,) = card["considerations"]["environmentalConsiderations"]["energyConsumptions"]
    kwh = full.sheet.energy.energy.total.gross.energy_j.value / 3.6e6
    assert consumption["activity"] == "inference" and consumption["activityEnergyCost"] == {
        "value": kwh,
        "unit": "kWh",
    }
    assert consumption["energyProviders"][0]["energySource"] == "unknown"  # not invented
    digest = {"name": cyclonedx.DIGEST_PROPERTY, "value": full.sha256}
    assert digest in bom["metadata"]["properties"] and digest in model["properties"]


def test_cyclonedx_of_an_unmeasured_factsheet_has_no_metrics_and_no_energy(empty):
    bom = cyclonedx.bom(empty)
    card = _model(bom)["modelCard"]
    assert "quantitativeAnalysis" not in card and "considerations" not in card


def test_cyclonedx_validation_can_fail(full):
    bom = cyclonedx.bom(full)
    _model(bom)["modelCard"]["considerations"]["environmentalConsiderations"]["energyConsumptions"][0][
        "activity"
    ] = "serving"
    with pytest.raises(cyclonedx.InvalidExport):
        cyclonedx.validate(bom)


# --- SPDX 3.0.1 ----------------------------------------------------------------------------------


def _package(objects):
    from spdx_python_model import v3_0_1 as s

    (package,) = list(objects.foreach_type(s.ai_AIPackage))
    return package


def test_spdx_round_trips_through_json_ld(full):
    data = spdx.to_jsonld(spdx.document(full))
    again = spdx.to_jsonld(spdx.from_jsonld(data))
    assert json.loads(again) == json.loads(data)
    doc = json.loads(data)
    assert doc["@context"] == "https://spdx.org/rdf/3.0.1/spdx-context.jsonld"


def test_spdx_ai_package_carries_metrics_energy_and_the_factsheet_digest(full):
    from spdx_python_model import v3_0_1 as s

    objects = spdx.from_jsonld(spdx.to_jsonld(spdx.document(full)))
    package = _package(objects)
    metrics = {e.key: e.value for e in package.ai_metric}
    entry = full.sheet.load.points[0]
    assert float(
        metrics[f"TTFT p50 (ms), load point {entry.result.label}"]
    ) == entry.result.metrics.ttft_ms.p(50)
    assert any(k.startswith("pass@1") and v == "0.5" for k, v in metrics.items())
    (energy,) = package.ai_energyConsumption.ai_inferenceEnergyConsumption
    assert energy.ai_energyQuantity == pytest.approx(
        full.sheet.energy.energy.total.gross.energy_j.value / 3.6e6
    )
    assert energy.ai_energyUnit == s.ai_EnergyUnitType.kilowattHour
    (record,) = list(objects.foreach_type(s.software_File))
    assert record.verifiedUsing[0].hashValue == full.sha256.split(":", 1)[1]
    (rel,) = list(objects.foreach_type(s.Relationship))
    assert rel.relationshipType == s.RelationshipType.hasEvidence and rel.from_._id == package._id


def test_spdx_of_an_unmeasured_factsheet_has_no_energy_and_no_metrics(empty):
    package = _package(spdx.from_jsonld(spdx.to_jsonld(spdx.document(empty))))
    assert package.ai_energyConsumption is None and len(package.ai_metric) == 0


# --- CLI -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fmt", "name"), [("hf", "README.md"), ("cyclonedx", "bom.cdx.json"), ("spdx", "factsheet.spdx.jsonld")]
)
def test_cli_export_writes_the_file_and_names_the_digest(derivable, tmp_path, fmt, name):
    full = derivable
    result = CliRunner(env={"COLUMNS": "200"}).invoke(
        app, ["export", str(full.path), "--format", fmt, "-o", str(tmp_path / "x")]
    )
    assert result.exit_code == 0, result.stderr
    assert (tmp_path / "x" / name).is_file() and full.sha256 in result.stdout
    assert (
        full.sha256 in (tmp_path / "x" / name).read_text()
        or full.sha256.split(":")[1] in (tmp_path / "x" / name).read_text()
    )


def test_cyclonedx_names_the_served_chat_template_and_generation_config_by_digest(tmp_path):
    path = sheet_with_template(tmp_path)
    model = _model(cyclonedx.bom(source(path, load_factsheet(path))))
    props = {p["name"]: p["value"] for p in model["properties"]}
    assert props[cyclonedx.TEMPLATE_PROPERTY] == "sha256:" + hashlib.sha256(TEMPLATE.encode()).hexdigest()
    config = (tmp_path / "model" / "generation_config.json").read_bytes()
    assert props[cyclonedx.GENERATION_PROPERTY] == "sha256:" + hashlib.sha256(config).hexdigest()


def test_cyclonedx_states_no_template_digest_where_none_was_measured(empty):
    names = {p["name"] for p in _model(cyclonedx.bom(empty))["properties"]}
    assert cyclonedx.TEMPLATE_PROPERTY not in names and cyclonedx.GENERATION_PROPERTY not in names
