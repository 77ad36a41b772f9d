"""The hill climber on known surfaces: finds the optimum, respects noise and budgets, keeps every step."""

import math

import pytest

from tests.tuner.tuner_synthetic import SyntheticEvaluator
from tuner import OperatingPoint, TunerSpec, TuningLoad, tune
from tuner.knobs import KNOBS
from tuner.spec import KnobSpace

OPT = OperatingPoint(concurrency=8, max_num_seqs=4, spec_k=1)


def peaked(p: OperatingPoint) -> float:
    """A unimodal surface in log2 space with its maximum (20 req/s) at OPT."""
    dc = math.log2(p.concurrency / OPT.concurrency)
    dm = math.log2(p.max_num_seqs / OPT.max_num_seqs)
    return 20.0 * math.exp(-0.15 * dc**2 - 0.08 * dm**2 - 0.1 * abs(p.spec_k - OPT.spec_k))


def _cfg(**kw) -> TunerSpec:
    base = dict(
        slo_p99_ms=1000.0, workload=TuningLoad(num_requests=4000), min_samples=64,
        start=OperatingPoint(concurrency=1, max_num_seqs=64, spec_k=0), max_evaluations=60, time_budget_s=1e7,
        confirm_runs=0,  # the search alone; tests/tuner/test_confirm.py covers the confirmation
    )  # fmt: skip
    base.update(kw)
    return TunerSpec(**base)


def _check_acceptances(result, z):
    """Every accepted move beat the point before it by more than z × SE of the difference."""
    figs = {
        e.point.key(): e.figures
        for e in result.trace
        if e.source == "live" and e.figures and e.decision != "confirm"
    }
    current = result.trace[0]
    for e in result.trace:
        if e.decision == "restart" and e.figures:  # a new climb: later moves are judged against its start
            current = e
        if e.decision == "accepted":
            a, b = figs[current.point.key()].score, e.figures.score
            assert b.value - a.value > z * math.hypot(a.se, b.se)
            current = e


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_finds_known_optimum_under_noise(seed):
    cfg = _cfg(seed=seed)
    result = tune(SyntheticEvaluator(peaked), cfg)
    assert result.recommended.point == OPT
    assert "the last ended: local optimum" in result.stop_reason
    assert result.budget.evaluations_used < KnobSpace().size() * 0.2
    _check_acceptances(result, cfg.noise_z)


@pytest.mark.system
def test_flat_surface_false_moves_stay_at_the_noise_rate():
    # With z = 3 a comparison passes by chance with p ≈ 0.13 %; ~5 comparisons per climb gives an
    # expected 0.3 false moves in 40 climbs, so more than 2 means the noise rule is broken.
    moved = 0
    for seed in range(40):
        cfg = _cfg(seed=seed, workload=TuningLoad(num_requests=400), noise_z=3.0)
        result = tune(SyntheticEvaluator(lambda p: 10.0), cfg)
        _check_acceptances(result, cfg.noise_z)
        moved += result.recommended.point != cfg.start
    assert moved <= 2


def test_flat_surface_knobs_do_not_matter():
    cfg = _cfg(seed=3, workload=TuningLoad(num_requests=400), noise_z=3.0)
    result = tune(SyntheticEvaluator(lambda p: 10.0), cfg)
    assert result.recommended.point == cfg.start
    assert all(not k.mattered for k in result.knob_effects)


def test_stops_at_evaluation_budget():
    ev = SyntheticEvaluator(peaked)
    result = tune(ev, _cfg(max_evaluations=4))
    assert len(ev.calls) == result.budget.evaluations_used == 4
    assert "evaluation budget" in result.stop_reason


def test_stops_within_time_budget_charging_restarts():
    ev = SyntheticEvaluator(lambda p: 10.0, restart_s=100.0, noise=False)
    # Each run takes 4000/10 = 400 s; restarts cost 100 s. 1400 s fits the start (500 s) and two
    # online moves (400 s each) but not a third evaluation.
    cfg = _cfg(time_budget_s=1400.0, start=OperatingPoint(concurrency=8, max_num_seqs=4, spec_k=1))
    result = tune(ev, cfg)
    assert result.budget.time_used_s <= cfg.time_budget_s
    assert "time budget" in result.stop_reason
    assert result.trace[0].restart and result.trace[0].cost_s == pytest.approx(500.0)


