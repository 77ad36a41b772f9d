"""Confirm before recommending: fresh, interleaved replicates of the search's best point and its rivals.

A search keeps the point whose one noisy evaluation scored best. Where the best points sit on the p99
SLO's edge, that evaluation is the lucky draw (winner's curse): the point misses the SLO in most fresh
runs. So the incumbent, the default and every measured point whose score is within noise of the incumbent
are measured again, in rounds that visit each once (serpentine order, so a drift of the host's load hits
all alike and the server restarts at most once a round), and the recommendation is chosen from the fresh
runs alone by the rule in `CONFIRM_RULE`. The search's own evaluation of a point is never used to choose:
it is the biased one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
from pydantic import Field

from probes.core.measurement import Model
from tuner.estimates import Estimate, Figures, compute_figures, good_mask, p99_of, score_value, slo_values_ms
from tuner.evaluation import RunSample
from tuner.knobs import OperatingPoint
from tuner.spec import TunerSpec

Key = tuple[int, int, int]
# Role of the optimum of the climb that starts from a back-off point (tuner.climb), confirmed again.
BACKOFF_BEST = "back-off climb's best"

CONFIRM_RULE = (
    "confirm the incumbent (the search's best point), the default and up to `confirm_contenders` other "
    "measured points whose score is within noise of the incumbent's (score ≥ incumbent − z·sqrt(SE² + "
    "SE_incumbent²)), each with `confirm_runs` fresh evaluations in interleaved rounds; from the fresh runs "
    "alone estimate each point's probability P(SLO) that a fresh run's p99 meets the SLO, a one-sided "
    "`slo_confidence` lower confidence bound of that probability, and the lower confidence bound of its "
    "score in a fresh run (mean of the per-run scores − z·SE); a point is eligible when the lower bound of "
    "its P(SLO) is ≥ `slo_probability` (P(SLO) itself when it rests on one run); recommend, among eligible "
    "points, the highest score lower bound; while none is eligible and the budget "
    "allows, back off: confirm the most likely point's neighbour one concurrency step lower (less load, "
    "lower p99) with as many fresh runs, and judge again; if the back-off point reaches it, climb from it "
    "(every neighbour measured, no simulator screening; points that failed confirmation excluded) and "
    "confirm that climb's optimum with its rivals the same way; if none is eligible in the end, the highest "
    "P(SLO) (ties: the higher score lower bound)"
)

PROBABILITY_METHOD = (
    "Student-t predictive distribution of a fresh run's p99 from the point's {r} run(s): mean m of the "
    "runs' p99s (numpy 'linear'), scale s·sqrt(1 + 1/n) with s = max(sd of the runs' p99s, RMS of their "
    "within-run bootstrap SE ({b} resamples of requests)), n − 1 degrees of freedom; P(SLO) = "
    "P(p99 ≤ {slo:g} ms). Run-to-run spread is what decides near the SLO's edge, and a t with few runs "
    "does not let three lucky runs pass for certainty. Lower bound: exact one-sided {g:g} confidence bound "
    "of P(SLO) = Φ((SLO − μ)/σ) under the same normal model of a run's p99 (noncentral t of "
    "sqrt(n)·(SLO − m)/s, s as above without the predictive factor): a point rarely passes on the luck of "
    "its few runs, and the more so the more points are judged"
)
ONE_RUN_METHOD = (
    "one run: bootstrap of its requests ({b} resamples); P(SLO) = share of resampled p99s ≤ {slo:g} ms. "
    "It reflects only the sampling of requests, not run-to-run spread"
)


class SloProbability(Model):
    """Estimated probability that a fresh run of the point meets the p99 SLO, and what it rests on."""

    value: float = Field(ge=0, le=1, description="estimated P(p99 of a fresh run ≤ SLO)")
    lower_bound: float | None = Field(
        None,
        ge=0,
        le=1,
        description="one-sided lower confidence bound of P(SLO); None when it rests on one run",
    )
    confidence: float | None = Field(None, gt=0, lt=1, description="confidence level of lower_bound")
    runs: int = Field(ge=0, description="runs the estimate rests on")
    runs_met: int = Field(ge=0, description="of those, runs whose own p99 met the SLO")
    requests: int = Field(ge=0, description="completed requests over those runs")
    basis: str = Field(description="which runs: fresh confirmation runs or the search's own evaluation")
    method: str


class ConfirmedPoint(Model):
    """One point of the confirmation: its fresh figures and how the rule judged it."""

    point: OperatingPoint
    roles: list[str] = Field(
        description="incumbent (the search's best), default, contender (within noise of the incumbent), "
        "back-off (one concurrency step below the most likely point when none met the required P(SLO)), "
        "back-off climb's best (the optimum of the climb from the back-off point, confirmed again); "
        "incumbent, default and back-off climb's best each name at most one point, back-off one per step"
    )
    search_score: float | None = Field(
        description="score of the search's own evaluation (req/s; selection-biased); None if it had none"
    )
    fresh_runs: int = Field(ge=0, description="fresh confirmation runs of this point")
    figures: Figures | None = Field(description="pooled over the fresh runs; None when there were none")
    fresh_score: Estimate | None = Field(
        description="score of a fresh run: mean of the per-run scores, SE over runs and requests"
    )
    score_lower_bound: float | None = Field(description="fresh_score − z·SE (req/s)")
    slo_probability: SloProbability | None
    eligible: bool = Field(
        description="lower confidence bound of P(SLO) (P(SLO) for one run) ≥ slo_probability"
    )


class Confirmation(Model):
    rule: str
    runs_per_point: int
    slo_probability_required: float
    points: list[ConfirmedPoint]
    chosen: OperatingPoint
    reason: str
    evaluations: int = Field(description="fresh evaluations made (charged to the budget, in the trace)")
    time_s: float = Field(description="time charged to the budget for them, restarts included (s)")


def rule_text(cfg: TunerSpec) -> str:
    return (
        CONFIRM_RULE + f" (z = {cfg.noise_z:g}, confirm_runs = {cfg.confirm_runs}, "
        f"confirm_contenders = {cfg.confirm_contenders}, slo_probability = {cfg.slo_probability:g}, "
        f"slo_confidence = {cfg.slo_confidence:g})"
    )


# -- which points, in which order ---------------------------------------------------------------------


def within_noise(fig: Figures, best: Figures, z: float) -> bool:
    """The acceptance rule's noise band, seen from below: `fig` is not beaten beyond noise by `best`."""
    return fig.score.value >= best.score.value - z * float(np.hypot(fig.score.se, best.score.se))


