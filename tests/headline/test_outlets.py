"""Outlets take page 1's figures from the headline and nothing else, and refuse a sheet that does not
re-derive (issue 28 items 1-2), on known truth: the 1.0.0 fixture (capacity ≥ 8: every probe up to the
search's maximum passed; sweep points of 12-28 requests, too few for any p99 claim)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.headline.figures import headline
from factsheet.publish.contents import headline_tags, metrics
from factsheet.rederive.validate import load_factsheet
from tests.headline.test_headline_bounds import _sheet as not_confirmed_sheet
from tests.support.fake_http import Recording, serving

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"
runner = CliRunner()


@pytest.fixture
def folder(tmp_path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "sheet")
    return tmp_path / "sheet"


def _edit(folder: Path, change) -> Path:
    path = folder / "factsheet.json"
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))
    return path


def test_export_refuses_an_edited_goodput_and_writes_nothing(folder, tmp_path):
    path = _edit(folder, lambda d: d["load"]["points"][1]["result"]["metrics"].update(goodput=99.0))
    out = tmp_path / "hf"
    result = runner.invoke(app, ["export", str(path), "--format", "hf", "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert "load.points[1].result.metrics.goodput: stated 99.0" in result.output
    assert not out.exists()  # nothing written: no card, no .eval_results


def test_export_refuses_an_edited_headline_figure(folder, tmp_path):
    sheet = load_factsheet(folder / "factsheet.json")
    stated = headline(sheet).model_dump(mode="json")
    i = next(i for i, f in enumerate(stated["figures"]) if f["id"] == "goodput")
    stated["figures"][i]["value"] = 99.0
    path = _edit(folder, lambda d: d.update(headline=stated))
    out = tmp_path / "bom"
    result = runner.invoke(app, ["export", str(path), "--format", "cyclonedx", "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert (
        f"headline.figures[{i}].value: stated 99.0" in result.output
        and "page-1 figure goodput" in result.output
    )
    assert not out.exists()


def test_the_card_states_the_headline_with_its_verdicts_and_the_lower_bound(folder, tmp_path):
    from huggingface_hub import ModelCard

    result = runner.invoke(
        app, ["export", str(folder / "factsheet.json"), "--format", "hf", "-o", str(tmp_path)]
    )
    assert result.exit_code == 0, result.output
    card = ModelCard.load(tmp_path / "README.md")
    by = {(r.dataset_config, r.metric_type): r for r in card.data.eval_results}
    capacity = by[("headline", "headline.capacity_at_slo")]
    assert capacity.metric_value == 8 and capacity.metric_args["lower_bound"] is True
    assert capacity.metric_args["verdict"] == "lower bound"
    assert "| Capacity at SLO (synthetic) | ≥ 8 concurrent users |" in card.text
    # Every p99, the sweep's too, states what its samples support: these cannot support a p99 claim.
    p99s = [r for (_, metric), r in by.items() if metric.endswith("p99")]
    assert p99s and all(r.metric_args["verdict"] == "insufficient samples" for r in p99s)
    notes = yaml.safe_load((tmp_path / ".eval_results" / "load-headline.yaml").read_text())
    cap_note = next(r["notes"] for r in notes if r["dataset"]["task_id"] == "headline.capacity_at_slo")
    assert "lower bound: ≥ 8" in cap_note


def test_mlflow_metrics_state_a_lower_bound_as_one_and_never_an_unconfirmed_capacity():
    sheet = load_factsheet(FIXTURE / "factsheet.json")
    got = metrics(sheet)
    assert got["capacity_at_slo_users_at_least"] == 8 and "capacity_at_slo_users" not in got
    h = headline(sheet)
    assert (
        got["e2el_p99_ms"] == h.figure("e2el_ms.p99").value
        and got["goodput_rps"] == h.figure("goodput").value
    )
    tags = headline_tags(sheet)
    assert tags["llm_factsheet.headline.capacity_at_slo"].startswith("lower bound: ≥ 8")
    unconfirmed = not_confirmed_sheet()
    assert not [k for k in metrics(unconfirmed) if k.startswith("capacity_at_slo")]
    assert headline_tags(unconfirmed)["llm_factsheet.headline.capacity_at_slo"].startswith("not confirmed")


def test_publish_refuses_an_edited_capacity_before_any_request(folder):
    path = _edit(folder, lambda d: d["load"]["capacity"]["result"].update(capacity=64.0))
    Recording.requests = []
    with serving(Recording) as url:
        result = runner.invoke(app, ["publish", str(path), "--mlflow-uri", url])
    assert result.exit_code == 1, result.output
    assert "load.capacity.result.capacity: stated 64.0, recomputed 8.0" in result.output
    assert Recording.requests == []  # nothing sent: no run was created, let alone FINISHED
