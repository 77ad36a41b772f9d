"""keygen, sign and verify on a real factsheet built against the mock server: every byte that matters is
covered, and each kind of tampering is caught with exit 1 naming what differs."""

from __future__ import annotations

import base64
import hashlib
import json
import stat
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from factsheet.attest.attestation import dsse, key_id, load_private, load_public, sign_factsheet
from factsheet.attest.statement import statement
from factsheet.rederive.validate import load_factsheet
from tests.attest.attest_helpers import run_cli, run_entry_point

# One worker: the folder's one build (conftest `built`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("attest-built")]

ATT = "factsheet.intoto.jsonl"


def _flip(path: Path, at: float = 0.5) -> None:
    data = bytearray(path.read_bytes())
    data[int(len(data) * at)] ^= 0x01
    path.write_bytes(bytes(data))


def _sign(folder: Path, key: Path) -> None:
    result = run_cli("sign", folder / "factsheet.json", "--key", key)
    assert result.returncode == 0, result.stderr


def _verify(folder: Path, pub: Path, *extra):
    return run_cli("verify", folder / "factsheet.json", "--pubkey", pub, *extra)


def _envelope(folder: Path) -> dict:
    return json.loads((folder / ATT).read_text())


def _statement(folder: Path) -> dict:
    return json.loads(base64.b64decode(_envelope(folder)["payload"]))


def test_keygen_writes_a_private_key_only_its_owner_reads_and_never_prints_it(keys, tmp_path):
    private, public = keys
    assert stat.S_IMODE(private.stat().st_mode) == 0o600
    assert stat.S_IMODE(public.stat().st_mode) & 0o077 != 0o077  # readable by others is fine
    result = run_cli("keygen", "-o", tmp_path)
    assert result.returncode == 0
    secret = (tmp_path / "factsheet-signing.key").read_text()
    body = "".join(secret.splitlines()[1:-1])
    assert body and body not in result.stdout + result.stderr and "PRIVATE KEY-----" not in result.stdout
    assert key_id(load_public(tmp_path / "factsheet-signing.pub")) in result.stdout
    again = run_cli("keygen", "-o", tmp_path)  # never overwrites a key
    assert again.returncode == 2 and "already exists" in again.stderr
    assert (tmp_path / "factsheet-signing.key").read_text() == secret


def test_sign_then_verify_covers_every_file(fresh, keys):
    private, public = keys
    _sign(fresh, private)
    st = _statement(fresh)
    names = [s["name"] for s in st["subject"]]
    records = sorted(p.relative_to(fresh).as_posix() for p in (fresh / "records").glob("*"))
    assert names[:3] == ["factsheet.json", "factsheet.pdf", "factsheet.html"] and sorted(names[3:]) == records
    assert len(records) == 2
    assert st["_type"] == "https://in-toto.io/Statement/v1"
    assert _envelope(fresh)["payloadType"] == "application/vnd.in-toto+json"
    sheet = json.loads((fresh / "factsheet.json").read_text())
    pred = st["predicate"]
    assert pred["factsheet"]["schemaVersion"] == sheet["schema_version"]
    assert "sha256:" + pred["spec"]["digest"]["sha256"] == sheet["provenance"]["spec_sha256"]
    assert pred["tool"]["version"] and "compliance" not in pred
    result = run_entry_point("verify", fresh / "factsheet.json", "--pubkey", public)  # the real command
    assert result.returncode == 0, result.stderr
    assert key_id(load_public(public)) in result.stdout and "5 signed files match" in result.stdout
    _flip(fresh / "factsheet.pdf")
    result = run_entry_point("verify", fresh / "factsheet.json", "--pubkey", public)
    assert result.returncode == 1 and "factsheet.pdf differs" in result.stderr