def plan(
    measured: Mapping[Key, Figures],
    incumbent: OperatingPoint,
    default: OperatingPoint,
    cfg: TunerSpec,
    *,
    max_points: int | None = None,
    exclude: frozenset[Key] = frozenset(),
) -> list[OperatingPoint]:
    """Points to confirm, most important first: incumbent, default, then contenders by search score;
    points in `exclude` (already confirmed) only if they are the incumbent."""
    best = measured[incumbent.key()]
    points = [incumbent]
    if default != incumbent and default.key() in measured and default.key() not in exclude:
        points.append(default)
    taken = {p.key() for p in points} | exclude
    rivals = sorted(
        (
            (f.score.value, k)
            for k, f in measured.items()
            if k not in taken and within_noise(f, best, cfg.noise_z)
        ),
        reverse=True,
    )
    points += [_point(k) for _, k in rivals[: cfg.confirm_contenders]]
    return points[: max_points if max_points is not None else len(points)]


def schedule(points: list[OperatingPoint], runs: int, server: OperatingPoint | None) -> list[OperatingPoint]:
    """`runs` rounds, each visiting every point once; points sharing a server stay together, and every
    other round is reversed so that a round begins on the server the last one ended on."""
    groups: dict[tuple, list[OperatingPoint]] = {}
    for p in points:
        groups.setdefault(p.server_key(), []).append(p)
    order = sorted(groups, key=lambda g: server is None or g != server.server_key())  # stable
    forward = [p for g in order for p in groups[g]]
    return [p for r in range(runs) for p in (forward if r % 2 == 0 else forward[::-1])]