def test_trace_keeps_every_evaluation_with_a_reason():
    ev = SyntheticEvaluator(peaked)
    result = tune(ev, _cfg())
    measured = [e for e in result.trace if e.source == "live"]
    assert [e.point for e in measured] == ev.calls
    assert all(e.reason for e in result.trace)
    assert measured[0].decision == "start"
    assert [e.index for e in result.trace] == list(range(len(result.trace)))


def test_unsupported_knob_is_fixed_and_recorded():
    ev = SyntheticEvaluator(
        peaked, unsupported=lambda p: "server exited: speculation unsupported" if p.spec_k else None
    )
    result = tune(ev, _cfg())
    assert [f.knob for f in result.fixed_knobs] == ["spec_k"]
    assert "speculation unsupported" in result.fixed_knobs[0].reason
    assert sum(1 for p in ev.calls if p.spec_k) == 1
    assert result.recommended.point == OPT.with_knob("spec_k", 0)
    assert any(e.decision == "unsupported" for e in result.trace)


@pytest.mark.system
def test_simulator_prescreen_saves_live_evaluations_and_reports_fidelity():
    plain = SyntheticEvaluator(peaked)
    tune(plain, _cfg())
    live = SyntheticEvaluator(peaked, latency_s=lambda p: 0.01 * p.concurrency)
    sim = SyntheticEvaluator(
        peaked, source="simulator", noise=False, latency_s=lambda p: 0.01 * p.concurrency
    )
    result = tune(live, _cfg(), simulator=sim)
    assert result.recommended.point == OPT
    assert len(live.calls) < len(plain.calls)
    assert any(e.decision == "screened_out" and e.source == "simulator" for e in result.trace)
    assert result.fidelity.p99_spearman == pytest.approx(1.0)
    assert result.fidelity.goodput_mean_rel_error < 0.1
    # No calibration run here: the simulator was fitted to none of the live points.
    assert result.fidelity.out_of_sample.n_points == result.fidelity.n_points
    assert {row["sample"] for row in result.fidelity.points} == {"out"}


def test_without_simulator_fidelity_is_not_measured_with_reason():
    result = tune(SyntheticEvaluator(peaked), _cfg(max_evaluations=3))
    assert result.fidelity.status == "not_measured" and "no simulator" in result.fidelity.reason


def test_slo_penalty_steers_away_from_points_over_the_slo():
    # Goodput counts requests within the SLO; p99 over the SLO also costs λ per second.
    ev = SyntheticEvaluator(lambda p: 5.0 * p.concurrency, latency_s=lambda p: 0.25 * p.concurrency)
    cfg = _cfg(slo_p99_ms=1000.0, start=OperatingPoint(concurrency=16, max_num_seqs=64, spec_k=0))
    result = tune(ev, cfg)
    assert result.recommended.point.concurrency == 4  # 4 × 0.25 s = 1 s: the largest within the SLO
    assert result.recommended.figures.p99.value <= 1000.0  # ms


def test_justification_states_the_figures():
    result = tune(SyntheticEvaluator(peaked), _cfg())
    text = result.justification
    assert "λ = 10" in text and "1000 ms" in text
    assert f"{result.recommended.figures.goodput.value:.3g}" in text
    assert result.stop_reason in text


def test_prior_evaluations_are_charged_once_and_reused_not_remeasured():
    from tuner.climb import Climb
    from tuner.findings import build_result

    cfg = _cfg(start=OperatingPoint(concurrency=4, max_num_seqs=4, spec_k=1))
    pre = SyntheticEvaluator(peaked, restart_s=30.0)
    prior = [pre.evaluate(p, cfg.workload, repeats=1, seed=i) for i, p in enumerate([OPT, cfg.start])]
    ev = SyntheticEvaluator(peaked)
    result = build_result(Climb(ev, cfg, None, None, prior=prior, server=cfg.start).run())
    # Neither the start nor OPT (a neighbour, measured beforehand) was measured again.
    assert cfg.start not in ev.calls and OPT not in ev.calls
    assert result.recommended.point == OPT
    assert result.budget.time_used_s >= sum(e.cost_s for e in prior)
    assert result.budget.evaluations_used == 2 + len(ev.calls)


