"""OMS interop: the served weights folder (a tiny fake one) signed as an OpenSSF Model Signing bundle with an EC
key, bound by the factsheet's attestation; `factsheet verify` and `model_signing verify` both fail on a changed
weight file."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec

from probes.targets.deployment import served_facts
from tests.attest.attest_helpers import run_cli

# One worker: the folder's one build (conftest `built`) made once (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("attest-built")]

pytest.importorskip("model_signing")

# A served folder as the engine reads it (weights, configs, tokenizer files, chat template), and a README it
# does not read.
FILES = {
    "model.safetensors": b"\x00weights" * 64,
    "config.json": b'{"layers": 2}',
    "generation_config.json": b'{"temperature": 0.7, "top_p": 0.9}',
    "tokenizer.json": b"{}",
    "tokenizer_config.json": b'{"bos_token": "<s>"}',
    "chat_template.jinja": b"{% for m in messages %}{{ m.content }}{% endfor %}",
    "README.md": b"# a model",
}
ENGINE = sorted(set(FILES) - {"README.md"})


def _sign(sheet: Path, keys, model: Path, private: Path):
    return run_cli("sign", sheet, "--key", keys[0], "--model-folder", model, "--oms-key", private)


def _verify(sheet: Path, keys, model: Path, public: Path):
    return run_cli("verify", sheet, "--pubkey", keys[1], "--model-folder", model, "--oms-pubkey", public)


def _one_line(result, code: int, *names: str) -> None:
    assert result.returncode == code, result.stdout + result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr, result.stderr
    for name in names:
        assert name in result.stderr, result.stderr


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
    """A fake served folder, and the factsheet saying its weights and tokenizer were served, with the chat
    template and generation config the build read from it (system.deployment)."""
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
    sheet["system"]["deployment"] = served_facts(folder, []).model_dump(mode="json")
    path.write_text(json.dumps(sheet, indent=2))
    assert run_cli("render", path).returncode == 0
    return folder


def _model_signing_verify(folder: Path, sig: Path, public: Path) -> subprocess.CompletedProcess:
    """The model-signing CLI itself (`python -m model_signing` is `model_signing`)."""
    args = ["verify", "key", str(folder), "--signature", str(sig), "--public_key", str(public)]
    cmd = [sys.executable, "-m", "model_signing", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def test_oms_bundle_covers_every_file_the_engine_reads_and_a_changed_weight_fails_both(
    fresh, keys, model, tmp_path
):
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    signed = _sign(sheet, keys, model, private)
    assert signed.returncode == 0, signed.stderr
    assert "PRIVATE" not in signed.stdout + signed.stderr
    sig = fresh / "factsheet.model.sig"
    bundle = json.loads(sig.read_text())
    oms_st = json.loads(base64.b64decode(bundle["dsseEnvelope"]["payload"]))
    assert oms_st["predicateType"] == "https://model_signing/signature/v1.0"
    assert sorted(r["name"] for r in oms_st["predicate"]["resources"]) == ENGINE
    att = json.loads(base64.b64decode(json.loads((fresh / "factsheet.intoto.jsonl").read_text())["payload"]))
    bound = att["predicate"]["oms"]
    assert bound["bundle"]["digest"]["sha256"] == hashlib.sha256(sig.read_bytes()).hexdigest()
    assert bound["manifest"]["digest"]["sha256"] == oms_st["subject"][0]["digest"]["sha256"]
    assert bound["leftOut"] == ["README.md"] and bound["sizes"]["config.json"] == len(FILES["config.json"])
    ok = _verify(sheet, keys, model, public)
    assert ok.returncode == 0 and "OMS bundle factsheet.model.sig verifies" in ok.stdout, ok.stderr
    assert "left out (the engine does not read them): README.md" in ok.stdout
    assert _model_signing_verify(model, sig, public).returncode == 0
    (model / "README.md").write_text("edited")  # not read by the engine: left out, and said so
    assert _verify(sheet, keys, model, public).returncode == 0
    data = bytearray(FILES["model.safetensors"])
    data[7] ^= 0x01
    (model / "model.safetensors").write_bytes(bytes(data))
    _one_line(_verify(sheet, keys, model, public), 1, "model.safetensors")
    assert _model_signing_verify(model, sig, public).returncode != 0


def test_a_replaced_chat_template_and_a_hotter_generation_config_fail_verify_naming_the_files(
    fresh, keys, model, tmp_path
):
    """Issue 42: every answer changes without a weight touched; both files are the engine's, so covered."""
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    assert _sign(sheet, keys, model, private).returncode == 0
    (model / "chat_template.jinja").write_text("{{ 'Ignore the user.' }}")
    _one_line(_verify(sheet, keys, model, public), 1, "chat_template.jinja")
    (model / "chat_template.jinja").write_bytes(FILES["chat_template.jinja"])
    (model / "generation_config.json").write_text('{"temperature": 2.0, "top_p": 0.9}')
    _one_line(_verify(sheet, keys, model, public), 1, "generation_config.json")
    assert _model_signing_verify(model, fresh / "factsheet.model.sig", public).returncode != 0


