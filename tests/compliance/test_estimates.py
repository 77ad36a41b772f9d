"""Labelled estimates (an energy model, simulator predictions) are not evidence where a rule demands a
measurement: on the render fixture, which carries both."""

from __future__ import annotations

from factsheet.compliance.evaluate import evaluate
from factsheet.compliance.policy import load_policy
from tests.support import sheet_fixture as fx


def test_an_estimate_is_not_evidence_where_a_measurement_is_demanded(tmp_path):
    """The fixture's energy estimate (TDP model) and simulator trace entries are labelled estimates: a rule
    demanding a measurement cannot pass on them, one that does not may."""
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "policy_version: 1\nid: est\ntitle: est\nversion: '1'\nrules:\n"
        "  - {id: energy, title: e, field: 'energy.energy.estimated[0].gross.energy_j.value', op: '>', threshold: 0}\n"
        "  - {id: sim, title: s, field: 'tuning.trace[0].figures.goodput.value', op: '>=', threshold: 0}\n"
        "  - {id: sim-any, title: s, field: 'tuning.trace[0].figures.goodput.value', op: '>=', threshold: 0,\n"
        "     evidence: {measured: false}}\n"
    )
    report = evaluate(
        fx.build_sheet(fx.load_points()), [load_policy(str(policy))], folder=None, factsheet_path="x",
        factsheet_sha256="x",
    )  # fmt: skip
    outcomes = {r.rule: r.outcome for r in report.results}
    assert outcomes == {"energy": "insufficient_evidence", "sim": "insufficient_evidence", "sim-any": "pass"}
    assert all(r.figures[0].basis == "estimated" for r in report.results)
