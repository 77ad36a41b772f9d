"""The tuning section states, for the default and the recommended point side by side, goodput and p99
with their 95 % CIs and the estimated probability of meeting the SLO in a fresh run with its basis
(issue 14). Known truth: the figures of the TuningResult the page is rendered from."""

from __future__ import annotations

from factsheet.render import render_html
from tests.render.page import Page
from tests.support import sheet_fixture as fx


def test_default_and_recommended_state_p_slo_with_its_basis_next_to_goodput_and_p99():
    tuning = fx.tuning_result()
    assert tuning.confirmation.evaluations > 0  # the fixture's tuning confirms before recommending
    page = Page.parse(render_html(fx.empty_sheet().model_copy(update={"tuning": tuning})))
    table = next(t for t in page.section("tuning").tables() if "P(meets SLO) in a fresh run" in t[0])
    header = table[0]
    col = {name: header.index(name) for name in header if name}
    rows = {r[0]: r for r in table[1:] if r and r[0] in ("Default", "Recommended")}
    assert set(rows) == {"Default", "Recommended"}
    for name, pf in (("Default", tuning.default), ("Recommended", tuning.recommended)):
        row, f, sp = rows[name], pf.figures, pf.slo_probability
        goodput = row[next(i for h, i in col.items() if h.startswith("Goodput"))]
        p99 = row[next(i for h, i in col.items() if h.startswith("p99"))]
        prob = row[col["P(meets SLO) in a fresh run"]]
        assert goodput == f"{f.goodput.value:.2f} [{f.goodput.ci_low:.2f}, {f.goodput.ci_high:.2f}]"
        assert p99 == f"{f.p99.value:.0f} [{f.p99.ci_low:.0f}, {f.p99.ci_high:.0f}]"
        bound = f"≥ {sp.lower_bound:.2f} at {sp.confidence:g} confidence; "
        assert sp.lower_bound is not None and sp.lower_bound <= sp.value
        assert prob.startswith(f"{sp.value:.2f} {bound}{sp.runs_met} of {sp.runs} run(s) met it")
        assert prob.endswith(f"basis: {sp.basis}") and sp.basis
