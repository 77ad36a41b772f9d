"""Factsheets for the decisions tests (`check`, `diff`, the compliance summary), as a hostile author would
alter them: copies of the frozen 1.0.0 fixture (two load points, capacity, HumanEval+ on three tasks, energy;
its records beside it) and gated builds against the mock server (see tests/support/compliance_builds.py
for the timing the thresholds rest on)."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.compliance_builds import GATE_POINTS, MIN_E2EL_MS, build, gated_build, runner, spec_text
from tests.support.mock_spec import P99_POLICY

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"

# What the fixture's records give (its figures as built): pass@1 0 of 3 tasks; goodput ~11 req/s at
# concurrency=1. A made-up sheet states far better.
GOODPUT = "load/points/0/result/metrics/goodput"
PASS_AT_1 = "accuracy/result/pass_rates/plus/pass@1"

# A release policy without the SLO rule: floors on goodput and pass@1 only, no evidence demanded.
NO_SLO_POLICY = """\
    policy_version: 1
    id: floors
    title: goodput and pass@1 floors
    version: "1"
    rules:
      - id: goodput-floor
        title: goodput at concurrency=1 at least 100 req/s
        field: load.points[concurrency=1].result.metrics.goodput
        op: ">="
        threshold: 100
      - id: pass-at-1-floor
        title: pass@1 (plus) at least 0.9
        field: accuracy.result.pass_rates.plus.pass@1
        op: ">="
        threshold: 0.9
    """

RECORDS_POLICY = """\
    policy_version: 1
    id: records
    title: raw records
    version: "1"
    rules:
      - id: records
        title: raw records verify
        check: raw_records
      - id: goodput-with-records
        title: goodput at concurrency=1 at least 1 req/s, on its raw records
        field: load.points[concurrency=1].result.metrics.goodput
        op: ">="
        threshold: 1
        evidence: {measured: true, raw_records: true}
    """

GATE_POLICY = P99_POLICY.replace("{name}", "gate")


def copy_fixture(dest: Path) -> Path:
    """A copy of the 1.0.0 fixture, records included; returns its factsheet.json."""
    shutil.copytree(FIXTURE, dest)
    return dest / "factsheet.json"


def edit(sheet_json: Path, path: str, value) -> None:
    """Set the value at `path` ("a/b/0/c") in factsheet.json, records untouched (digests still match)."""
    doc = json.loads(sheet_json.read_text())
    *parents, last = path.split("/")
    node = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = value
    sheet_json.write_text(json.dumps(doc, indent=2))


def made_up(dest: Path) -> Path:
    """The fixture with goodput and pass@1 made up (records untouched)."""
    sheet = copy_fixture(dest)
    edit(sheet, GOODPUT, 1000.0)
    edit(sheet, PASS_AT_1, 1.0)
    edit(sheet, "accuracy/result/pass_rates/base/pass@1", 1.0)
    return sheet


def write_policy(folder: Path, body: str, name: str = "policy.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(textwrap.dedent(body))
    return path


def check(sheet_json: Path, policy: Path | str, out: Path):
    """`factsheet check`: (result, compliance.json as a dict)."""
    result = runner.invoke(app, ["check", str(sheet_json), "-p", str(policy), "-o", str(out)])
    report = out / "compliance.json"
    return result, json.loads(report.read_text()) if report.exists() else None


def diff(old: Path, new: Path, out: Path):
    """`factsheet diff`: (result, diff.json as a dict)."""
    result = runner.invoke(app, ["diff", str(old), str(new), "-o", str(out)])
    report = out / "diff.json"
    return result, json.loads(report.read_text()) if report.exists() else None


def validate(sheet_json: Path):
    return runner.invoke(app, ["validate", str(sheet_json)])


@pytest.fixture(scope="module", name="gated_builds")
def gated_builds_fixture(tmp_path_factory) -> dict[str, Path]:
    """Builds with a compliance gate, as `factsheet build` writes them: one whose gate passes (5 s p99), one
    whose gate fails (a p99 below what the mock can serve), one gated by the built-in release-gate profile.
    Their factsheet.json paths."""
    out = {}
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url:
        for name, threshold, code in (("pass", 5000, 0), ("fail", MIN_E2EL_MS - 15, 1)):
            policy = GATE_POLICY.format(threshold=threshold)
            result, folder = gated_build(tmp_path_factory.mktemp(name), url, policy)
            assert result.exit_code == code, result.output
            out[name] = folder / "factsheet.json"
        # A built-in profile as the gate (its verdict, pass or fail, is whatever the mock gives).
        profile = "compliance: {policies: [release-gate]}\n"
        result, folder = build(tmp_path_factory.mktemp("profile"), spec_text(url, GATE_POINTS, profile))
        assert result.exit_code in (0, 1), result.output
        out["profile"] = folder / "factsheet.json"
    return out


def forge_pass(sheet_json: Path) -> None:
    """Write a passing verdict into the compliance summary (counts and findings made to agree with it)."""
    doc = json.loads(sheet_json.read_text())
    c = doc["compliance"]
    total = sum(c["counts"].values())
    c["verdict"], c["findings"] = "pass", []
    c["counts"] = {k: (total if k == "pass" else 0) for k in c["counts"]}
    sheet_json.write_text(json.dumps(doc, indent=2))
