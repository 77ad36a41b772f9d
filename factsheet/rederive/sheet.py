"""`rederive(sheet, folder)`: every figure of a factsheet that its raw records determine, recomputed, with
the records bound to the context the factsheet states for them."""

from __future__ import annotations

from pathlib import Path

from factsheet.document.rules import rule_set
from factsheet.document.schema import Factsheet
from factsheet.rederive.accuracy import accuracy
from factsheet.rederive.compare import Discrepancy
from factsheet.rederive.deployment import deployment_differences
from factsheet.rederive.energy import energy
from factsheet.rederive.headline import headline_differences
from factsheet.rederive.load import capacity, load_points
from factsheet.rederive.presence import missing_records, named_twice, uncited_records
from factsheet.rederive.records import Binding
from factsheet.rederive.repeats import capacity_repeats, seeds
from factsheet.rederive.rules import stated_rules
from probes.core.measurement import Model, NotMeasured

REDERIVED = (
    "load points: every metric (counts, throughputs, TTFT/TPOT/ITL/E2EL distributions and percentiles, their "
    "95 % CIs, p99 sample sufficiency, goodput and its CI, SLO attainment, the p99 check), the steady window "
    "and open-loop arrival fidelity (by sent_s; by rule client-bound/last-byte also by the last byte, written_s: achieved "
    "rate and write lag), from each point's per-request records; each client-bound verdict by the rule it "
    "was judged by",
    "capacity: each probed run's metrics from its records, then the probe's search replayed on them (rule "
    "keeps/energy-samples-and-search): every verdict, the order of probing, confirmations, bracket, capacity, range, stop reason",
    "capacity repeats: each repeat's metrics and verdict from its records, bound to its "
    "place after the search, its value and seed; which run was repeated and how many times; every run's seed "
    "against the seed rule",
    "accuracy: pass@k (base and plus) from the per-sample verdicts, the per-sample records the JSON repeats, "
    "generation failures",
    "energy: each component's window energy and the idle power from the counters' samples (rule "
    "keeps/energy-samples-and-search); window, request and token counts against the load point they cover; every derived figure "
    "(average power, J/request, J/token, Wh/1000 requests, tokens/J, net of idle, totals, the TDP estimate); "
    "carbon from that energy, intensity and PUE",
    "predictor: each campaign measurement's latency figures and metrics from its request "
    "records; the model selection per figure, learning curves, importance, learnability, Pareto front, the "
    "recommendation's predictions and the summary re-run (seeded) on the table the measurements make",
    "headline: every page-1 figure (value, interval, n, verdict, source run, rule) "
    "recomputed from the rest of the sheet, whose figures are re-derived above",
    "chat template: a template text the factsheet keeps hashes to its stated sha256 and size",
    "binding: each records file's header names the digest of the context the factsheet "
    "states for it (a load point's label, settings, SLO and start; a capacity step's knob, value, place, "
    "kind, template, SLO and the repeats its build asked for; the accuracy run's dataset, tasks and sampling; the energy window and the "
    "load point it covers); no records file is named twice, and every file in the folder's records/ is "
    "cited by a figure (one left out hides a run); the document's schema version no lower than its records' "
    "writer's (each header names it, each load record states its outcome)",
)


class Rederivation(Model):
    """What `rederive` found, and what it could not bind (records of a document before rule records/bound)."""

    discrepancies: list[Discrepancy]
    unbound: list[str] = []  # records paths read without a context header (settings attested only)


def rederivation(sheet: Factsheet, folder: Path) -> Rederivation:
    """Every re-derivable figure recomputed and every records file's binding checked. Read the records'
    digests first (`factsheet.rederive.validate.check_records`)."""
    folder = Path(folder)
    rules = rule_set(sheet.schema_version)  # the rules that judged it (factsheet/document/rules)
    binding = Binding(required="records/bound" in rules)
    out: list[Discrepancy] = stated_rules(sheet, rules) + named_twice(sheet)
    if not isinstance(sheet.load, NotMeasured):
        out += load_points(sheet.load, folder, binding, rules)
        out += capacity(sheet.load, folder, binding, rules)
        out += capacity_repeats(sheet.load, folder, binding, rules)
        out += seeds(sheet.load, rules)
    if not isinstance(sheet.accuracy, NotMeasured):
        out += accuracy(sheet.accuracy, folder, binding)
    if not isinstance(sheet.energy, NotMeasured):
        out += energy(sheet.energy, sheet.load, sheet.system.host.cpu_model, folder, binding)
    if not isinstance(sheet.predictor, NotMeasured):
        # deferred: a campaign's re-derivation loads pandas, scikit-learn and the feature model (~1 s of CPU)
        from factsheet.rederive.predictor import predictor

        out += predictor(sheet.predictor, rules, folder)
    out += headline_differences(sheet)  # page 1's figures from the rest of the sheet
    out += deployment_differences(sheet)  # a kept chat template against its digest
    out += binding.missing()
    out += uncited_records(sheet, folder)  # after the figures: a figure a forger edited is named first
    out += missing_records(sheet, rules, bound=bool(binding.bound))
    out = binding.relabelled(sheet.schema_version) + out  # first: a relabel is why the rest differs
    unbound = [] if binding.required or binding.bound else [path for _, path in binding.unbound]
    return Rederivation(discrepancies=out, unbound=unbound)


def rederive(sheet: Factsheet, folder: Path) -> list[Discrepancy]:
    """Discrepancies between what `sheet` states and what the raw records in `folder` give, records bound to
    another context, measured figures with their records missing; empty when everything matches (to float
    precision). Read the records' digests first."""
    return rederivation(sheet, folder).discrepancies
