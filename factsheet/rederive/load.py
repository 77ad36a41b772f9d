"""Load points and the capacity search, recomputed from their per-request records."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from factsheet.binding import capacity_step_context, load_point_context, stated_host
from factsheet.document.rules import RuleSet
from factsheet.document.schema import CapacitySection, LoadSection
from factsheet.rederive import server_view
from factsheet.rederive.client_rows import client_rows
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.rederive.records import Binding, Expected, read_records
from probes.core.isolation import Isolation
from probes.core.measurement import DEFAULT_PERCENTILES, NotMeasured
from probes.load.capacity import (
    CapacityPoint,
    CapacityResult,
    answer,
    answer_point,
    capacity_range,
    judge_point,
    knob_point,
    search_capacity,
    settle_repeats,
)
from probes.load.metrics import LoadMetrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord, judge
from probes.load.runner import (
    Arrivals,
    point_figures,
    rejudged_client,
    request_counts,
    steady_records,
)
from probes.load.turns import turn_figures
from probes.load.workers.check import ClientCheck
from probes.load.workloads.profiles import WorkloadProfile


def percentiles_of(metrics: LoadMetrics) -> tuple[float, ...]:
    """The percentiles the run reported (keys 'p50', 'p90', ...), so the same ones are recomputed."""
    keys = metrics.ttft_ms.percentiles or metrics.e2el_ms.percentiles
    return tuple(float(k[1:]) for k in keys) or DEFAULT_PERCENTILES


def load_points(
    load: LoadSection, folder: Path, binding: Binding | None, rules: RuleSet
) -> list[Discrepancy]:
    """Each load point's figures from its records, by the rules that judged its document (`figures`): its
    client check (`attested_client`) and every record's outcome (`rejudged`) too."""
    out: list[Discrepancy] = []
    for i, entry in enumerate(load.points):
        path, res, src = f"load.points[{i}]", entry.result, entry.records.path
        records, problems = read_records(
            folder,
            entry.records,
            RequestRecord.model_validate,
            f"{path}.records",
            Expected(
                load_point_context(res),
                {
                    "label": f"{path}.result.label",
                    "point": f"{path}.result.point",
                    "slo": f"{path}.result.metrics.slo",
                    "started_at": f"{path}.result.started_at",
                },
            ),
            binding,
        )
        out += problems
        if records is None:
            continue
        fixed = res.point.output_len if res.workload.output_lens_digest is None and not res.turns else None
        records, wrong = rejudged(records, res.point.ignore_eos, rules, fixed, f"{path}.records", src)
        out += wrong
        metrics, window, arrivals = figures(
            res.point, res.metrics.slo, records, res.started_at, percentiles_of(res.metrics), rules
        )
        metrics = worded_as(metrics, res.metrics, rules)
        out += differences(res.metrics, metrics, f"{path}.result.metrics", src)
        out += differences(res.window_epoch, window, f"{path}.result.window_epoch", src)
        stated_arrivals = _judged_alike(res.arrivals, rules)
        out += differences(stated_arrivals, arrivals, f"{path}.result.arrivals", src)
        out += differences(res.sent, len(records), f"{path}.result.sent", src)
        if "replies/outcome" in rules or res.requests is not None:  # every point states them since
            counts = request_counts(res.point, records)
            out += differences(res.requests, counts, f"{path}.result.requests", src)
        turns = turn_figures(steady_records(records, res.point), percentiles_of(res.metrics))
        out += differences(res.turns, turns, f"{path}.result.turns", src)
        out += differences(
            res.not_sent, res.point.num_requests - len(records), f"{path}.result.not_sent", src
        )
        out += _in_flight_within_cap(res.point, records, path, src)
        out += attested_client(
            res.client, records, res.point, (metrics, arrivals), rules, f"{path}.result", src
        )[1]
        seen = server_view.recompute(
            res.server_view, res.saturation, entry.server_records, load_point_context(res), records, metrics,
            folder, (f"{path}.server_records", f"{path}.result"), binding,
        )  # fmt: skip
        out += server_view.compare(res.server_view, res.saturation, seen, f"{path}.result", src)
    return out