def restarts_needed(order: list[OperatingPoint], server: OperatingPoint | None) -> int:
    keys = [server.server_key() if server else None] + [p.server_key() for p in order]
    return sum(a != b for a, b in zip(keys[:-1], keys[1:], strict=True))


# -- judging the fresh runs -------------------------------------------------------------------------------


def slo_probability(runs: list[RunSample], cfg: TunerSpec, *, seed: int, basis: str) -> SloProbability | None:
    # deferred: importing scipy costs every command ~0.7 s of CPU at its start (tuner.result needs this module)
    from scipy.stats import t as student_t

    values = [v for v in (slo_values_ms(r, cfg.slo_metric) for r in runs) if v.size]
    if not values:
        return None
    slo_ms = cfg.slo_p99_ms
    b = cfg.bootstrap_resamples
    rng = np.random.default_rng(seed)
    own = np.array([p99_of(v) for v in values])
    boot = [p99_of(v[rng.integers(0, v.size, size=(b, v.size))], axis=1) for v in values]
    lower = None
    if len(values) == 1:
        value, method = float((boot[0] <= slo_ms).mean()), ONE_RUN_METHOD
    else:
        n = len(values)
        within = float(np.sqrt(np.mean([x.var(ddof=1) for x in boot])))
        spread = max(float(own.std(ddof=1)), within)
        scale = spread * np.sqrt(1 + 1 / n)
        value = (
            float(student_t.cdf((slo_ms - own.mean()) / scale, df=n - 1))
            if scale > 0
            else float(own.mean() <= slo_ms)
        )
        lower = probability_lower_bound(own.mean(), spread, n, slo_ms, cfg.slo_confidence)
        method = PROBABILITY_METHOD
    return SloProbability(
        value=value,
        lower_bound=lower,
        confidence=None if lower is None else cfg.slo_confidence,
        runs=len(values),
        runs_met=int((own <= slo_ms).sum()),
        requests=sum(v.size for v in values),
        basis=basis,
        method=method.format(b=b, r=len(values), slo=cfg.slo_p99_ms, g=cfg.slo_confidence),
    )


def probability_lower_bound(mean: float, sd: float, n: int, slo: float, confidence: float) -> float:
    """One-sided `confidence` lower bound of Φ((slo − μ)/σ) from n normal samples with mean and sd: the
    statistic sqrt(n)·(slo − mean)/sd is noncentral t (n − 1 d.f., noncentrality sqrt(n)·(slo − μ)/σ);
    the bound is Φ(δ_L/sqrt(n)) for the δ_L at which the observed statistic is its `confidence` quantile."""
    # deferred: importing scipy costs every command ~0.7 s of CPU at its start (tuner.result needs this module)
    from scipy.optimize import brentq
    from scipy.stats import nct, norm

    if sd <= 0:
        return float(mean <= slo)
    t_obs = float(np.clip(np.sqrt(n) * (slo - mean) / sd, -50, 50))  # beyond: a bound of 0 or 1

    def excess(delta: float) -> float:  # decreasing in delta
        cdf = float(nct.cdf(t_obs, n - 1, delta))
        if np.isnan(cdf):  # scipy's series fails far in a tail: the cdf is ≈ 1 there (δ ≪ t) or ≈ 0
            cdf = 1.0 if delta < t_obs else 0.0
        return cdf - confidence

    lo, hi = -60.0, 60.0
    if excess(lo) <= 0:
        return 0.0
    if excess(hi) >= 0:
        return 1.0
    return float(norm.cdf(brentq(excess, lo, hi, xtol=1e-6) / np.sqrt(n)))


