"""A compliance verdict is never signed, nor verified, on faith (issue 42): `sign --compliance` re-runs the
report's policies on the sheet and carries the verdict they give; `verify` re-runs the policies signed with
it. The mock build fails release-gate (its SLO is not met on enough samples), so a PASSED is a forgery."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from factsheet.attest.attestation import dsse, load_private
from factsheet.attest.statement import statement
from factsheet.compliance.verdict import ComplianceVerdict
from factsheet.rederive.validate import load_factsheet
from tests.attest.attest_helpers import run_cli

# One worker: the folder's one build (conftest `built`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("attest-built")]

ATT = "factsheet.intoto.jsonl"


def _check(folder: Path, out: Path, policy: str = "release-gate") -> Path:
    """`factsheet check` of the sheet into `out` (not its folder): the genuine compliance.json."""
    result = run_cli("check", folder / "factsheet.json", "-p", policy, "-o", out)
    assert result.returncode in (0, 1), result.stderr
    return out / "compliance.json"


def _sign(folder: Path, key: Path, *extra):
    return run_cli("sign", folder / "factsheet.json", "--key", key, *extra)


def _verify(folder: Path, pub: Path):
    return run_cli("verify", folder / "factsheet.json", "--pubkey", pub)


def _predicate(folder: Path) -> dict:
    return json.loads(base64.b64decode(json.loads((folder / ATT).read_text())["payload"]))["predicate"]


def _one_line(result, code: int) -> None:
    assert result.returncode == code, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr


def test_the_genuine_report_is_re_run_and_its_failed_verdict_signed_and_verified(fresh, keys, tmp_path):
    report = _check(fresh, tmp_path / "check")
    assert json.loads(report.read_text())["verdict"] == "fail"  # the mock build fails release-gate
    signed = _sign(fresh, keys[0], "--compliance", report)
    assert signed.returncode == 0, signed.stderr
    pred = _predicate(fresh)
    assert pred["compliance"]["result"] == "FAILED"
    assert [p["id"] for p in pred["complianceRun"]["policies"]] == ["release-gate"]
    out = _verify(fresh, keys[1])
    assert out.returncode == 0, out.stderr
    assert "compliance: FAILED against release-gate 1.0.0" in out.stdout
    assert "re-run on the sheet: FAILED, as signed" in out.stdout


def test_a_hand_written_verdict_is_bad_input_and_nothing_is_written(fresh, keys, tmp_path):
    verdict = tmp_path / "verdict.json"
    verdict.write_text(json.dumps({"policy": "release-gate 1.0.0", "result": "PASSED"}))
    result = _sign(fresh, keys[0], "--compliance", verdict)
    _one_line(result, 2)
    assert "never signed on faith" in result.stderr
    assert not (fresh / ATT).exists()


def test_a_report_edited_to_pass_fails_naming_the_verdict(fresh, keys, tmp_path):
    path = _check(fresh, tmp_path / "check")
    report = json.loads(path.read_text())
    report["verdict"] = "pass"
    for r in report["results"]:
        r["gating"], r["outcome"] = False, "pass"
    report["counts"] = {k: 0 for k in report["counts"]} | {"pass": len(report["results"])}
    path.write_text(json.dumps(report))
    result = _sign(fresh, keys[0], "--compliance", path)
    _one_line(result, 1)
    assert "does not re-check on this sheet" in result.stderr and "verdict" in result.stderr
    assert not (fresh / ATT).exists()


def test_a_report_with_its_threshold_edited_to_pass_fails(fresh, keys, tmp_path):
    """Rules loosened so the re-run passes, the digest left: the rules are not the ones it names."""
    path = _check(fresh, tmp_path / "check")
    report = json.loads(path.read_text())
    report["policies"][0]["rules"] = [r for r in report["policies"][0]["rules"] if r["id"] == "provenance"]
    path.write_text(json.dumps(report))
    result = _sign(fresh, keys[0], "--compliance", path)
    _one_line(result, 1)
    assert "release-gate" in result.stderr


def test_another_factsheets_report_fails(fresh, keys, tmp_path):
    path = _check(fresh, tmp_path / "check")
    report = json.loads(path.read_text())
    report["factsheet"]["sha256"] = "sha256:" + "ab" * 32  # another build's compliance.json names its sheet
    path.write_text(json.dumps(report))
    result = _sign(fresh, keys[0], "--compliance", path)
    _one_line(result, 1)
    assert "another factsheet" in result.stderr


def _forge(folder: Path, key: Path, verdict: ComplianceVerdict, run: dict | None) -> None:
    """An attestation made by hand with the trusted key, carrying a verdict the sheet does not earn."""
    path = folder / "factsheet.json"
    st = statement(load_factsheet(path), folder, path.name, verdict, compliance_run=run)
    env = dsse.sign(json.dumps(st).encode(), load_private(key))
    (folder / ATT).write_text(json.dumps(env) + "\n")


@pytest.mark.parametrize("with_policies", [True, False], ids=["policies-signed", "verdict-alone"])
def test_verify_re_runs_a_signed_verdict_and_refuses_a_passed_the_sheet_does_not_earn(
    fresh, keys, tmp_path, with_policies
):
    assert _sign(fresh, keys[0], "--compliance", _check(fresh, tmp_path / "check")).returncode == 0
    run = _predicate(fresh)["complianceRun"] if with_policies else None
    forged = ComplianceVerdict(policy="release-gate 1.0.0", result="PASSED")
    _forge(fresh, keys[0], forged, run)
    result = _verify(fresh, keys[1])
    _one_line(result, 1)
    assert "PASSED" not in result.stdout
    assert "signed compliance verdict" in result.stderr
