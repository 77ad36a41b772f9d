"""The standard predicates a factsheet's signature also speaks, one signed DSSE envelope a line in
`<stem>.results.intoto.jsonl` (docs/signing.md, "The results bundle"):

- the release gate as an in-toto Test Result v0.1 (https://in-toto.io/attestation/test-result/v0.1):
  `result` PASSED/WARNED/FAILED, `configuration` the factsheet, its raw records and the policies as applied
  (resource descriptors with digests), passed/warned/failed tests one a rule, each naming its figure,
  threshold and sample size (the predicate's tests are strings, so policy engines read them unchanged);
- each measured headline figure of page 1 (`factsheet.document.headline`) in an eval-result-shaped predicate (after in-toto/attestation #565 and
  PR #575, not yet a released in-toto type, hence our own predicate type): metric, value, unit, comparator,
  threshold, passed, verdict, sample size, interval, the harness (this tool, the build spec's digest), the
  raw records the figure derives from as the dataset, and the JSON pointer of its run.

Every statement's subject is the factsheet's JSON: what the figures and the verdict are about.
"""

from __future__ import annotations

import re
from pathlib import Path

from factsheet.attest.statement import STATEMENT_TYPE, ComplianceVerdict, file_sha256
from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.headline_model import Figure
from factsheet.document.records_file import RecordsFile
from factsheet.document.schema import Factsheet
from factsheet.document.stamp import tool_version
from probes.core.digests import bare

TEST_RESULT_TYPE = "https://in-toto.io/attestation/test-result/v0.1"
EVAL_RESULT_TYPE = "https://llm-factsheet.dev/attestation/eval-result/v0.1"
PREDICATE_TYPES = (TEST_RESULT_TYPE, EVAL_RESULT_TYPE)
JSON_MEDIA_TYPE = "application/json"
RECORDS_MEDIA_TYPE = "application/jsonl"


def _descriptor(name: str, sha256: str, media_type: str | None = None) -> dict:
    d: dict = {"name": name, "digest": {"sha256": bare(sha256)}}
    if media_type:
        d["mediaType"] = media_type
    return d


def _records(rec: RecordsFile) -> dict:
    return _descriptor(rec.path, rec.sha256, RECORDS_MEDIA_TYPE)


def _statement(subject: dict, predicate_type: str, predicate: dict) -> dict:
    return {
        "_type": STATEMENT_TYPE,
        "subject": [subject],
        "predicateType": predicate_type,
        "predicate": predicate,
    }


def _fmt(value: object, unit: object) -> str:
    if value is None:
        return "not measured"
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{text} {unit}" if unit else text


def rule_test(result: dict) -> str:
    """One rule of a compliance report as a test: `policy/rule: figure F, threshold OP T, n N` (what decided
    it, read from the report; a figure the report lacks is said to be absent, never filled in)."""
    name = f"{result.get('policy')}/{result.get('rule')}"
    figures = [f for f in result.get("figures") or [] if isinstance(f, dict) and f.get("role") == "figure"]
    parts = []
    if figures:
        f = figures[0]
        parts.append(f"figure {_fmt(f.get('value'), f.get('unit'))}")
        if f.get("n") is not None:
            parts.append(f"n {f['n']}")
    else:
        parts.append("no figure")
    if result.get("op") is not None:
        thr = result.get("threshold")
        parts.insert(
            1,
            f"threshold {result['op']} {_fmt(thr, result.get('unit'))}"
            if thr is not None
            else f"{result['op']}",
        )
    return f"{name}: {', '.join(parts)}"


def test_result_statement(
    sheet: Factsheet,
    folder: Path,
    json_name: str,
    verdict: ComplianceVerdict,
    report: dict | None,
) -> dict:
    """The gate's verdict as a Test Result statement. With the full report each test names its figure,
    threshold and n; with a verdict alone, the rule names only."""
    subject = _descriptor(json_name, file_sha256(folder, json_name), JSON_MEDIA_TYPE)
    config = [subject, *(_records(rec) for _, rec in sheet.records_files())]
    tests: dict[str, list[str]] = {"passedTests": [], "warnedTests": [], "failedTests": []}
    if report is not None:
        for p in report.get("policies") or []:
            if isinstance(p, dict) and p.get("sha256"):
                config.append(
                    _descriptor(f"policy {p.get('id')} {p.get('version', '')}".strip(), p["sha256"])
                )
        by_name = {f"{r.get('policy')}/{r.get('rule')}": r for r in report.get("results") or []}
    else:
        by_name = {}
    for key, names in (
        ("passedTests", verdict.passed_tests),
        ("warnedTests", verdict.warned_tests),
        ("failedTests", verdict.failed_tests),
    ):
        tests[key] = [rule_test(by_name[n]) if n in by_name else n for n in names]
    predicate = {"result": verdict.result, "configuration": config, **tests}
    return _statement(subject, TEST_RESULT_TYPE, predicate)


