"""`factsheet build` with a `compliance:` section: the gate runs at the end, the factsheet carries its
summary, and the build's exit code follows it — two policies either side of what the mock serves."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from factsheet.cli.commands import app
from probes.core.digests import sha256_bytes
from tests.support.compliance_builds import MIN_E2EL_MS, gated_build, runner
from tests.support.mock_spec import P99_POLICY as POLICY

pytestmark = pytest.mark.system


def test_build_passes_its_own_policy(tmp_path, mock_url):
    policy = POLICY.format(name="generous", threshold=5000)
    result, out = gated_build(tmp_path, mock_url, policy)
    assert result.exit_code == 0, result.output
    sheet = json.loads((out / "factsheet.json").read_text())
    assert sheet["compliance"]["verdict"] == "pass"
    assert sheet["compliance"]["policies"][0]["id"] == "p99-generous"
    report = json.loads((out / "compliance.json").read_text())
    assert report["verdict"] == "pass" and report["counts"]["pass"] == 2
    # The report names the factsheet as written, summary included.
    assert report["factsheet"]["sha256"] == sha256_bytes((out / "factsheet.json").read_bytes())
    html = (out / "factsheet.html").read_text()
    assert 'id="compliance"' in html and 'href="#compliance">Compliance</a>' in html
    for name in ("compliance.html", "compliance.pdf", "compliance-junit.xml"):
        assert (out / name).stat().st_size > 0
    # The factsheet with its summary still validates: digests, and every figure re-derived from the records.
    validated = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert validated.exit_code == 0, validated.output


def test_build_fails_its_own_policy(tmp_path, mock_url):
    policy = POLICY.format(name="impossible", threshold=MIN_E2EL_MS - 15)
    result, out = gated_build(tmp_path, mock_url, policy)
    assert result.exit_code == 1, result.output
    assert "compliance gate failed" in result.output and "p99-impossible/p99-e2el" in result.output
    sheet = json.loads(
        (out / "factsheet.json").read_text()
    )  # the factsheet is still written, with the verdict
    assert sheet["compliance"]["verdict"] == "fail"
    assert sheet["compliance"]["findings"][0]["outcome"] == "fail"


def test_bad_policy_stops_the_build_before_measuring(tmp_path, mock_url):
    policy = POLICY.format(name="x", threshold=1).replace("e2el_ms.percentiles", "e2el.percentiles")
    result, out = gated_build(tmp_path, mock_url, policy)
    assert result.exit_code == 2, result.output
    assert "gate.yaml" in result.output and "e2el" in result.output
    assert not out.exists()


def test_policy_unusable_on_the_figure_keeps_the_measured_factsheet(tmp_path, mock_url):
    """A unit that does not match the figure shows only once the figure exists: bad input (exit 2), but
    the measurements are not thrown away."""
    policy = POLICY.format(name="seconds", threshold=5).replace("unit: ms", "unit: s")
    result, out = gated_build(tmp_path, mock_url, policy)
    assert result.exit_code == 2, result.output
    assert "unit 's'" in result.output
    sheet = json.loads((out / "factsheet.json").read_text())
    assert (
        sheet["compliance"]["status"] == "not_measured"
        and "could not be applied" in sheet["compliance"]["reason"]
    )


def test_signed_gated_build_carries_the_verdict(tmp_path, mock_url):
    """With `--sign-key`, the attestation covers the factsheet as written (summary included) and carries the
    gate's verdict in in-toto Test Result terms, with the digest of compliance.json."""
    import base64

    from factsheet.attest.keys import generate

    private, public, _ = generate(tmp_path / "keys")
    policy = POLICY.format(name="generous", threshold=5000)
    signed, folder = gated_build(tmp_path / "b", mock_url, policy, "--sign-key", str(private))
    assert signed.exit_code == 0, signed.output
    envelope = json.loads((folder / "factsheet.intoto.jsonl").read_text())
    verdict = json.loads(base64.b64decode(envelope["payload"]))["predicate"]["compliance"]
    assert verdict["result"] == "PASSED" and verdict["policy"] == "p99-generous 1"
    assert verdict["report_sha256"] == sha256_bytes((folder / "compliance.json").read_bytes())
    verified = runner.invoke(app, ["verify", str(folder / "factsheet.json"), "--pubkey", str(public)])
    assert verified.exit_code == 0, verified.output
    # the gate as an in-toto Test Result (issue 32): each rule with the figure that decided it
    line = (folder / "factsheet.results.intoto.jsonl").read_text().splitlines()[0]
    test_result = json.loads(base64.b64decode(json.loads(line)["payload"]))["predicate"]
    assert test_result["result"] == "PASSED" and test_result["failedTests"] == []
    assert [t.split(":")[0] for t in test_result["passedTests"]] == verdict["passed_tests"]
    p99 = next(t for t in test_result["passedTests"] if t.startswith("p99-generous/p99"))
    assert re.fullmatch(r"p99-generous/p99-e2el: figure [0-9.]+ ms, threshold <= 5000 ms, n [0-9]+", p99), p99
    assert "test result" in verified.output