def figures(
    point: LoadPoint,
    slo: SLO,
    records: list[RequestRecord],
    started_at: float,
    percentiles: tuple[float, ...],
    rules: RuleSet,
) -> tuple[LoadMetrics, tuple[float, float] | None, Arrivals | None]:
    """What a run's records determine (probes' point_figures, by today's rules), the open loop's client-bound
    verdict by the rule that judged the document (its rule's own function where that is not today's)."""
    metrics, window, arrivals = point_figures(point, slo, records, started_at, percentiles)
    judge = rules.of("client-bound").arrivals
    if arrivals is not None and judge is not None:
        arrivals = judge(arrivals, metrics)
    return metrics, window, arrivals


def worded_as(metrics: LoadMetrics, stated: LoadMetrics, rules: RuleSet) -> LoadMetrics:
    """The recomputed metrics with the definitions' words of a document whose replies were not judged
    (no replies/outcome: output tokens and goodput were defined before): the figures are compared, its
    words attested."""
    if "replies/outcome" in rules:
        return metrics
    return metrics.model_copy(update={"definitions": stated.definitions})


def rejudged(
    records: list[RequestRecord],
    ignore_eos: bool,
    rules: RuleSet,
    fixed_len: int | None,
    at: str,
    src: str,
) -> tuple[list[RequestRecord], list[Discrepancy]]:
    """Each record's outcome re-derived from its own fields by the run's rule (records.judge), and the
    records with those outcomes, which every figure is then computed from: an outcome edited in a records
    file is named, never believed. Under replies/outcome a record must state its outcome and the length it
    asked for (a dropped one would count a cut reply as completed); `fixed_len`: the length every request of
    the point asked for, where the workload sets one. Older records state none and are judged as they were
    (`ok`)."""
    required = "replies/outcome" in rules
    again: list[RequestRecord] = []
    wrong: list[tuple[RequestRecord, str]] = []
    for r in records:
        if r.outcome is None and not required:
            again.append(r)
            continue
        if required and (r.max_tokens is None or (fixed_len is not None and r.max_tokens != fixed_len)):
            asked = "no max_tokens" if r.max_tokens is None else f"max_tokens {r.max_tokens}"
            wrong.append((r, f"{asked}, the request asked for {fixed_len or 'a length'}"))
            r = r.model_copy(update={"max_tokens": fixed_len})
        outcome = judge(r, ignore_eos)
        if outcome != r.outcome:
            wrong.append((r, f"outcome {outcome} by the outcome rule"))
            r = r.model_copy(update={"outcome": outcome})
        again.append(r)
    if not wrong:
        return again, []
    first, why = wrong[0]
    return again, [
        Discrepancy(
            figure=f"{at} (request {first.index})",
            stated=first.outcome,
            recomputed=f"{why}; {len(wrong)} such difference(s) in {len(records)} records",
            source=src,
        )
    ]


def _in_flight_within_cap(
    point: LoadPoint, records: list[RequestRecord], path: str, src: str
) -> list[Discrepancy]:
    """What the records show in flight must fit the stated concurrency (closed loop) or cap (open loop).

    At most: a user sends its next request only after its last one ended. At least, closed loop: every user
    sends its first request in the loop's first step, before any response can be read, so min(concurrency,
    requests) are in flight at once. Both hold for records of any schema: what an older, unbound document's
    settings can still be held to, and what a forger rewriting a header must also fake in the records."""
    name = "concurrency" if point.mode == "closed" else "max_concurrency"
    cap = getattr(point, name)
    if cap is None:
        return []
    # A request without an end time counts as never in flight for the upper bound, as never ending for the
    # lower one: neither bound can then be failed by an honest run.
    fewest, most = _peak(records, missing_end=None), _peak(records, missing_end=math.inf)
    if fewest > cap:
        found = f"{fewest} requests in flight at once in the records"
    elif point.mode == "closed" and most < min(cap, len(records)):
        found = f"at most {most} requests in flight at once in the records"
    else:
        return []
    return [Discrepancy(figure=f"{path}.result.point.{name}", stated=cap, recomputed=found, source=src)]


def _peak(records: list[RequestRecord], *, missing_end: float | None) -> int:
    """Most requests in flight at once (a request ending when another is sent does not overlap it)."""
    spans = [(r.sent_s, r.end_s if r.end_s is not None else missing_end) for r in records]
    events = sorted((t, step) for sent, end in spans if end is not None for t, step in ((sent, 1), (end, -1)))
    most = running = 0
    for _, step in events:
        running += step
        most = max(most, running)
    return most


