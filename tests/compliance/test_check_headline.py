"""`check` and every gate judge page 1's headline figure (issue 42 item 9): `load.points[headline].result.
metrics…` is the run page 1 states, the capacity's last confirmation run when there is one, never the sweep
point with the most completed requests beside it.

Known truth: the mock serves 4 requests at once, each 100 + 7 × 20 = 240 ms; 5 users or more queue a whole
service time (≥ 480 ms). Under a p99 E2EL threshold of 450 ms the capacity is 4, confirmed by a run whose p99
is near 240 ms (page 1's figure). The sweep's one point, 8 users, queues half its requests: p99 ≥ 480 ms. A
rule "p99 E2EL at [headline] ≤ 450 ms" judged that point and failed (exit 1) while page 1 stated a p99 that
holds; it now judges page 1's run and passes.
"""

from __future__ import annotations

import json

import pytest

from factsheet.cli.commands import app
from factsheet.compliance.paths import page_one_path
from factsheet.document.schema import Factsheet
from probes.targets.mock_server import MockServerConfig, running
from tests.support.compliance_builds import runner
from tests.support.mock_spec import P99_POLICY, e2el_slo, endpoint_spec_dict
from tests.support.spec_builder import write_spec

pytestmark = pytest.mark.system

SEARCH = {"knob": "concurrency", "start": 2, "max_value": 8, "num_requests": 16, "confirm_requests": 24}
FIELD = "load.points[headline].result.metrics.e2el_ms.percentiles.p99"


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    folder = tmp_path_factory.mktemp("headline")
    spec = endpoint_spec_dict("", ((8, 32),), {"load": {"slo": e2el_slo(450), "capacity": SEARCH}})
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=4)) as url:
        spec["target"]["base_url"] = url
        write_spec(folder / "model.yaml", spec)
        result = runner.invoke(app, ["build", str(folder / "model.yaml"), "-o", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder / "out" / "factsheet.json"


def _check(sheet_json, policy, out):
    result = runner.invoke(app, ["check", str(sheet_json), "-p", str(policy), "-o", str(out)])
    return result, json.loads((out / "compliance.json").read_text())


def test_the_gate_judges_page_1s_figure_not_the_busiest_sweep_point(sheet, tmp_path):
    doc = Factsheet.model_validate_json(sheet.read_text())
    stated = doc.headline.figure("e2el_ms.p99")
    sweep = doc.load.points[0].result.metrics.e2el_ms.p(99)
    assert stated.value < 450 <= sweep, (stated.value, sweep)  # the known truth above, as measured
    policy = tmp_path / "p99.yaml"
    policy.write_text(P99_POLICY.format(name="headline", threshold=450))
    result, report = _check(sheet, policy, tmp_path / "out")
    assert result.exit_code == 0, result.output  # was 1: the sweep point's p99 judged
    rule = next(r for r in report["results"] if r["rule"] == "p99-e2el")
    assert rule["outcome"] == "pass"
    judged = rule["figures"][0]
    assert judged["value"] == stated.value  # one headline: the figure page 1 states, to the bit
    i = stated.source.rsplit("/", 2)[-2]
    assert judged["path"] == f"load.capacity.result.points[{i}].metrics.e2el_ms.percentiles.p99"
    # the run's own records stand behind it (one file, verified), not the whole search's
    assert [c["status"] for c in judged["records"]] == ["verified"]


def test_the_release_gate_judges_the_same_figure(sheet, tmp_path):
    doc = Factsheet.model_validate_json(sheet.read_text())
    stated = doc.headline.figure("e2el_ms.p99")
    _, report = _check(sheet, "release-gate", tmp_path / "out")
    rule = next(r for r in report["results"] if r["rule"] == "slo-p99")
    assert rule["figures"][0]["value"] == stated.value and rule["figures"][0]["path"].startswith(
        "load.capacity"
    )
    # 24 samples cannot back a p99 claim (MLPerf early stopping needs 459): page 1 says so, and so does the gate
    assert rule["outcome"] == "insufficient_evidence"


def test_an_older_document_keeps_the_headline_load_point(sheet):
    """A gate of schema < 1.10.0 judged the headline load point; its re-check (`validate`) must judge the same."""
    doc = Factsheet.model_validate_json(sheet.read_text())
    assert page_one_path(doc, FIELD).startswith("load.capacity.result.points[")
    older = doc.model_copy(update={"schema_version": "1.9.0"})
    assert page_one_path(older, FIELD) == FIELD
    other = "load.points[headline].result.workload"  # not a figure of the run: the load point's, as before
    assert page_one_path(doc, other) == other