@pytest.mark.pdf
def test_a_signed_gated_build_pre_registers_its_gate_and_verify_holds_it_to_it(tmp_path, mock_url):
    """issue 32 item 3: the policies are signed before measuring; a gate that ran other policies fails."""
    import base64

    import pypdf

    from factsheet.attest import dsse
    from factsheet.attest.keys import generate, load_private

    private, public, _ = generate(tmp_path / "keys")
    policy = POLICY.format(name="generous", threshold=5000)
    signed, folder = gated_build(tmp_path / "b", mock_url, policy, "--sign-key", str(private))
    assert signed.exit_code == 0, signed.output
    att_path = folder / "factsheet.intoto.jsonl"
    st = json.loads(base64.b64decode(json.loads(att_path.read_text())["payload"]))
    plan_raw = (folder / "factsheet.plan.intoto.jsonl").read_bytes()
    plan = json.loads(base64.b64decode(json.loads(plan_raw)["payload"]))
    sheet = json.loads((folder / "factsheet.json").read_text())
    assert [p["sha256"] for p in plan["predicate"]["policies"]] == [
        p["sha256"] for p in sheet["compliance"]["policies"]
    ]
    assert plan["predicate"]["plannedAt"] <= sheet["provenance"]["started_at"]  # same ISO form: set before
    assert st["predicate"]["plan"]["digest"]["sha256"] == hashlib.sha256(plan_raw).hexdigest()
    verified = runner.invoke(app, ["verify", str(folder / "factsheet.json"), "--pubkey", str(public)])
    assert verified.exit_code == 0 and "gate pre-registered" in verified.output, verified.output
    text = "".join(p.extract_text() for p in pypdf.PdfReader(folder / "factsheet.pdf").pages[:2])
    assert plan["predicate"]["plannedAt"] in text.replace("\n", "")
    # A plan with a looser bar, signed by the same key and bound by a re-signed attestation: the gate that
    # ran is not the plan's, and verify says so.
    key = load_private(private)
    plan["predicate"]["policies"][0]["sha256"] = "sha256:" + "ab" * 32
    line = json.dumps(dsse.sign(json.dumps(plan).encode(), key)).encode() + b"\n"
    (folder / "factsheet.plan.intoto.jsonl").write_bytes(line)
    st["predicate"]["plan"]["digest"]["sha256"] = hashlib.sha256(line).hexdigest()
    att_path.write_text(json.dumps(dsse.sign(json.dumps(st).encode(), key)) + "\n")
    moved = runner.invoke(app, ["verify", str(folder / "factsheet.json"), "--pubkey", str(public)])
    assert moved.exit_code == 1 and "differ from the plan" in moved.output, moved.output