def _judged_alike(stated: Arrivals | None, rules: RuleSet):
    """Arrivals as stated, less the client-bound verdict where the document's rule is not replayed (client-bound/
    send-lag-1ms): its rates and send lags are figures the records determine and are compared; its verdict is
    attested. Otherwise the verdict and its reasons are held to the rule that judged the document; the rule's
    words, where stated, always are."""
    if stated is None or rules.of("client-bound").replayed:
        return stated
    data = stated.model_dump(mode="json", exclude_unset=True)
    for key in ("client_bound", "client_bound_reasons"):
        data.pop(key, None)
    return data


@dataclass(frozen=True)
class _Replayed:
    metrics: LoadMetrics
    arrivals: Arrivals | None
    server_view: object = None
    saturation: object = None
    stop_reason: str | None = None  # attested: as the run reported (a point stopped when saturated)
    aborted: str | None = None
    client: ClientCheck | None = None  # attested: the run's client check as stated
    isolation: Isolation | None = None  # attested: what separated a confirmation step's further run


def attested_client(
    stated: ClientCheck | None,
    records: list[RequestRecord],
    point: LoadPoint,
    figures: tuple[LoadMetrics, Arrivals | None],
    rules: RuleSet,
    at: str,
    src: str,
) -> tuple[ClientCheck | None, list[Discrepancy]]:
    """A run's client check as stated, and where it differs from the one recomputed (client-check/
    recomputed, where every run states one): each worker's loop lag as stated (not in the records, as the
    host's load is not), everything else from the records (`rejudged_client`), so a verdict edited against
    its own lag or against the records is named. A run without one is a discrepancy (every run states one,
    and a dropped one would hide a flag). Before that rule, a many-worker point's check was attested
    whole."""
    if "client-check/recomputed" not in rules:  # attested whole, as stated (the replay states it back)
        return stated, []
    if stated is None:
        missing = "a client check (every run states one under rule client-check/recomputed)"
        return None, [Discrepancy(figure=f"{at}.client", stated=None, recomputed=missing, source=src)]
    metrics, arrivals = figures
    again = rejudged_client(stated, records, point, metrics, arrivals)
    # The check is stated beside a probe's verdict, not judged (capacity.PASS_RULE): an edited one is named
    # here, the replay keeps it as stated. Its rows are held to the records' `worker` fields first.
    rows = client_rows(stated, records, f"{at}.client", src)
    return stated, rows + differences(stated, again, f"{at}.client", src)


def capacity(load: LoadSection, folder: Path, binding: Binding | None, rules: RuleSet) -> list[Discrepancy]:
    """The load section's capacity search and each compared workload's, recomputed from their records by
    the rules that judged the document (capacity/settles-on-repeats: the answer applies its repeats; each
    verdict reads the run's client check as `attested_client` gives it)."""
    out: list[Discrepancy] = []
    if not isinstance(load.capacity, NotMeasured):
        if not load.points:
            # Every probe runs the first load point's shape: without it, no probe can be recomputed.
            return [
                Discrepancy(
                    figure="load.capacity.result",
                    stated="measured",
                    recomputed="no load point: the shape every probe ran is not stated",
                )
            ]
        template = load.points[0].result.point  # the build probes the first point's shape at each value
        out += _capacity(
            _Searched(load.capacity, template, "load.capacity", "load.points[0].result.point"),
            folder,
            binding,
            rules,
        )
    for k, compared in enumerate(load.compared_workloads):
        path = f"load.compared_workloads[{k}]"
        searched = _Searched(compared.capacity, compared.template, f"{path}.capacity", f"{path}.template",
                             compared.workload, f"{path}.workload")  # fmt: skip
        if compared.capacity.result.search is None:  # every compared workload states it
            out.append(Discrepancy(figure=f"{path}.capacity.result.search", stated="none",
                                   recomputed="the search's parameters (a compared workload keeps them)"))  # fmt: skip
            continue
        out += _capacity(searched, folder, binding, rules)
    return out


@dataclass(frozen=True)
class _Searched:
    """A capacity section as `validate` reads it: where it is, the shape its probes took and where that is
    stated, and for a compared workload the profile its records are bound to."""

    section: CapacitySection
    template: LoadPoint
    path: str
    template_path: str
    workload: WorkloadProfile | None = None
    workload_path: str | None = None