def fresh_score(
    runs: list[RunSample], point: OperatingPoint, cfg: TunerSpec, *, seed: int
) -> Estimate | None:
    """Score of one fresh run: mean of the per-run scores; SE from a bootstrap over runs, then requests
    within each run (floored at the per-run spread's SE)."""
    pairs = [(v, r) for v, r in ((slo_values_ms(r, cfg.slo_metric), r) for r in runs) if v.size]
    if not pairs:
        return None

    def run_score(v: np.ndarray, duration: float) -> float:
        good = int(good_mask(v, cfg.slo_p99_ms).sum()) / duration
        return score_value(good, p99_ms=float(p99_of(v)), point=point, cfg=cfg)

    scores = np.array([run_score(v, r.duration_s) for v, r in pairs])
    rng = np.random.default_rng(seed)
    b, n = cfg.bootstrap_resamples, len(pairs)
    means = np.empty(b)
    for i in range(b):
        means[i] = np.mean(
            [
                run_score(
                    pairs[j][0][rng.integers(0, pairs[j][0].size, pairs[j][0].size)], pairs[j][1].duration_s
                )
                for j in rng.integers(0, n, n)
            ]  # fmt: skip
        )
    se = float(means.std(ddof=1))
    if n >= 2:
        se = max(se, float(scores.std(ddof=1) / np.sqrt(n)))
    mean = float(scores.mean())
    return Estimate(
        value=mean, se=se, ci_low=mean - 1.96 * se, ci_high=mean + 1.96 * se, unit="req/s",
        definition=f"mean over {n} fresh run(s) of each run's S(K) = goodput − λ·max(0, p99 − SLO) − hw_cost",
        n=sum(v.size for v, _ in pairs),
    )  # fmt: skip


def assess(
    point: OperatingPoint,
    roles: list[str],
    search_fig: Figures | None,
    runs: list[RunSample],
    cfg: TunerSpec,
    *,
    seed: int,
) -> ConfirmedPoint:
    fig = compute_figures(runs, point, cfg, seed=seed) if runs else None
    score = fresh_score(runs, point, cfg, seed=seed) if fig is not None else None
    prob = (
        slo_probability(runs, cfg, seed=seed, basis=f"{len(runs)} fresh confirmation run(s)")
        if fig is not None
        else None
    )
    return ConfirmedPoint(
        point=point,
        roles=roles,
        search_score=None if search_fig is None else search_fig.score.value,
        fresh_runs=len(runs),
        figures=fig,
        fresh_score=score,
        score_lower_bound=None if score is None else score.value - cfg.noise_z * score.se,
        slo_probability=prob,
        eligible=prob is not None and _assured(prob) >= cfg.slo_probability,
    )


def _assured(prob: SloProbability) -> float:
    """What eligibility rests on: the lower confidence bound, or P(SLO) itself for one run."""
    return prob.value if prob.lower_bound is None else prob.lower_bound


def _need(cfg: TunerSpec) -> str:
    return f"P(SLO) ≥ {cfg.slo_probability:g} at {cfg.slo_confidence:g} confidence"


def choose(points: list[ConfirmedPoint], cfg: TunerSpec) -> tuple[OperatingPoint, str]:
    """The stated rule; points without fresh figures are not chosen (their only figure is the biased one)."""
    judged = [p for p in points if p.slo_probability is not None and p.score_lower_bound is not None]
    if not judged:
        return points[
            0
        ].point, "no point has fresh figures (budget spent): the search's best stands, unconfirmed"
    eligible = [p for p in judged if p.eligible]
    need = _need(cfg)
    if eligible:
        best = max(eligible, key=lambda p: p.score_lower_bound)
        sp = best.slo_probability
        bound = "" if sp.lower_bound is None else f", lower bound {sp.lower_bound:.2f}"
        why = (
            f"highest score lower bound ({best.score_lower_bound:.3f} req/s) among the {len(eligible)} of "
            f"{len(judged)} confirmed points with {need} (its P(SLO) = {sp.value:.2f}{bound})"
        )
    else:
        best = max(judged, key=lambda p: (p.slo_probability.value, p.score_lower_bound))
        why = (
            f"no confirmed point reached {need}; highest P(SLO) ({best.slo_probability.value:.2f}) of the "
            f"{len(judged)} confirmed points"
        )
    return best.point, why


