"""The seed of every run (load.seed_rule) and the repeats of a capacity's headline run,
recomputed: each repeat's figures and verdict from its records (bound to its place after the search, its kind
and seed), what was repeated, and every seed against the rule."""

from __future__ import annotations

from pathlib import Path

from factsheet.binding import capacity_step_context, stated_host
from factsheet.document.repeats import run_seed, search_block
from factsheet.document.rules import RuleSet
from factsheet.document.schema import CapacitySection, LoadSection
from factsheet.rederive import server_view
from factsheet.rederive.compare import Discrepancy, differences
from factsheet.rederive.load import (
    asked_repeats,
    attested_client,
    figures,
    percentiles_of,
    rejudged,
    seed_named,
    worded_as,
)
from factsheet.rederive.records import Binding, Expected, read_records
from probes.core.measurement import NotMeasured
from probes.load.capacity import judge_point, knob_point
from probes.load.point import LoadPoint
from probes.load.records import RequestRecord

RULE_SOURCE = "load.seed_rule: load.seed + 1000 × block + position"


def seeds(load: LoadSection, rules: RuleSet) -> list[Discrepancy]:
    """Every run's seed by the seed rule (seeds/block-position) where it judged the document; its words
    (load.seed_rule) are attested."""
    if "seeds/block-position" not in rules or not load.points:
        return []
    out: list[Discrepancy] = []
    base = load.points[0].result.point.seed
    for i, p in enumerate(load.points):
        out += differences(p.result.point.seed, run_seed(base, 0, i), f"load.points[{i}].result.point.seed",
                           RULE_SOURCE)  # fmt: skip
    searches = [(load.capacity, "load.capacity", None)]
    searches += [
        (c.capacity, f"load.compared_workloads[{k}].capacity", k)
        for k, c in enumerate(load.compared_workloads)
    ]
    for cap, path, k in searches:
        if isinstance(cap, NotMeasured):
            continue
        block = search_block(k)
        expected = [run_seed(base, block, i) for i in range(len(cap.result.points))]
        out += differences(cap.seeds, expected, f"{path}.seeds", RULE_SOURCE)
        after = len(cap.result.points)
        for j, r in enumerate(cap.repeats.runs if cap.repeats is not None else []):
            out += differences(
                r.seed, run_seed(base, block, after + j), f"{path}.repeats.runs[{j}].seed", RULE_SOURCE
            )
    return out


def capacity_repeats(
    load: LoadSection,
    folder: Path,
    binding: Binding | None,
    rules: RuleSet,
) -> list[Discrepancy]:
    """The repeats of the load section's capacity search and of each compared workload's, by the rules that
    judged the document (rederive/load.py: `figures`, `attested_client`)."""
    out: list[Discrepancy] = []
    if not isinstance(load.capacity, NotMeasured) and load.points:
        template = load.points[0].result.point  # every probe (and repeat) takes the first point's shape
        out += _repeats(load.capacity, template, "load.capacity", "load.points[0].result.point", None, folder,
                        binding, rules)  # fmt: skip
    for k, c in enumerate(load.compared_workloads):
        path = f"load.compared_workloads[{k}]"
        out += _repeats(c.capacity, c.template, f"{path}.capacity", f"{path}.template", c.workload, folder,
                        binding, rules)  # fmt: skip
    return out


def _repeats(section: CapacitySection, template: LoadPoint, path: str, template_path: str, workload, folder: Path,
            binding: Binding | None, rules: RuleSet) -> list[Discrepancy]:  # fmt: skip
    """The repeats of one search: the run repeated (its last confirmation), their number, and each one's
    figures and verdict from its records."""
    rep, cap = section.repeats, section.result
    if rep is None:
        return []
    last = next((i for i in reversed(range(len(cap.points))) if cap.points[i].confirmation), None)
    if cap.search is not None and cap.search.rule == "bracketing" and not cap.confirmed:
        last = None  # the step's runs are the repeats only when the step held (STEP_REPEATS_RULE)
    out = differences(rep.of, last, f"{path}.repeats.of", "the search's last confirmation run")
    out += differences(len(rep.runs), rep.k - 1 if last is not None else 0, f"{path}.repeats.runs",
                       f"{path}.repeats.k: the runs beside the one repeated")  # fmt: skip
    if rep.of is None or not 0 <= rep.of < len(cap.points):
        return out
    value = cap.points[rep.of].value
    for j, run in enumerate(rep.runs):
        at, src = f"{path}.repeats.runs[{j}]", run.records.path
        out += differences(
            run.point.value, value, f"{at}.point.value", f"{path}.result.points[{rep.of}].value"
        )
        context = capacity_step_context(
            cap.knob, run.point.value, len(cap.points) + j, confirmation=True,
            template=template.model_copy(update={"seed": run.seed}), slo=cap.slo, workload=workload,
            repeats=asked_repeats(section, rules), **stated_host(run.host_load),
        )  # fmt: skip
        fields = {"knob": f"{path}.result.knob", "value": f"{at}.point.value", "slo": f"{path}.result.slo",
                  "host_speed_ms": f"{at}.host_load.speed.reference_ms", "server_share": f"{at}.host_load.server",
                  "position": f"{at}.records (place after the search)", "confirmation": f"{at}.point.confirmation",
                  "template": template_path, "workload": f"{path} (its workload)",
                  "repeats": f"{path}.repeats.k"}  # fmt: skip
        records, problems = read_records(folder, run.records, RequestRecord.model_validate, f"{at}.records",
                                         Expected(context, fields), binding)  # fmt: skip
        out += [seed_named(d, template_path, f"{at}.seed") for d in problems]
        if records is None:
            continue
        point = knob_point(template, cap.knob, run.point.value)
        records, wrong = rejudged(records, point.ignore_eos, rules, None, f"{at}.records", src)
        out += wrong
        metrics, _, arrivals = figures(point, cap.slo, records, 0.0, percentiles_of(run.point.metrics), rules)
        metrics = worded_as(metrics, run.point.metrics, rules)
        seen = server_view.recompute(
            run.point.server_view, run.point.saturation, run.server_records, context, records, metrics, folder,
            (f"{at}.server_records", f"{at}.point"), binding,
        )  # fmt: skip
        out += seen.problems
        client, missing = attested_client(
            run.point.client, records, point, (metrics, arrivals), rules, f"{at}.point", src
        )
        out += missing
        replayed = _Replayed(
            metrics, arrivals, seen.server_view, seen.saturation, client, run.point.isolation
        )
        again = judge_point(run.point.value, replayed, cap.min_attainment, confirmation=True)
        stated = run.point.model_copy(update={"stopped_early": None})  # attested: as the run reported
        out += differences(stated, again, f"{at}.point", src)
    return out


class _Replayed:
    """A repeat's figures as recomputed, in the shape the pass rule judges."""

    def __init__(self, metrics, arrivals, server_view, saturation, client=None, isolation=None):
        self.metrics, self.arrivals = metrics, arrivals
        self.server_view, self.saturation, self.client = server_view, saturation, client
        self.isolation = isolation  # attested: the point states it (bracketing) beside RepeatRun.isolation
