"""Every judging rule a factsheet of schema 1 was judged by: one entry per rule, with the version it began and
the version that replaced it. A rule today's probes no longer apply keeps its wording and its function here."""

from __future__ import annotations

from factsheet.document.repeats import SEED_RULE
from factsheet.document.rules.rule import Rule
from probes.load.capacity import ANSWER_RULE, PASS_RULE, REPEATS_RULE
from probes.load.metrics import LoadMetrics
from probes.load.records import OUTCOME_RULE
from probes.load.runner import (
    CLIENT_BOUND_RULE,
    LATENCY_RESOLUTION,
    MIN_ACHIEVED_FRACTION,
    Arrivals,
    sent_s_reasons,
)
from probes.load.workers.check import LOOP_RULE

# The open loop's client-bound rule before schema 1.8.0 read when each request began to leave (sent_s) alone;
# its send lag was worded so too (the same figure).
_BY_SENT_S = (
    f"client-bound when sends achieved < {MIN_ACHIEVED_FRACTION * 100:g} % of the scheduled rate, or the "
    f"client's own delay (send lag) at p50 or p99 > {LATENCY_RESOLUTION * 100:g} % of the smallest TTFT or "
    f"E2EL figure at that percentile (the resolution latency figures are stated to): either could move "
    "a reported figure by more than that"
)
_SEND_LAG_BY_SENT_S = "actual send − scheduled send − client queue time"
# Schema 1.0.0's rule had an absolute limit and was stated in no document: its verdicts are attested.
_BY_SEND_LAG_1MS = (
    f"client-bound when sends achieved < {MIN_ACHIEVED_FRACTION * 100:g} % of the scheduled rate, or the send "
    "lag at p50 or p99 > 1 ms (stated in no document: its verdicts are attested, its rates and send lags "
    "re-derived)"
)


def _worded_by_send_lag_1ms(arrivals: Arrivals, metrics: LoadMetrics | None) -> Arrivals:
    """The arrivals in schema 1.0.0's words (its verdict is attested: `Rule.replayed`)."""
    lag = arrivals.send_lag_ms.model_copy(update={"definition": _SEND_LAG_BY_SENT_S})
    return arrivals.model_copy(update={"send_lag_ms": lag, "client_bound_rule": _BY_SEND_LAG_1MS})


def _judged_by_sent_s(arrivals: Arrivals, metrics: LoadMetrics | None) -> Arrivals:
    """The verdict by sent_s alone (the last byte's figures still stated, as such a document may state them)."""
    lag = arrivals.send_lag_ms
    reasons = sent_s_reasons(arrivals.achieved_rate, arrivals.achieved_fraction, lag, metrics)
    return arrivals.model_copy(
        update={
            "client_bound": bool(reasons),
            "client_bound_reasons": reasons,
            "client_bound_rule": _BY_SENT_S,
            "send_lag_ms": lag.model_copy(update={"definition": _SEND_LAG_BY_SENT_S}),
        }
    )


# Rebuild intervals (factsheet/document/headline/rebuild.py), each guard a rule of its own version.
CONFIDENCE = 0.95
REBUILD_METHOD = (
    f"normal-theory prediction interval for the next build's value: mean ± t(k − 1, "
    f"{1 - (1 - CONFIDENCE) / 2:g}) · s · √(1 + 1/k), over the k repeats' values (s their sample standard "
    f"deviation); {CONFIDENCE:.0%} if the repeats are independent draws of one normal distribution"
)
# A figure that cannot be negative (a latency, a rate, a share) gets no negative lower end (schema >= 1.8.0:
# before, the normal interval of a widely spread figure could state one, e.g. −302 ms for a p99 E2EL).
FLOOR_METHOD = f"{REBUILD_METHOD}; its lower end no less than 0, as the figure cannot be negative"
WIDEN_METHOD = (
    f"{FLOOR_METHOD}; its half-width no less than the repeats' mean within-run {CONFIDENCE:.0%} half-width × "
    "√(1 + 1/k), as a next build carries its own run's sampling noise however closely k runs agreed"
)

RULES: tuple[Rule, ...] = (
    Rule("client-bound/send-lag-1ms", "1.0.0", _BY_SEND_LAG_1MS, ended="1.1.0", arrivals=_worded_by_send_lag_1ms,
         replayed=False),
    Rule("client-bound/sent-s", "1.1.0", _BY_SENT_S, ended="1.8.0", arrivals=_judged_by_sent_s),
    Rule("client-bound/last-byte", "1.8.0", CLIENT_BOUND_RULE),
    Rule(
        "client-check/attested", "1.6.0",
        "a load point sent by several worker processes states its client check (result.client), attested "
        "whole: the loop lag is not in the records",
        ended="1.9.0", replayed=False,
    ),
    Rule("client-check/recomputed", "1.9.0", f"every run states its client check, recomputed from its records "
         f"but for each worker's loop lag (attested): {LOOP_RULE}"),
    Rule("keeps/energy-samples-and-search", "1.1.0", "the energy counters' samples (energy.records) and the "
         "capacity search's parameters (load.capacity.result.search) are kept: a measured figure without "
         "them is missing its evidence"),
    Rule("records/bound", "1.2.0", "every raw-records file starts with a header naming the digest of the "
         "context the factsheet states for it"),
    Rule("keeps/predictor-records", "1.3.0", "predictor.records: the tuning campaign's measurements and their "
         "request records are kept"),
    Rule("keeps/deployment", "1.7.0", "the deployment's facts are kept: chat template, generation defaults, "
         "system prompts' digests"),
    Rule("seeds/block-position", "1.7.0", SEED_RULE),
    Rule("rebuild/prediction", "1.7.0", REBUILD_METHOD),
    Rule("rebuild/floor", "1.8.0", FLOOR_METHOD),
    Rule("rebuild/widen", "1.9.0", f"{WIDEN_METHOD}; a share's upper end no more than 1"),
    Rule("capacity/settles-on-repeats", "1.8.0", REPEATS_RULE),
    Rule("capacity/answer-long-runs", "1.12.0", ANSWER_RULE),
    Rule("capacity/pass", "1.0.0", f"{PASS_RULE} (older builds state older words of it: attested)"),
    Rule("replies/outcome", "1.10.0", f"every load record states its outcome, re-derived from the record, and "
         f"a truncated reply counts in no latency, throughput, goodput or capacity pass: {OUTCOME_RULE}"),
    Rule("records/binds-repeats", "1.10.0", "each capacity step's and repeat's records context binds the "
         "repeats its build asked for (1: none)"),
    Rule("records/writer", "1.10.0", "every records header names the schema of the tool that wrote it; a "
         "document whose version is lower than its records' writer's was relabelled"),
    Rule("gate/headline-point", "1.0.0", "a policy's load.points[headline].result.metrics… is the headline "
         "load point's", ended="1.10.0"),
    Rule("rules/stated", "1.11.0", "the document states the ids of the rules it was judged by (`rules`), "
         "each one a rule of its version"),
    Rule("gate/page-one", "1.10.0", "a policy's load.points[headline].result.metrics… is the run page 1 "
         "states (the capacity's last confirmation run when there is one)"),
)  # fmt: skip
