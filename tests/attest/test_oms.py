"""OMS interop: the served weights folder (a tiny fake one) signed as an OpenSSF Model Signing bundle with an EC
key, bound by the factsheet's attestation; `factsheet verify` and `model_signing verify` both fail on a changed
weight file."""

from __future__ import annotations

import base64
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from tests.attest.attest_helpers import run_cli

pytest.importorskip("model_signing")

FILES = {"model.safetensors": b"\x00weights" * 64, "config.json": b'{"layers": 2}', "tokenizer.json": b"{}"}


def _ec_keys(folder: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    private, public = folder / "oms.key", folder / "oms.pub"
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
    )
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


@pytest.fixture
def model(fresh, tmp_path) -> Path:
    """A fake served folder, and the factsheet saying its weights and tokenizer were served (config.json not)."""
    folder = tmp_path / "weights"
    folder.mkdir()
    for name, data in FILES.items():
        (folder / name).write_bytes(data)
    served = {
        n: "sha256:" + hashlib.sha256(FILES[n]).hexdigest() for n in ("model.safetensors", "tokenizer.json")
    }
    path = fresh / "factsheet.json"
    sheet = json.loads(path.read_text())
    sheet["identity"]["served_model"] = {"source": "weights", "served_path": "weights", "digests": served}
    path.write_text(json.dumps(sheet, indent=2))
    assert run_cli("render", path).returncode == 0
    return folder


def _model_signing_verify(folder: Path, sig: Path, public: Path) -> subprocess.CompletedProcess:
    """The model-signing CLI itself (`python -m model_signing` is `model_signing`)."""
    args = ["verify", "key", str(folder), "--signature", str(sig), "--public_key", str(public)]
    cmd = [sys.executable, "-m", "model_signing", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_oms_bundle_covers_the_served_files_and_a_changed_weight_fails_both(fresh, keys, model, tmp_path):
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    signed = run_cli("sign", sheet, "--key", keys[0], "--model-folder", model, "--oms-key", private)
    assert signed.returncode == 0, signed.stderr
    assert "PRIVATE" not in signed.stdout + signed.stderr
    sig = fresh / "factsheet.model.sig"
    bundle = json.loads(sig.read_text())
    oms_st = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    assert oms_st["predicateType"] == "https://model_signing/signature/v1.0"
    assert {r["name"] for r in oms_st["predicate"]["resources"]} == {"model.safetensors", "tokenizer.json"}
    att = json.loads(base64.b64decode(json.loads((fresh / "factsheet.intoto.jsonl").read_text())["payload"]))
    bound = att["predicate"]["oms"]
    assert bound["bundle"]["digest"]["sha256"] == hashlib.sha256(sig.read_bytes()).hexdigest()
    assert bound["manifest"]["digest"]["sha256"] == oms_st["subject"][0]["digest"]["sha256"]
    ok = run_cli("verify", sheet, "--pubkey", keys[1], "--model-folder", model, "--oms-pubkey", public)
    assert ok.returncode == 0 and "OMS bundle factsheet.model.sig verifies" in ok.stdout, ok.stderr
    assert _model_signing_verify(model, sig, public).returncode == 0
    (model / "config.json").write_text("{}")  # not served: outside the bundle, as the factsheet says
    assert (
        run_cli(
            "verify", sheet, "--pubkey", keys[1], "--model-folder", model, "--oms-pubkey", public
        ).returncode
        == 0
    )
    data = bytearray(FILES["model.safetensors"])
    data[7] ^= 0x01
    (model / "model.safetensors").write_bytes(bytes(data))
    bad = run_cli("verify", sheet, "--pubkey", keys[1], "--model-folder", model, "--oms-pubkey", public)
    assert bad.returncode == 1 and "model.safetensors" in bad.stderr
    assert _model_signing_verify(model, sig, public).returncode != 0


def test_bad_oms_input_is_one_line(fresh, keys, model, tmp_path):
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    ed = run_cli("sign", sheet, "--key", keys[0], "--model-folder", model, "--oms-key", keys[0])
    assert ed.returncode == 2 and "EC P-256" in ed.stderr and len(ed.stderr.strip().splitlines()) == 1
    assert not (fresh / "factsheet.model.sig").exists() and not (fresh / "factsheet.intoto.jsonl").exists()
    (model / "tokenizer.json").unlink()  # the folder lacks a file the factsheet says was served
    other = run_cli("sign", sheet, "--key", keys[0], "--model-folder", model, "--oms-key", private)
    assert other.returncode == 2 and "tokenizer.json" in other.stderr
    (model / "tokenizer.json").write_bytes(b"[]")  # the folder's file is not the one served
    differ = run_cli("sign", sheet, "--key", keys[0], "--model-folder", model, "--oms-key", private)
    assert differ.returncode == 1 and "tokenizer.json" in differ.stderr
    (model / "tokenizer.json").write_bytes(FILES["tokenizer.json"])
    assert (
        run_cli("sign", sheet, "--key", keys[0], "--model-folder", model, "--oms-key", private).returncode
        == 0
    )
    wrong = run_cli("verify", sheet, "--pubkey", keys[1], "--model-folder", model, "--oms-pubkey", keys[1])
    assert wrong.returncode == 2 and "EC P-256" in wrong.stderr
    # an OMS bundle over other files (signed by the right key, but not the one bound): exit 1, named
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    (elsewhere / "model.safetensors").write_bytes(b"other")
    from model_signing import signing

    signing.Config().use_elliptic_key_signer(private_key=str(private)).sign(
        elsewhere, fresh / "factsheet.model.sig"
    )
    swapped = run_cli("verify", sheet, "--pubkey", keys[1], "--model-folder", model, "--oms-pubkey", public)
    assert swapped.returncode == 1 and "factsheet.model.sig differs from its signed digest" in swapped.stderr
    for out in (ed, other, differ, wrong, swapped):
        assert "PRIVATE KEY" not in out.stdout + out.stderr and str(tmp_path) not in out.stderr


def test_a_refused_or_failed_sign_leaves_the_earlier_signature_verifying(fresh, keys, model, tmp_path):
    """Signing is all or nothing (issue 42): the results bundle, the OMS bundle and the attestation are made in
    memory and renamed together only when all succeeded."""
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    assert run_cli("sign", sheet, "--key", keys[0]).returncode == 0
    before = {p.name: p.read_bytes() for p in fresh.glob("factsheet*.jsonl")}
    checked = run_cli("check", sheet, "-p", "release-gate", "-o", tmp_path / "check")
    assert checked.returncode == 1, checked.stderr
    report = tmp_path / "check" / "compliance.json"
    (model / "tokenizer.json").unlink()  # fails after the Test Result is made: the OMS folder lacks a file
    failed = run_cli(
        "sign", sheet, "--key", keys[0], "--compliance", report, "--model-folder", model, "--oms-key", private
    )
    assert failed.returncode == 2 and "tokenizer.json" in failed.stderr
    assert {p.name: p.read_bytes() for p in fresh.glob("factsheet*.jsonl")} == before
    assert not (fresh / "factsheet.model.sig").exists()
    assert not [p for p in fresh.iterdir() if p.name.startswith(".")]  # no temporaries left behind
    ok = run_cli("verify", sheet, "--pubkey", keys[1])
    assert ok.returncode == 0, ok.stderr
