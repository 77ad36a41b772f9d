"""`factsheet validate` recomputes every figure the raw records determine: an edited figure of any kind, with
its records untouched (digests still match), is exit 1 naming that figure; the untouched factsheet is exit 0.

The factsheet is the 1.0.0 fixture: built against the mock server (model.yaml beside it) with two load points
(closed and open loop), a capacity search, HumanEval+ on three tasks and energy on a fake RAPL counter.
A fresh build re-derives too (test_build_endpoint.py validates one).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.rederive import rederive
from factsheet.rederive.validate import load_factsheet

FIXTURE = Path(__file__).parent / "fixtures" / "factsheet-1.0.0"
runner = CliRunner()


def _set(doc: dict, path: str, change) -> None:
    *parents, last = path.split("/")
    node = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    key = int(last) if isinstance(node, list) else last
    node[key] = change(node[key])


# (what kind of figure, its path in factsheet.json, the edit, the name validate must print)
EDITS = [
    ("load metric", "load/points/0/result/metrics/output_throughput", lambda v: v * 1.1,
     "load.points[0].result.metrics.output_throughput"),
    ("percentile", "load/points/1/result/metrics/ttft_ms/percentiles/p99", lambda v: v - 5,
     "load.points[1].result.metrics.ttft_ms.percentiles.p99"),
    ("percentile CI", "load/points/1/result/metrics/percentile_ci/ttft_ms.p50/lower", lambda v: v * 0.9,
     "load.points[1].result.metrics.percentile_ci.ttft_ms.p50.lower"),
    ("goodput", "load/points/0/result/metrics/goodput", lambda v: v * 1.5,
     "load.points[0].result.metrics.goodput"),
    ("goodput CI", "load/points/0/result/metrics/goodput_ci/upper", lambda v: v + 1,
     "load.points[0].result.metrics.goodput_ci.upper"),
    ("SLO attainment", "load/points/1/result/metrics/slo_attainment", lambda v: v / 2,
     "load.points[1].result.metrics.slo_attainment"),
    ("open-loop arrivals", "load/points/1/result/arrivals/achieved_rate", lambda v: v * 1.2,
     "load.points[1].result.arrivals.achieved_rate"),
    ("capacity point verdict", "load/capacity/result/points/1/passed", lambda v: not v,
     "load.capacity.result.points[1].passed"),
    ("capacity", "load/capacity/result/capacity", lambda v: v * 2, "load.capacity.result.capacity"),
    ("capacity point metric", "load/capacity/result/points/0/metrics/e2el_ms/percentiles/p99",
     lambda v: v / 2, "load.capacity.result.points[0].metrics.e2el_ms.percentiles.p99"),
    ("pass@1", "accuracy/result/pass_rates/base/pass@1", lambda v: 0.9, "accuracy.result.pass_rates.base.pass@1"),
    ("per-sample verdict", "accuracy/result/per_task/0/base/status", lambda v: "pass" if v != "pass" else "fail",
     "accuracy.result.per_task[0].base.status"),
    ("energy per request", "energy/energy/total/gross/j_per_request/value", lambda v: v * 2,
     "energy.energy.total.gross.j_per_request.value"),
    ("energy requests", "energy/energy/requests", lambda v: v + 1, "energy.energy.requests"),
    ("carbon", "energy/carbon/g_co2e/value", lambda v: v * 2, "energy.carbon.g_co2e.value"),
]  # fmt: skip


@pytest.fixture()
def sheet_copy(tmp_path) -> Path:
    shutil.copytree(FIXTURE, tmp_path / "sheet")
    return tmp_path / "sheet" / "factsheet.json"


def test_untouched_factsheet_rederives(sheet_copy):
    result = runner.invoke(app, ["validate", str(sheet_copy)])
    assert result.exit_code == 0, result.output
    assert "recomputes to the stated value" in result.output
    assert rederive(load_factsheet(sheet_copy), sheet_copy.parent) == []


@pytest.mark.parametrize(("kind", "path", "edit", "name"), EDITS, ids=[e[0] for e in EDITS])
def test_edited_figure_is_named_and_exit_1(sheet_copy, kind, path, edit, name):
    doc = json.loads(sheet_copy.read_text())
    _set(doc, path, edit)
    sheet_copy.write_text(json.dumps(doc, indent=2))
    result = runner.invoke(app, ["validate", str(sheet_copy)])
    assert result.exit_code == 1, f"{kind}: {result.output}"
    assert name in result.output, f"{kind}: {result.output}"
    found = rederive(load_factsheet(sheet_copy), sheet_copy.parent)
    assert name in [d.figure for d in found]


def test_every_kind_of_section_is_covered():
    doc = json.loads((FIXTURE / "factsheet.json").read_text())
    assert doc["load"]["points"][1]["result"]["point"]["mode"] == "open"
    assert doc["load"]["capacity"]["result"]["points"] and doc["accuracy"]["result"]["pass_rates"]["plus"]
    assert "gross" in doc["energy"]["energy"]["total"] and "g_co2e" in doc["energy"]["carbon"]


def test_a_figure_added_by_a_later_minor_is_not_held_against_an_older_document():
    from factsheet.rederive.compare import differences
    from probes.core.measurement import Distribution

    older = Distribution.model_validate_json('{"unit": "ms", "definition": "d", "n": 2, "mean": 1.5}')
    now = Distribution(unit="ms", definition="d", n=2, mean=1.5, std=0.7, percentiles={"p50": 1.5})
    assert differences(older, now, "x", "") == []  # std and percentiles not stated: nothing to compare
    assert [d.figure for d in differences(older, now.model_copy(update={"mean": 2.0}), "x", "")] == ["x.mean"]


def test_records_rewritten_with_a_matching_digest_still_disagree_with_the_figures(sheet_copy):
    """Altering a record and restating its sha256 passes the digest check; the figures then give it away."""
    from probes.core.digests import sha256_bytes

    doc = json.loads(sheet_copy.read_text())
    entry = doc["load"]["points"][0]
    path = sheet_copy.parent / entry["records"]["path"]
    lines = path.read_text().splitlines()
    first = json.loads(lines[-1])
    first["end_s"] += 0.5  # the last request "took" half a second longer
    lines[-1] = json.dumps(first)
    path.write_text("\n".join(lines) + "\n")
    entry["records"]["sha256"] = sha256_bytes(path.read_bytes())
    sheet_copy.write_text(json.dumps(doc, indent=2))
    result = runner.invoke(app, ["validate", str(sheet_copy)])
    assert result.exit_code == 1, result.output
    assert "load.points[0].result.metrics.e2el_ms" in result.output
