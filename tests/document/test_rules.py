"""The judging-rules registry (factsheet/document/rules): every schema version has its rule set, each rule one
entry with a stable id, an ended rule replaced by one of its topic, and an older rule's function replaying what
today's probes no longer apply. Known truth: records whose sends keep to the schedule and whose last bytes do
not, judged by each rule."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from factsheet.document.rules import RULES, UnknownRule, rule, rule_set
from factsheet.document.schema import SCHEMA_VERSION
from factsheet.document.versions import parse
from probes.load.metrics import compute_metrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import RequestRecord
from probes.load.runner import CLIENT_BOUND_RULE, SEND_LAG, point_figures

CURRENT = parse(SCHEMA_VERSION)
VERSIONS = [f"{CURRENT.major}.{minor}.0" for minor in range(CURRENT.minor + 1)]
ONE_AT_A_TIME = ("client-bound", "gate")  # topics whose rules replace each other: one judges each version


def test_every_id_is_unique_and_names_its_topic():
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    assert all(r.id.count("/") == 1 and r.topic and r.wording for r in RULES)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_version_has_a_rule_set(version):
    rules = rule_set(version)
    assert rules.ids and all(rule(i).judged(parse(version)) for i in rules.ids)
    for topic in ONE_AT_A_TIME:
        assert sum(r.topic == topic for r in rules.rules) == 1, (version, topic)
        assert rules.of(topic).topic == topic


def test_an_ended_rule_is_replaced_by_one_of_its_topic_and_none_begins_after_this_tool():
    for r in RULES:
        assert parse(r.began) <= CURRENT
        if r.ended is not None:
            assert parse(r.began) < parse(r.ended) <= CURRENT
            assert any(o.topic == r.topic and o.began == r.ended for o in RULES), r.id


def test_the_current_rules_are_the_probes_own():
    """Today's builds are judged by today's probes: no rule of the current set replays by a function of its own."""
    now = rule_set(SCHEMA_VERSION)
    assert now.of("client-bound").wording == CLIENT_BOUND_RULE
    assert all(r.arrivals is None and r.replayed for r in now.rules if r.ended is None)


def test_an_unknown_id_is_refused_naming_it():
    with pytest.raises(UnknownRule, match="'client-bound/forged'"):
        rule("client-bound/forged")
    with pytest.raises(UnknownRule, match="'rebuild/flor'"):
        assert "rebuild/flor" in rule_set(SCHEMA_VERSION)  # a misspelt id never reads as "not judged"


def test_each_version_takes_the_rules_it_was_judged_by():
    assert rule_set("1.7.0").of("client-bound").id == "client-bound/sent-s"
    assert rule_set("1.8.0").of("client-bound").id == "client-bound/last-byte"
    assert "records/bound" not in rule_set("1.1.0") and "records/bound" in rule_set("1.2.0")
    assert "gate/page-one" in rule_set("1.10.0") and "gate/headline-point" not in rule_set("1.10.0")


def _late_last_bytes(n=100, rate=100.0, ttft_s=0.020, write_s=0.002):
    """Sent on schedule; each last byte 2 ms after its send, beyond 5 % of a 20 ms TTFT."""
    out = []
    for i in range(n):
        sent = i / rate + 0.0002
        end = sent + write_s + ttft_s
        out.append(RequestRecord(index=i, scheduled_s=i / rate, sent_s=sent, written_s=sent + write_s,
                                 first_chunk_s=end, chunk_s=[end], end_s=end, output_tokens=1))  # fmt: skip
    return out


def test_the_rule_before_the_last_byte_replays_its_verdict_from_todays_arrivals():
    point = LoadPoint(
        mode="open", rate=100.0, burstiness=math.inf, num_requests=100, input_len=16, output_len=1
    )
    records = _late_last_bytes()
    metrics, _, now = point_figures(point, SLO(), records, 0.0)
    assert now.client_bound and all("write-lag" in x for x in now.client_bound_reasons)
    sent_s = rule("client-bound/sent-s")
    then = sent_s.arrivals(now, metrics)
    assert not then.client_bound and then.client_bound_reasons == []
    assert then.client_bound_rule == sent_s.wording and now.send_lag_ms.definition == SEND_LAG
    assert then.send_lag_ms.definition == "actual send − scheduled send − client queue time"
    assert then.write_lag_ms == now.write_lag_ms  # the last byte's figures still stated
    assert compute_metrics(records, SLO()) == metrics


def test_no_schema_version_is_named_outside_the_document():
    """Versions live in factsheet/document (versions.py, the rules registry): the probes, the tuner and the
    rest of the factsheet name a rule or a version's constant, never a version, so dropping one is local."""
    version = re.compile(r'Version\("1\.|\b1\.(?:[0-9]|1[0-9])\.0\b')
    repo = Path(__file__).parents[2]
    document = repo / "factsheet" / "document"
    found = [
        f"{path.relative_to(repo)}:{n}"
        for root in ("factsheet", "probes", "tuner")
        for path in sorted((repo / root).rglob("*.py"))
        if not path.is_relative_to(document)
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if version.search(line)
    ]
    assert found == []
