"""The results bundle (factsheet.results.intoto.jsonl): the gate as an in-toto Test Result and each headline
figure as an eval result, each a signed DSSE envelope that in-toto's own bindings read back, and each
byte of it checked by `verify`."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest
from google.protobuf import json_format
from in_toto_attestation.predicates.test_result.v0 import test_result_pb2
from in_toto_attestation.v1 import statement as ita_statement
from in_toto_attestation.v1.statement_pb2 import Statement

from factsheet.attest.predicates import EVAL_RESULT_TYPE, TEST_RESULT_TYPE
from factsheet.document.headline.figures import stated_or_computed
from factsheet.rederive.validate import load_factsheet
from tests.attest.attest_helpers import run_cli

# One worker: the folder's one build (conftest `built`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("attest-built")]

BUNDLE = "factsheet.results.intoto.jsonl"


@pytest.fixture
def signed(fresh, keys, tmp_path) -> Path:
    """Signed with the genuine report of `factsheet check -p release-gate` (which the mock build fails)."""
    checked = run_cli("check", fresh / "factsheet.json", "-p", "release-gate", "-o", tmp_path / "check")
    assert checked.returncode == 1, checked.stderr
    result = run_cli(
        "sign",
        fresh / "factsheet.json",
        "--key",
        keys[0],
        "--compliance",
        tmp_path / "check" / "compliance.json",
    )
    assert result.returncode == 0, result.stderr
    assert BUNDLE in result.stdout and "PRIVATE" not in result.stdout + result.stderr
    return fresh


def _lines(folder: Path) -> list[dict]:
    return [json.loads(x) for x in (folder / BUNDLE).read_text().splitlines()]


def _statements(folder: Path) -> list[dict]:
    return [json.loads(base64.b64decode(e["payload"])) for e in _lines(folder)]


def test_the_bundle_reads_back_with_the_in_toto_bindings(signed, keys):
    sts = _statements(signed)
    assert [s["predicateType"] for s in sts][:1] == [TEST_RESULT_TYPE]
    for st in sts:  # each a valid in-toto Statement v1 by the reference bindings' own checks
        pb = json_format.ParseDict(st, Statement())
        ita_statement.Statement.copy_from_pb(pb).validate()
    tr = json_format.ParseDict(sts[0]["predicate"], test_result_pb2.TestResult())
    assert (
        tr.result == "FAILED" and tr.failed_tests
    )  # the policies re-run on the sheet: it fails release-gate
    for test in [*tr.passed_tests, *tr.warned_tests, *tr.failed_tests]:  # policy/rule: what decided it
        assert re.match(r"^release-gate/[a-z0-9-]+: (figure|no figure)", test), test
    assert any(re.search(r"figure [0-9.]+ .*threshold (<=|>=|<|>) ", t) for t in tr.passed_tests), (
        tr.passed_tests
    )
    names = [c.name for c in tr.configuration]
    sheet = load_factsheet(signed / "factsheet.json")
    assert names[0] == "factsheet.json" and {r.path for _, r in sheet.records_files()} <= set(names)
    assert "policy release-gate 1.0.0" in names
    # the headline figures: page 1's values (factsheet.document.headline), each with its n, harness and records digests
    evals = {s["predicate"]["metric"]: s["predicate"] for s in sts if s["predicateType"] == EVAL_RESULT_TYPE}
    page1 = {f.id: f for f in stated_or_computed(sheet).figures if f.value is not None}
    assert set(evals) == set(page1) and "goodput" in evals and "e2el_ms.p99" in evals
    for id, pred in evals.items():
        assert pred["value"] == page1[id].value and pred["sampleSize"] == page1[id].n, id
        assert pred["harness"]["digest"]["sha256"] == sheet.provenance.spec_sha256.removeprefix("sha256:")
        assert pred["dataset"], id
        for d in pred["dataset"]:  # the records the figure derives from, by their real digest
            assert d["digest"]["sha256"] == hashlib.sha256((signed / d["name"]).read_bytes()).hexdigest()
    p99 = evals["e2el_ms.p99"]
    if page1["e2el_ms.p99"].threshold_ms is not None:
        assert p99["comparator"] == "<=" and p99["threshold"] == page1["e2el_ms.p99"].threshold_ms
    att = json.loads(base64.b64decode(json.loads((signed / "factsheet.intoto.jsonl").read_text())["payload"]))
    bound = att["predicate"]["results"]  # the project's statement binds the bundle by its digest
    assert bound == {
        "name": BUNDLE,
        "digest": {"sha256": hashlib.sha256((signed / BUNDLE).read_bytes()).hexdigest()},
        "lines": [hashlib.sha256(x).hexdigest() for x in (signed / BUNDLE).read_bytes().splitlines()],
    }
    out = run_cli("verify", signed / "factsheet.json", "--pubkey", keys[1])
    assert out.returncode == 0, out.stderr
    assert f"{len(sts)} results statements verify: test result" in out.stdout


@pytest.mark.parametrize("at", [0.3, 0.6, 0.95])
def test_a_flipped_byte_in_any_bundle_line_fails_naming_the_line(signed, keys, at):
    text = (signed / BUNDLE).read_text().splitlines()
    for i in range(len(text)):
        lines = list(text)
        raw = bytearray(lines[i].encode())
        raw[int(len(raw) * at)] ^= 0x01
        lines[i] = raw.decode(errors="replace")
        (signed / BUNDLE).write_text("\n".join(lines) + "\n")
        result = run_cli("verify", signed / "factsheet.json", "--pubkey", keys[1])
        assert result.returncode == 1, result.stdout + result.stderr
        assert f"{BUNDLE} line {i + 1}" in result.stderr
    (signed / BUNDLE).write_text("\n".join(text[:-1]) + "\n")  # a line dropped: the attestation's digest
    result = run_cli("verify", signed / "factsheet.json", "--pubkey", keys[1])
    assert result.returncode == 1 and f"{BUNDLE} differs from its signed digest" in result.stderr


def test_a_line_signed_with_another_key_or_over_another_file_fails(signed, keys, tmp_path):
    from factsheet.attest import dsse
    from factsheet.attest.attestation import _verify_results
    from factsheet.attest.keys import load_private, load_public
    from probes.core.errors import CheckFailed

    sts = _statements(signed)
    other = run_cli("keygen", "-o", tmp_path / "k")
    assert other.returncode == 0
    foreign = dsse.sign(json.dumps(sts[0]).encode(), load_private(tmp_path / "k" / "factsheet-signing.key"))
    sts[1]["subject"][0]["digest"]["sha256"] = "00" * 32
    moved = dsse.sign(json.dumps(sts[1]).encode(), load_private(keys[0]))
    original = (signed / BUNDLE).read_text().splitlines()
    for i, env, why in ((0, foreign, "does not verify"), (1, moved, "factsheet.json differs")):
        lines = list(original)
        lines[i] = json.dumps(env)
        (signed / BUNDLE).write_text("\n".join(lines) + "\n")
        result = run_cli("verify", signed / "factsheet.json", "--pubkey", keys[1])
        assert result.returncode == 1 and f"{BUNDLE} line {i + 1} differs" in result.stderr
        # the line's own checks, behind its signed digest: signature under the key, subjects' digests
        digest = hashlib.sha256((signed / BUNDLE).read_bytes()).hexdigest()
        bound = {"name": BUNDLE, "digest": {"sha256": digest}}
        with pytest.raises(CheckFailed, match=f"line {i + 1}.*{why}"):
            _verify_results(signed, bound, load_public(keys[1]), signed / "factsheet.intoto.jsonl")


def test_signing_without_a_gate_writes_the_figures_only(fresh, keys):
    result = run_cli("sign", fresh / "factsheet.json", "--key", keys[0])
    assert result.returncode == 0, result.stderr
    types = {s["predicateType"] for s in _statements(fresh)}
    assert types == {EVAL_RESULT_TYPE}
    assert run_cli("verify", fresh / "factsheet.json", "--pubkey", keys[1]).returncode == 0