@pytest.mark.parametrize(
    "name",
    ["factsheet.json", "factsheet.pdf", "factsheet.html", "records/load-01.jsonl", "records/load-02.jsonl"],
)
def test_one_flipped_byte_in_any_subject_fails_naming_the_file(fresh, keys, name):
    _sign(fresh, keys[0])
    _flip(fresh / name)
    result = _verify(fresh, keys[1])
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{name} differs from its signed digest" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("name", ["factsheet.pdf", "records/load-02.jsonl"])
def test_a_missing_subject_fails_naming_the_file(fresh, keys, name):
    _sign(fresh, keys[0])
    (fresh / name).unlink()
    result = _verify(fresh, keys[1])
    assert result.returncode == 1 and f"{name} is missing" in result.stderr


def _rewrite(folder: Path, change) -> None:
    env = _envelope(folder)
    change(env)
    (folder / ATT).write_text(json.dumps(env) + "\n")


def _flip_b64(text: str, at: float = 0.5) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[int(len(raw) * at)] ^= 0x01
    return base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize(
    "change",
    [
        lambda e: e.update(payload=_flip_b64(e["payload"])),  # one byte of the signed statement
        lambda e: e.update(payload=_flip_b64(e["payload"], 0.99)),
        lambda e: e.update(payloadType="application/vnd.in-toto+jsoN"),
        lambda e: e["signatures"][0].update(sig=_flip_b64(e["signatures"][0]["sig"])),
        lambda e: e["signatures"][0].update(sig=_flip_b64(e["signatures"][0]["sig"], 0.0)),
    ],
    ids=["payload", "payload-end", "payload-type", "signature", "signature-first-byte"],
)
def test_a_flipped_byte_in_the_envelope_or_signature_fails(fresh, keys, change):
    _sign(fresh, keys[0])
    _rewrite(fresh, change)
    result = _verify(fresh, keys[1])
    assert result.returncode == 1, result.stdout + result.stderr
    assert "no valid signature" in result.stderr


def test_a_statement_re_signed_with_another_key_fails(fresh, keys, tmp_path):
    _sign(fresh, keys[0])
    run_cli("keygen", "-o", tmp_path / "other")
    assert _verify(fresh, tmp_path / "other" / "factsheet-signing.pub").returncode == 1
    # An attacker edits a figure, re-renders nothing, and signs with their own key: our key rejects it.
    _sign(fresh, tmp_path / "other" / "factsheet-signing.key")
    result = _verify(fresh, keys[1])
    assert result.returncode == 1 and key_id(load_public(keys[1])) in result.stderr


def test_the_keyid_hint_cannot_make_a_bad_signature_pass_or_a_good_one_fail(fresh, keys):
    _sign(fresh, keys[0])
    _rewrite(fresh, lambda e: e["signatures"][0].update(keyid="someone-else"))
    assert _verify(fresh, keys[1]).returncode == 0


@pytest.mark.parametrize(
    ("content", "expect"),
    [("", "empty attestation"), ("{not json\n", "not a DSSE envelope"), ('{"payload": "x"}\n', "missing")],
)
def test_malformed_attestation_is_exit_2(fresh, keys, content, expect):
    _sign(fresh, keys[0])
    (fresh / ATT).write_text(content)
    result = _verify(fresh, keys[1])
    assert result.returncode == 2 and expect in result.stderr


def test_missing_attestation_and_bad_key_files_are_exit_2(fresh, keys):
    assert _verify(fresh, keys[1]).returncode == 2  # not signed yet: nothing to verify
    _sign(fresh, keys[0])
    assert _verify(fresh, keys[0]).returncode == 2  # a private key given as the public one
    assert _verify(fresh, fresh / "factsheet.json").returncode == 2
    assert run_cli("sign", fresh / "factsheet.json", "--key", keys[1]).returncode == 2


def test_a_signed_statement_cannot_point_outside_the_folder(fresh, keys):
    private = Ed25519PrivateKey.generate()
    bad = {"_type": "https://in-toto.io/Statement/v1", "predicateType": "https://llm-factsheet.dev/attestation/factsheet/v1",
           "subject": [{"name": "../outside", "digest": {"sha256": "00"}}], "predicate": {}}  # fmt: skip
    (fresh / ATT).write_text(json.dumps(dsse.sign(json.dumps(bad).encode(), private)))
    pub = fresh / "other.pub"
    from cryptography.hazmat.primitives import serialization

    pub.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    result = _verify(fresh, pub)
    assert result.returncode == 2 and "not an llm-factsheet in-toto Statement" in result.stderr