def _capacity(
    searched: _Searched,
    folder: Path,
    binding: Binding | None,
    rules: RuleSet,
) -> list[Discrepancy]:
    """Each probed point's metrics from its records. With the search's parameters stated
    the probe's own search is replayed on them: every verdict, the order of probing, the confirmations, the
    bracket, capacity, range and stop reason. Without (the first schema): each verdict through the probe's own judge,
    and the answer through the probe's own `answer`."""
    section, template, path = searched.section, searched.template, searched.path
    cap, base = section.result, f"{path}.result"
    if len(cap.points) != len(section.records):
        n_points, n_records = len(cap.points), len(section.records)
        return [
            Discrepancy(figure=f"{base}.points", stated=n_points, recomputed=f"{n_records} records files")
        ]
    out: list[Discrepancy] = []
    replayed: list[_Replayed] = []
    for i, (stated, rec) in enumerate(zip(cap.points, section.records, strict=True)):
        context = capacity_step_context(
            cap.knob, stated.value, i, confirmation=stated.confirmation, template=step_template(section, template, i),
            slo=cap.slo, workload=searched.workload, repeats=asked_repeats(section, rules),
            **stated_host(section.host_load[i] if i < len(section.host_load) else None),
        )  # fmt: skip
        fields = {
            "repeats": f"{path}.repeats (the runs the build asked for)",
            "host_speed_ms": f"{path}.host_load[{i}].speed.reference_ms",
            "server_share": f"{path}.host_load[{i}].server",
            "knob": f"{base}.knob",
            "value": f"{base}.points[{i}].value",
            "position": f"{path}.records[{i}] (place in the probing order)",
            "confirmation": f"{base}.points[{i}].confirmation",
            "template": searched.template_path,
            "slo": f"{base}.slo",
        }
        if searched.workload_path:
            fields["workload"] = searched.workload_path
        records, problems = read_records(
            folder,
            rec,
            RequestRecord.model_validate,
            f"{path}.records[{i}]",
            Expected(context, fields),
            binding,
        )
        out += [seed_named(d, searched.template_path, f"{path}.seeds[{i}]") for d in problems]
        if records is None:
            return out
        point = knob_point(template, cap.knob, stated.value)
        records, wrong = rejudged(records, point.ignore_eos, rules, None, f"{path}.records[{i}]", rec.path)
        out += wrong
        # A capacity point keeps no epoch window (0.0 origin: only the relative window is in its metrics).
        metrics, _, arrivals = figures(point, cap.slo, records, 0.0, percentiles_of(stated.metrics), rules)
        metrics = worded_as(metrics, stated.metrics, rules)
        scrapes = section.server_records[i] if i < len(section.server_records) else None
        seen = server_view.recompute(
            stated.server_view, stated.saturation, scrapes, context, records, metrics, folder,
            (f"{path}.server_records[{i}]", f"{base}.points[{i}]"), binding,
        )  # fmt: skip
        out += seen.problems
        stop = ("saturated", stated.stopped_early) if stated.stopped_early else (None, None)
        client, missing = attested_client(
            stated.client, records, point, (metrics, arrivals), rules, f"{base}.points[{i}]", rec.path
        )
        out += missing
        replayed.append(
            _Replayed(metrics, arrivals, seen.server_view, seen.saturation, *stop, client, stated.isolation)
        )
    if cap.search is not None:
        # The repeats' own verdicts are re-derived from their records by factsheet/rederive/repeats.py.
        settle = "capacity/settles-on-repeats" in rules
        repeats = [r.point for r in section.repeats.runs] if settle and section.repeats else []
        return out + _replay(cap, replayed, base, ", ".join(r.path for r in section.records), repeats)
    return out + _judged_alone(cap, replayed, base, [r.path for r in section.records])