def test_prior_unsupported_fixes_the_knob_before_the_climb():
    from tuner.climb import Climb
    from tuner.evaluation import Evaluation, Unsupported

    cfg = _cfg(start=OperatingPoint(concurrency=4, max_num_seqs=4, spec_k=0))
    refused = Evaluation(
        point=cfg.start.with_knob("spec_k", 1), source="live", restart_s=40.0,
        unsupported=Unsupported(knob="spec_k", value=1, reason="server did not start: ngram unsupported"),
    )  # fmt: skip
    ev = SyntheticEvaluator(peaked)
    outcome = Climb(ev, cfg, None, None, prior=[refused]).run()
    assert [f.knob for f in outcome.fixed_knobs] == ["spec_k"] and all(p.spec_k == 0 for p in ev.calls)
    assert outcome.trace[0].decision == "unsupported" and outcome.time_used_s >= 40.0


# -- restarts -------------------------------------------------------------------------------------

SPACE = KnobSpace()
LOW_PEAK = OperatingPoint(concurrency=2, max_num_seqs=64, spec_k=0)  # next to the start: traps the climb
HIGH_PEAK = OperatingPoint(concurrency=32, max_num_seqs=4, spec_k=4)  # far away, twice as high


def _steps2(p: OperatingPoint, q: OperatingPoint) -> float:
    """Squared distance in value-list index steps."""
    return sum(
        (SPACE.values(k).index(getattr(p, k)) - SPACE.values(k).index(getattr(q, k))) ** 2 for k in KNOBS
    )


def two_peaks(p: OperatingPoint) -> float:
    """A narrow peak of ≈ 12 req/s at LOW_PEAK, a broad, pointed one of ≈ 21 req/s at HIGH_PEAK; a valley between."""
    high = 20.0 * math.exp(-math.sqrt(_steps2(p, HIGH_PEAK)) / 3)  # still rising ≈ 8 steps away
    return 1.0 + 10.0 * math.exp(-0.5 * _steps2(p, LOW_PEAK)) + high


def _restarts(result) -> list:
    return [e for e in result.trace if e.decision == "restart"]


def test_plain_climb_stops_on_the_lower_of_two_peaks():
    # The control for the restart tests: without restarts the trap holds.
    result = tune(SyntheticEvaluator(two_peaks), _cfg(restarts=0))
    assert result.recommended.point == LOW_PEAK
    assert not _restarts(result)
    assert "1 climb ran (0 of 0 restarts used)" in result.stop_reason


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_restart_from_the_farthest_point_finds_the_higher_peak(seed):
    result = tune(SyntheticEvaluator(two_peaks), _cfg(restarts=2, seed=seed))
    assert result.recommended.point == HIGH_PEAK
    assert 1 <= len(_restarts(result)) <= 2
    assert result.budget.evaluations_used < 0.2 * SPACE.size()


def test_restart_point_is_the_farthest_from_every_evaluated_point_and_seeded():
    def farthest_check(result):
        for r in _restarts(result):
            before = [e.point for e in result.trace[: r.index] if e.source == "live"]
            far = min(_steps1(r.point, q) for q in before)
            # No unevaluated point lies farther from everything evaluated before the restart.
            assert all(min(_steps1(p, q) for q in before) <= far for p in _all_points() if p not in before)
            assert f"{far} value-list steps" in r.reason

    first = tune(SyntheticEvaluator(two_peaks), _cfg(restarts=2, seed=5))
    again = tune(SyntheticEvaluator(two_peaks), _cfg(restarts=2, seed=5))
    farthest_check(first)
    assert [e.point for e in _restarts(first)] == [e.point for e in _restarts(again)]


@pytest.mark.system
def test_restart_with_a_simulator_starts_at_the_best_predicted_unmeasured_point():
    sim = SyntheticEvaluator(two_peaks, source="simulator", noise=False)
    result = tune(SyntheticEvaluator(two_peaks), _cfg(restarts=1), simulator=sim)
    first = _restarts(result)[0]
    assert first.point == HIGH_PEAK  # the predicted maximum over the whole space, not a neighbour
    assert first.source == "live" and first.figures is not None and "best predicted score" in first.reason
    assert result.recommended.point == HIGH_PEAK
    # Every point was predicted once (cached), so screening the space cost no live evaluation.
    assert len(sim.calls) == SPACE.size()