def test_signing_refuses_records_that_no_longer_match_the_factsheet(fresh, keys):
    _flip(fresh / "records" / "load-01.jsonl")
    result = run_cli("sign", fresh / "factsheet.json", "--key", keys[0])
    assert result.returncode == 1 and "load-01.jsonl" in result.stderr
    assert not (fresh / ATT).exists()


def test_a_verdict_json_alone_is_never_signed(fresh, keys, tmp_path):
    """A verdict names no rules to re-run: taken on faith, so refused (test_signed_verdict.py: the rest)."""
    verdict = tmp_path / "verdict.json"
    for data in ({"policy": "release.yaml", "result": "FAILED"}, {"policy": "x", "result": "MAYBE"}):
        verdict.write_text(json.dumps(data))
        bad = run_cli("sign", fresh / "factsheet.json", "--key", keys[0], "--compliance", verdict)
        assert bad.returncode == 2 and "not a compliance report" in bad.stderr
        assert not (fresh / ATT).exists()


def test_sign_api_matches_cli(fresh, keys):
    from factsheet.attest.attestation import load_private

    path = sign_factsheet(fresh / "factsheet.json", load_private(keys[0])).attestation
    assert path == fresh / ATT
    assert dsse.verify(dsse.parse(path.read_bytes()), load_public(keys[1]))


def test_a_validly_signed_figure_that_the_records_do_not_give_fails(fresh, keys):
    path = fresh / "factsheet.json"
    data = json.loads(path.read_text())
    data["load"]["points"][0]["result"]["metrics"]["ttft_ms"]["percentiles"]["p50"] *= 2
    path.write_text(json.dumps(data, indent=2))
    refused = run_cli("sign", path, "--key", keys[0])
    assert refused.returncode == 1 and not (fresh / ATT).exists()  # sign never vouches for it
    # Signed anyway (by hand, with the trusted key): the signature verifies, the figures do not.
    st = statement(load_factsheet(path), fresh, path.name)
    (fresh / ATT).write_text(json.dumps(dsse.sign(json.dumps(st).encode(), load_private(keys[0]))) + "\n")
    result = _verify(fresh, keys[1])
    assert result.returncode == 1 and "ttft" in result.stderr


RECORDS_ONLY = """policy_version: 1
id: records-only
title: Records only
version: "1"
rules:
  - id: raw-records
    title: Every raw-records digest verifies
    check: raw_records
    severity: error
"""


def test_a_compliance_report_is_carried_as_a_test_result_verdict(fresh, keys, tmp_path):
    policy = tmp_path / "records-only.yaml"
    policy.write_text(RECORDS_ONLY)
    checked = run_cli("check", fresh / "factsheet.json", "-p", policy, "-o", tmp_path / "check")
    assert checked.returncode == 0, checked.stderr
    path = tmp_path / "check" / "compliance.json"
    result = run_cli("sign", fresh / "factsheet.json", "--key", keys[0], "--compliance", path)
    assert result.returncode == 0, result.stderr
    verdict = _statement(fresh)["predicate"]["compliance"]
    assert verdict["result"] == "PASSED" and verdict["policy"] == "records-only 1"
    assert verdict["passed_tests"] == ["records-only/raw-records"] and verdict["failed_tests"] == []
    assert verdict["report_sha256"] == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()
    out = _verify(fresh, keys[1])
    assert out.returncode == 0 and "compliance: PASSED against records-only 1" in out.stdout, out.stderr
    report = json.loads(path.read_text())
    path.write_text(json.dumps({**report, "verdict": "maybe"}))
    bad = run_cli("sign", fresh / "factsheet.json", "--key", keys[0], "--compliance", path)
    assert bad.returncode == 2 and "verdict" in bad.stderr
