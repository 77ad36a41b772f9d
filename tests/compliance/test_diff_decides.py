"""What a row of `factsheet diff` may decide (diff 1.4.0; issue 41 item 1, issue 42 item 1): only on
between-run noise, and the verdict is no_regression only when every row that decides was compared and
decided. Rows are built here with known values, so each rule is checked against its own arithmetic."""

from __future__ import annotations

import math

from scipy.stats import t as student_t

from factsheet.compliance.diff import (
    NO_BETWEEN,
    FigureDiff,
    Noise,
    _judge,
    _prediction_noise,
    _verdict,
    parse_limits,
)
from factsheet.compliance.support import Support

LIMITS = parse_limits({"e2el_ms.p50": "10%"}, "test")
SCOPE = "capacity (synthetic) confirmation, concurrency 4"
SOUND = {"old": Support([], []), "new": Support([], [])}


def _row(old: float, new: float, low: float, high: float, **update) -> FigureDiff:
    """An E2EL p50 row of a confirmation run whose within-run interval of new − old is [low, high]."""
    return FigureDiff(
        figure="e2el_ms.p50", scope=SCOPE, unit="ms", higher_is_better=False, status="compared",
        old=old, new=new, noise=Noise(method="within-run", lower=low, upper=high), **update,
    )  # fmt: skip


def test_a_row_on_within_run_noise_alone_is_never_decided():
    """240 → 310 ms with a within-run interval [60, 80] ms: worse beyond noise and its 10 % limit. Decided on
    one run's own noise it was a regression (issue 41: two demo builds, same host, "Regression" at +27 %);
    now it is not decided, and neither is a row that improved or stayed within noise."""
    worse = _row(240, 310, 60, 80)
    _judge(worse, LIMITS["e2el_ms.p50"])
    assert worse.worse_beyond and not worse.regression and worse.not_decided == NO_BETWEEN
    assert worse.verdict_text() == "not decided: no between-run noise"
    for same in (_row(240, 240, -5, 5), _row(310, 240, -80, -60)):
        _judge(same, LIMITS["e2el_ms.p50"])
        assert not same.regression and same.not_decided == NO_BETWEEN
    # the same change with between-run noise is a regression; on a busy host it is held instead
    decided = _row(240, 310, 60, 80, between_run=True)
    _judge(decided, LIMITS["e2el_ms.p50"])
    assert decided.regression and decided.not_decided is None
    busy = _row(240, 310, 60, 80, between_run=True, busy_host=True)
    _judge(busy, LIMITS["e2el_ms.p50"])
    assert not busy.regression and busy.not_decided == "busy host"


def test_an_undecided_row_makes_the_verdict_inconclusive_never_no_regression():
    rows = [_row(240, 240, -5, 5, between_run=True), _row(240, 241, -5, 5)]
    for r in rows:
        _judge(r, LIMITS["e2el_ms.p50"])
    verdict, why = _verdict(rows, SOUND)
    assert verdict == "inconclusive"
    assert (
        why
        == f"1 of the 2 figure(s) the gate decides on open: not decided, no between-run noise: e2el_ms.p50 ({SCOPE})"
    )
    # a decided regression is a regression, whatever else is open
    rows.append(_row(240, 310, 60, 80, between_run=True))
    _judge(rows[-1], LIMITS["e2el_ms.p50"])
    assert _verdict(rows, SOUND)[0] == "regression"


def test_no_regression_needs_every_row_that_decides_compared():
    """Issue 42: "12 of 53 compared" was no_regression. A row that decides and was not compared (here too few
    samples for a p99) leaves the verdict inconclusive, naming the row; indicative sweep rows never count."""
    decided = _row(240, 240, -5, 5, between_run=True)
    _judge(decided, LIMITS["e2el_ms.p50"])
    missing = FigureDiff(figure="e2el_ms.p99", scope=SCOPE, unit="", higher_is_better=False,
                         status="not_comparable", reason="too few samples", too_few_samples=True)  # fmt: skip
    sweep = _row(240, 400, 100, 200, indicative=True)
    _judge(sweep, LIMITS["e2el_ms.p50"])
    verdict, why = _verdict([decided, missing, sweep], SOUND)
    assert verdict == "inconclusive" and why.endswith(f"not compared: e2el_ms.p99 ({SCOPE})")
    verdict, why = _verdict([decided, sweep], SOUND)
    assert verdict == "no_regression" and why.startswith("all 1 figure(s) the gate decides on compared")
    # a sweep alone decides nothing: no "no regression" on indicative rows
    assert _verdict([sweep], SOUND)[0] == "inconclusive"


def test_the_baseline_repeats_alone_decide_by_their_prediction_interval():
    """Baseline repeats 240, 242, 244 ms (mean 242, s 2) and the candidate's one run: the normal-theory
    prediction test, t = (x − 242) / (2 · √(4/3)) on 2 degrees of freedom."""
    scale = 2 * math.sqrt(4 / 3)
    for new, beyond in ((243.0, False), (310.0, True)):
        row = _row(242, new, 0, 0, old_repeats=[240.0, 242.0, 244.0], between_run=True)
        row.noise = _prediction_noise(row, 0.05, 1)
        p = 2 * student_t.sf(abs(new - 242) / scale, 2)
        assert math.isclose(row.noise.p_value, p, rel_tol=1e-9)
        half = student_t.ppf(0.975, 2) * scale
        assert math.isclose(row.noise.upper - row.noise.lower, 2 * half, rel_tol=1e-9)
        _judge(row, LIMITS["e2el_ms.p50"])
        assert row.beyond_noise is beyond and row.regression is beyond