def test_a_later_lower_optimum_does_not_replace_the_best_so_far():
    # Start on the high peak: the restart climbs to the low one, which must not become the recommendation.
    result = tune(SyntheticEvaluator(two_peaks), _cfg(restarts=2, start=HIGH_PEAK))
    assert _restarts(result)
    assert result.recommended.point == HIGH_PEAK
    assert result.default.point == HIGH_PEAK


def test_restarts_stop_at_the_configured_count_and_are_each_in_the_trace():
    ev = SyntheticEvaluator(peaked)
    result = tune(ev, _cfg(restarts=3))
    restarts = _restarts(result)
    assert [r.reason.split(" (")[0] for r in restarts] == [f"restart {i} of 3" for i in (1, 2, 3)]
    assert result.stop_reason.startswith("4 climbs ran (3 of 3 restarts used); the last ended: ")
    # A restart begins at a point not evaluated before it, and is measured live (it is an evaluation).
    for r in restarts:
        assert r.point not in ev.calls[: ev.calls.index(r.point)]
        assert r.source == "live" and r.figures is not None
    assert "restarted 3 time(s)" in result.justification
    _check_acceptances(result, 2.0)


@pytest.mark.parametrize("budget", range(2, 16))
def test_restarts_respect_the_evaluation_budget(budget):
    ev = SyntheticEvaluator(peaked)
    result = tune(ev, _cfg(restarts=50, max_evaluations=budget))
    assert len(ev.calls) == result.budget.evaluations_used <= budget
    assert "evaluation budget spent" in result.stop_reason


def test_a_restart_is_refused_when_the_climb_ended_exactly_at_the_evaluation_budget():
    # Flat: the climb measures the start and both neighbours, ends at a local optimum with the
    # budget spent; the one point left (concurrency 8) must not be measured by a restart.
    space = KnobSpace(concurrency=[1, 2, 4, 8], max_num_seqs=[64], spec_k=[0])
    ev = SyntheticEvaluator(lambda p: 10.0, noise=False)
    result = tune(ev, _cfg(knobs=space, start=OperatingPoint(concurrency=2, max_num_seqs=64, spec_k=0),
                           max_evaluations=3, restarts=2))  # fmt: skip
    assert sorted(p.concurrency for p in ev.calls) == [1, 2, 4]
    assert result.stop_reason.startswith("local optimum")
    assert result.stop_reason.endswith(
        "; then evaluation budget spent (3 of 3); 1 climb ran (0 of 2 restarts used)"
    )


def test_restarts_respect_the_time_budget():
    # Runs take 400 s and restarts of the server 100 s: 2000 s fits five evaluations at most.
    ev = SyntheticEvaluator(lambda p: 10.0, restart_s=100.0, noise=False)
    result = tune(ev, _cfg(restarts=50, time_budget_s=2000.0, start=OPT))
    assert result.budget.time_used_s <= 2000.0
    assert "time budget" in result.stop_reason


def test_restarts_end_when_every_point_was_evaluated():
    space = KnobSpace(concurrency=[1, 2, 4], max_num_seqs=[64], spec_k=[0])
    ev = SyntheticEvaluator(lambda p: 10.0)
    result = tune(ev, _cfg(knobs=space, restarts=5))
    assert sorted(p.concurrency for p in ev.calls) == [1, 2, 4]
    assert "no unevaluated point left to restart from" in result.stop_reason


def _steps1(p: OperatingPoint, q: OperatingPoint) -> int:
    return sum(
        abs(SPACE.values(k).index(getattr(p, k)) - SPACE.values(k).index(getattr(q, k))) for k in KNOBS
    )


def _all_points() -> list[OperatingPoint]:
    return [
        OperatingPoint(concurrency=c, max_num_seqs=m, spec_k=k)
        for c in SPACE.concurrency
        for m in SPACE.max_num_seqs
        for k in SPACE.spec_k
    ]


def test_run_returns_a_read_only_outcome():
    import dataclasses

    from tuner.climb import Climb

    outcome = Climb(SyntheticEvaluator(peaked), _cfg(max_evaluations=5), None, None).run()
    assert outcome.evaluations_used == 5 and len(outcome.trace) >= 5
    with pytest.raises(dataclasses.FrozenInstanceError):
        outcome.recommended = OPT
    with pytest.raises(TypeError):
        outcome.measured[OPT.key()] = None
    assert isinstance(outcome.trace, tuple) and outcome.predicted is None