def _judged_alone(
    cap: CapacityResult, replayed: list[_Replayed], base: str, paths: list[str]
) -> list[Discrepancy]:
    """A search without its parameters (the first schema): each verdict through the probe's own judge, and the answer
    through the probe's own `answer`."""
    out: list[Discrepancy] = []
    judged = [
        judge_point(p.value, r, cap.min_attainment, confirmation=p.confirmation)
        for p, r in zip(cap.points, replayed, strict=True)
    ]
    for i, (stated, again) in enumerate(zip(cap.points, judged, strict=True)):
        out += differences(stated, again, f"{base}.points[{i}]", paths[i])
    highest, lowest_fail = answer(judged)
    at = answer_point(judged, highest)
    sources = "the probed points' verdicts"
    out += differences(cap.capacity, highest, f"{base}.capacity", sources)
    out += differences(list(cap.bracket), [highest, lowest_fail], f"{base}.bracket", sources)
    out += differences(
        cap.insufficient_samples,
        bool(at and at.sufficient_samples is False),
        f"{base}.insufficient_samples",
        sources,
    )
    out += differences(list(cap.range), list(capacity_range(judged, cap.slo)), f"{base}.range", sources)
    return out


def step_template(section: CapacitySection, template: LoadPoint, i: int) -> LoadPoint:
    """The template capacity step `i` ran, and its records are bound to: with its own seed."""
    return template.model_copy(update={"seed": section.seeds[i]}) if section.seeds else template


def asked_repeats(section: CapacitySection, rules: RuleSet) -> int | None:
    """The runs of its headline run a search's build asked for, which each of its steps' records is bound to
    under records/binds-repeats: the repeats' k, 1 where it states none. So repeats left out of the document
    (a failed one hidden, page 1 recomputed) mismatch every step of the search."""
    if "records/binds-repeats" not in rules:
        return None
    return section.repeats.k if section.repeats is not None else 1


def seed_named(d: Discrepancy, template_path: str, seed_path: str) -> Discrepancy:
    """A step bound to another seed than its template's: named where its seed is stated."""
    if d.figure == f"{template_path}.seed":
        return d.model_copy(update={"figure": seed_path})
    return d


class _OffPath(Exception):
    def __init__(self, index: int, value: float, confirmation: bool):
        self.index, self.value, self.confirmation = index, value, confirmation


def _replay(
    cap: CapacityResult, replayed: list[_Replayed], base: str, src: str, repeats: list[CapacityPoint]
) -> list[Discrepancy]:
    """find_capacity itself, fed the recorded runs in order: it must ask for the values (and the kind of
    run: search probe, confirmation, or a confirmation step's further run) that were recorded; then the
    repeats applied, as the build did (rule capped), or fed to the search as its step's further runs (rule
    bracketing: their own figures are re-derived by factsheet/rederive/repeats.py)."""
    asked: list[float] = []
    n = len(cap.points)

    def runner(kind: str):
        def run(value: float) -> _Replayed | CapacityPoint:
            i = len(asked)
            asked.append(float(value))
            if kind == "repeat" and i >= n and i - n < len(repeats) and repeats[i - n].value == float(value):
                return repeats[i - n]
            p = cap.points[i] if i < n else None
            if p is None or p.value != float(value) or p.confirmation != (kind != "probe"):
                raise _OffPath(i, float(value), kind != "probe")
            if (p.isolation is not None) != (kind == "repeat"):
                raise _OffPath(i, float(value), kind != "probe")
            return replayed[i]

        return run

    bracketing = cap.search.rule == "bracketing"
    confirmed = any(p.confirmation for p in cap.points)
    try:
        again, _ = search_capacity(
            runner("probe"),
            cap.slo,
            cap.search,
            knob=cap.knob,
            min_attainment=cap.min_attainment,
            # Whether the build asked for confirmations shows only through the runs it made.
            confirm=runner("confirmation") if confirmed else None,
            repeat=runner("repeat") if bracketing and cap.search.confirm_runs > 1 else None,
        )
    except _OffPath as off:
        stated = cap.points[off.index].value if off.index < len(cap.points) else None
        kind = "a confirmation run" if off.confirmation else "a search probe"
        return [
            Discrepancy(
                figure=f"{base}.points[{off.index}].value",
                stated=stated,
                recomputed=f"the search runs {kind} at {off.value:g} here",
                source=src,
            )
        ]
    # The rule's and the range method's words are attested (coverage.py): a document states the words of the
    # tool that built it, and a later tool's wording of PASS_RULE must not fail an older build.
    words = {"pass_rule": cap.pass_rule, "range_method": cap.range_method}
    settled = again if bracketing else settle_repeats(again, repeats)
    return differences(cap, settled.model_copy(update=words), base, src)
