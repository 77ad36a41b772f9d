"""`factsheet build` signs its outputs when the spec has `sign: {key: ...}` or --sign-key is given."""

from __future__ import annotations

import hashlib

import pypdf
import pytest

from factsheet.attest.attestation import key_id, load_public
from tests.attest.attest_helpers import endpoint_spec, run_cli

pytestmark = [pytest.mark.system, pytest.mark.pdf]


def test_build_with_sign_in_the_spec_writes_a_verifiable_attestation(tmp_path, mock_url, keys):
    private, public = keys
    spec = endpoint_spec(tmp_path, mock_url, f"sign: {{key: {private}}}\n")
    out = tmp_path / "out"
    result = run_cli("build", spec, "-o", out)
    assert result.returncode == 0, result.stderr
    assert "factsheet.intoto.jsonl" in result.stdout
    verified = run_cli("verify", out / "factsheet.json", "--pubkey", public)
    assert verified.returncode == 0, verified.stderr
    kid = key_id(load_public(public))
    text = "".join(p.extract_text() for p in pypdf.PdfReader(out / "factsheet.pdf").pages[:1]).replace(
        "\n", ""
    )
    digest = "sha256:" + hashlib.sha256((out / "factsheet.json").read_bytes()).hexdigest()
    assert kid in text and digest in text


def test_a_relative_spec_key_is_relative_to_the_spec_and_a_bad_key_fails_before_measuring(tmp_path, mock_url):
    (tmp_path / "keys").mkdir()
    (tmp_path / "keys" / "k.pem").write_text("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    spec = endpoint_spec(tmp_path, mock_url, "sign: {key: keys/k.pem}\n")
    out = tmp_path / "out"
    result = run_cli("build", spec, "-o", out)
    assert result.returncode == 2 and "k.pem" in result.stderr and not out.exists()
    result = run_cli("build", spec, "-o", out, "--sign-key", tmp_path / "missing.key")
    assert result.returncode == 2 and "missing.key" in result.stderr and not out.exists()