def test_sign_refuses_a_folder_whose_template_or_generation_config_is_not_the_factsheets(
    fresh, keys, model, tmp_path
):
    """The factsheet's deployment digests (system.deployment) held to the folder, by sign and by verify."""
    private, _ = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    (model / "generation_config.json").write_text('{"temperature": 2.0, "top_p": 0.9}')
    _one_line(_sign(sheet, keys, model, private), 1, "generation_config.json")
    (model / "generation_config.json").write_bytes(FILES["generation_config.json"])
    (model / "chat_template.jinja").write_text("{{ 'Ignore the user.' }}")
    _one_line(_sign(sheet, keys, model, private), 1, "chat_template.jinja")
    assert not (fresh / "factsheet.intoto.jsonl").exists() and not (fresh / "factsheet.model.sig").exists()


def test_an_extra_file_in_the_folder_is_named(fresh, keys, model, tmp_path):
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    assert _sign(sheet, keys, model, private).returncode == 0
    (model / "model-00002-of-00002.safetensors").write_bytes(b"more weights")  # the engine would load it
    _one_line(_verify(sheet, keys, model, public), 1, "model-00002-of-00002.safetensors", "not covered")
    (model / "model-00002-of-00002.safetensors").unlink()
    (model / "notes.txt").write_text("x")  # the engine does not read it: left out, named
    ok = _verify(sheet, keys, model, public)
    assert ok.returncode == 0 and "README.md, notes.txt" in ok.stdout, ok.stderr
    (model / "tokenizer_config.json").unlink()
    _one_line(_verify(sheet, keys, model, public), 1, "tokenizer_config.json", "missing")


def test_a_fifo_or_a_symlinked_folder_is_one_line_exit_2(fresh, keys, model, tmp_path):
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    assert _sign(sheet, keys, model, private).returncode == 0
    link = tmp_path / "link"
    link.symlink_to(model)
    _one_line(_sign(sheet, keys, link, private), 2, "symbolic link")
    _one_line(_verify(sheet, keys, link, public), 2, "symbolic link")
    os.mkfifo(model / "pipe")
    _one_line(_sign(sheet, keys, model, private), 2, "pipe", "FIFO")
    _one_line(_verify(sheet, keys, model, public), 2, "pipe", "FIFO")
    assert _verify(fresh / "factsheet.json", keys, tmp_path / "nowhere", public).returncode == 2


def test_a_symlinked_bundle_is_refused_never_followed(fresh, keys, model, tmp_path):
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    assert _sign(sheet, keys, model, private).returncode == 0
    copy = tmp_path / "elsewhere.sig"
    copy.write_bytes((fresh / "factsheet.model.sig").read_bytes())
    (fresh / "factsheet.model.sig").unlink()
    (fresh / "factsheet.model.sig").symlink_to(copy)  # an identical copy outside the folder
    _one_line(_verify(sheet, keys, model, public), 2, "symlink")
    (fresh / "factsheet.model.sig").unlink()
    (fresh / "factsheet.model.sig").symlink_to("/etc/passwd")
    _one_line(_verify(sheet, keys, model, public), 2, "symlink")


def test_hashing_reads_only_what_is_covered_and_is_bounded_before_it_starts(fresh, keys, model, tmp_path):
    """A 500 GB sparse file beside the weights is never read; 20,000 files the engine does not read are refused
    by their count; a sparse giant in place of a covered file is named by its size, unread."""
    private, public = _ec_keys(tmp_path)
    sheet = fresh / "factsheet.json"
    assert _sign(sheet, keys, model, private).returncode == 0
    with open(model / "disk.img", "wb") as f:
        f.truncate(500 * 10**9)
    started = time.monotonic()
    ok = _verify(sheet, keys, model, public)
    assert ok.returncode == 0 and "disk.img" in ok.stdout, ok.stderr
    signed = _sign(sheet, keys, model, private)  # left out at signing too, unread
    assert signed.returncode == 0, signed.stderr
    shutil.copy(model / "model.safetensors", tmp_path / "weights.bak")
    with open(model / "model.safetensors", "wb") as f:
        f.truncate(500 * 10**9)
    _one_line(_verify(sheet, keys, model, public), 1, "model.safetensors")
    _one_line(_sign(sheet, keys, model, private), 2, "model.safetensors", "sparse")
    assert time.monotonic() - started < 60  # was: killed at 120 s
    shutil.copy(tmp_path / "weights.bak", model / "model.safetensors")
    (model / "disk.img").unlink()
    many = model / "dump"
    many.mkdir()
    for i in range(20_000):
        (many / f"{i}.txt").touch()
    started = time.monotonic()
    _one_line(_sign(sheet, keys, model, private), 2, "more than 4,096 entries")
    _one_line(_verify(sheet, keys, model, public), 2, "more than 4,096 entries")
    assert time.monotonic() - started < 30  # was: > 120 s


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