_RUN_RECORDS = (
    # a capacity probe's run -> its records, in probing order: <capacity>/result/points/i -> <capacity>/records/i
    (re.compile(r"^(?P<base>.*)/result/points/(?P<i>\d+)(/.*)?$"), r"\g<base>/records/\g<i>"),
    (re.compile(r"^(?P<base>/load/points/\d+)/result(/.*)?$"), r"\g<base>/records"),
    (re.compile(r"^(?P<base>/load(/compared_workloads/\d+)?/capacity)/result$"), r"\g<base>/records"),
    (re.compile(r"^/accuracy(/.*)?$"), "/accuracy/records"),
    (re.compile(r"^/energy(/.*)?$"), "/energy/records"),
)


def _resolve(doc: object, pointer: str) -> object:
    """RFC 6901 pointer into the factsheet's JSON; None where it leads nowhere."""
    node = doc
    for raw in pointer.strip("/").split("/") if pointer.strip("/") else []:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return None
    return node


def _dataset(doc: dict, source: str) -> list[dict]:
    """The raw records a figure derives from (the records file of the run its source names), by digest."""
    for pattern, repl in _RUN_RECORDS:
        if pattern.match(source):
            found = _resolve(doc, pattern.sub(repl, source))
            files = found if isinstance(found, list) else [found]
            return [
                _descriptor(f["path"], f["sha256"], RECORDS_MEDIA_TYPE)
                for f in files
                if isinstance(f, dict) and isinstance(f.get("path"), str) and isinstance(f.get("sha256"), str)
            ]
    return []


def _judged(fig: Figure) -> dict:
    """Comparator, threshold and passed where page 1 judges the figure against a bar (a p99 against its SLO
    threshold: passed only when the samples decide it, MLPerf early stopping); null elsewhere."""
    if fig.threshold_ms is None:
        return {"comparator": None, "threshold": None, "passed": None}
    decided = {"sufficient": True, "conclusive_fail": False}.get(fig.verdict)
    return {"comparator": "<=", "threshold": fig.threshold_ms, "passed": decided}


def eval_result_statements(sheet: Factsheet, folder: Path, json_name: str) -> list[dict]:
    """Each measured headline figure (`factsheet.document.headline`, page 1's data) as an eval-result statement; a
    figure not measured gets none (its reason is in the factsheet: a predicate never carries a figure that
    was not measured)."""
    subject = _descriptor(json_name, file_sha256(folder, json_name), JSON_MEDIA_TYPE)
    prov = sheet.provenance
    harness = {
        "name": prov.tool,
        "version": prov.tool_version,
        # the harness as configured: the build spec, by its digest (the signing tool is in signedBy)
        "digest": {"sha256": bare(prov.spec_sha256)},
        "uri": prov.spec_file,
    }
    doc = sheet.model_dump(mode="json")
    out = []
    for fig in stated_or_computed(sheet).figures:
        if fig.value is None:
            continue
        predicate = {
            "metric": fig.id,
            "label": fig.label,
            "value": fig.value,
            "unit": fig.unit,
            "lowerBound": fig.lower_bound,
            **_judged(fig),
            "verdict": fig.verdict,
            "sampleSize": fig.n,
            "interval": None if fig.interval is None else fig.interval.model_dump(mode="json"),
            "harness": harness,
            "dataset": _dataset(doc, fig.source),
            "source": {"uri": json_name, "pointer": fig.source, "rule": fig.rule},
            "assuranceLevel": "self_attested",
            "signedBy": {"tool": "llm-factsheet", "version": tool_version()},
        }
        out.append(_statement(subject, EVAL_RESULT_TYPE, predicate))
    return out


def statement_label(st: dict) -> str:
    """A bundle line in words, for messages: the predicate and, for an eval result, its metric."""
    pred = st.get("predicate") if isinstance(st.get("predicate"), dict) else {}
    if st.get("predicateType") == TEST_RESULT_TYPE:
        return "test result"
    return f"eval result {pred.get('metric', '?')}"