def confirm(
    measure: Callable[[OperatingPoint, str], tuple[list[RunSample], float] | None],
    measured: Mapping[Key, Figures],
    incumbent: OperatingPoint,
    default: OperatingPoint,
    cfg: TunerSpec,
    *,
    server: OperatingPoint | None,
    max_points: int | None = None,
    exclude: frozenset[Key] = frozenset(),
    incumbent_role: str = "incumbent",
) -> Confirmation:
    """Measure the planned points in interleaved rounds and choose by the rule. `measure(point, why)` makes
    one fresh evaluation (charging the budget, recording the trace) and returns its runs and cost (s), or
    None when the budget cannot pay for it (confirmation then ends: later points would get fewer runs).
    `incumbent_role` names the point confirmation starts from ("incumbent": the search's best)."""
    points = plan(measured, incumbent, default, cfg, max_points=max_points, exclude=exclude)
    fresh: dict[Key, list[RunSample]] = {p.key(): [] for p in points}
    order = schedule(points, cfg.confirm_runs, server)
    evaluations, cost = 0, 0.0
    for i, p in enumerate(order):
        rnd = i // len(points) + 1
        got = measure(
            p, f"confirmation round {rnd} of {cfg.confirm_runs} ({len(points)} points, interleaved)"
        )
        if got is None:
            break
        fresh[p.key()] += got[0]
        evaluations, cost = evaluations + 1, cost + got[1]
    judged = [
        assess(
            p,
            roles_of(p, incumbent, default, incumbent_role),
            measured[p.key()],
            fresh[p.key()],
            cfg,
            seed=cfg.seed + i,
        )
        for i, p in enumerate(points)
    ]
    spent = evaluations == len(order)  # every planned run was paid for; else the budget is gone
    while spent and not any(p.eligible for p in judged):
        step = backoff_point(judged, cfg)
        if step is None:
            break
        runs: list[RunSample] = []
        for r in range(cfg.confirm_runs):
            why = (
                f"back-off run {r + 1} of {cfg.confirm_runs}: no confirmed point reached {_need(cfg)}; "
                "one concurrency step below the most likely one"
            )
            got = measure(step, why)
            if got is None:
                spent = False
                break
            runs += got[0]
            evaluations, cost = evaluations + 1, cost + got[1]
        if runs:
            judged.append(
                assess(step, ["back-off"], measured.get(step.key()), runs, cfg, seed=cfg.seed + len(judged))
            )
    chosen, reason = choose(judged, cfg)
    return Confirmation(
        rule=rule_text(cfg),
        runs_per_point=cfg.confirm_runs,
        slo_probability_required=cfg.slo_probability,
        points=judged,
        chosen=chosen,
        reason=reason,
        evaluations=evaluations,
        time_s=cost,
    )


def backoff_point(judged: list[ConfirmedPoint], cfg: TunerSpec) -> OperatingPoint | None:
    """One concurrency step below the most likely judged point (below that, if it was judged too)."""
    scored = [p for p in judged if p.slo_probability is not None and p.score_lower_bound is not None]
    if not scored:
        return None
    base = max(scored, key=lambda p: (p.slo_probability.value, p.score_lower_bound)).point
    done = {p.point.key() for p in judged}
    values = cfg.knobs.concurrency
    for c in reversed(values[: values.index(base.concurrency)]):
        step = base.with_knob("concurrency", c)
        if step.key() not in done:
            return step
    return None


def roles_of(
    point: OperatingPoint,
    incumbent: OperatingPoint,
    default: OperatingPoint,
    incumbent_role: str = "incumbent",
) -> list[str]:
    roles = [r for r, p in ((incumbent_role, incumbent), ("default", default)) if p == point]
    return roles or ["contender"]


def _point(key: Key) -> OperatingPoint:
    return OperatingPoint(concurrency=key[0], max_num_seqs=key[1], spec_k=key[2])
