"""The one PEM loader (attest/keys.load_pem) behind the signing key and the OMS key: each bad key is one
KeyFileError naming its file (exit 2 at the CLI), never a traceback and never the key's bytes."""

from __future__ import annotations

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from factsheet.attest import oms
from factsheet.attest.keys import KeyFileError, generate, load_pem, load_private, load_public

pytestmark = pytest.mark.unit

ENC = serialization.Encoding.PEM
PKCS8 = serialization.PrivateFormat.PKCS8
SPKI = serialization.PublicFormat.SubjectPublicKeyInfo


def _write(tmp_path, name: str, data: bytes):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _one_line(exc: pytest.ExceptionInfo, path, *words: str) -> None:
    text = str(exc.value)
    assert len(text.splitlines()) == 1 and text.startswith(f"{path}: ")
    assert all(w in text for w in words), text
    assert "PRIVATE KEY" not in text


def test_generated_keys_load_through_the_one_loader(tmp_path):
    private, public, kid = generate(tmp_path)
    assert load_private(private).public_key().public_bytes(ENC, SPKI) == load_public(public).public_bytes(
        ENC, SPKI
    )
    assert isinstance(load_pem(private, "private key", private=True), Ed25519PrivateKey)


def test_an_encrypted_private_key_is_refused_naming_the_file(tmp_path):
    encrypted = Ed25519PrivateKey.generate().private_bytes(
        ENC, PKCS8, serialization.BestAvailableEncryption(b"secret")
    )
    path = _write(tmp_path, "enc.key", encrypted)
    for load in (load_private, oms.check_private):
        with pytest.raises(KeyFileError) as exc:
            load(path)
        _one_line(exc, path, "encrypted private keys are not supported")


def test_bytes_that_are_not_pem_name_the_file_and_what_was_expected(tmp_path):
    path = _write(
        tmp_path, "junk.pem", b"-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----\n"
    )
    cases = (
        (load_private, "not a PEM private key"),
        (load_public, "not a PEM public key"),
        (oms.check_private, "not a PEM OMS private key"),
        (oms.check_public, "not a PEM OMS public key"),
    )
    for load, words in cases:
        with pytest.raises(KeyFileError) as exc:
            load(path)
        _one_line(exc, path, words)


def test_a_key_of_another_kind_is_named(tmp_path):
    ed = Ed25519PrivateKey.generate()
    p192 = ec.generate_private_key(ec.SECP192R1()) if _has_p192() else None
    p256 = ec.generate_private_key(ec.SECP256R1())
    ed_private = _write(tmp_path, "ed.key", ed.private_bytes(ENC, PKCS8, serialization.NoEncryption()))
    ec_private = _write(tmp_path, "ec.key", p256.private_bytes(ENC, PKCS8, serialization.NoEncryption()))
    ec_public = _write(tmp_path, "ec.pub", p256.public_key().public_bytes(ENC, SPKI))
    with pytest.raises(KeyFileError) as exc:
        load_private(ec_private)
    _one_line(exc, ec_private, "not an Ed25519 private key")
    with pytest.raises(KeyFileError) as exc:
        load_public(ec_public)
    _one_line(exc, ec_public, "not an Ed25519 public key")
    with pytest.raises(KeyFileError) as exc:
        load_public(ec_private)  # a private key given as the public one
    _one_line(exc, ec_private, "not a PEM public key")
    with pytest.raises(KeyFileError) as exc:
        oms.check_private(ed_private)
    _one_line(exc, ed_private, "EC P-256", "Ed25519PrivateKey")
    oms.check_private(ec_private)
    oms.check_public(ec_public)
    if p192 is not None:
        small = _write(tmp_path, "p192.key", p192.private_bytes(ENC, PKCS8, serialization.NoEncryption()))
        with pytest.raises(KeyFileError) as exc:
            oms.check_private(small)
        _one_line(exc, small, "EC P-256", "secp192r1")


def _has_p192() -> bool:
    try:
        ec.generate_private_key(ec.SECP192R1())
    except Exception:  # an OpenSSL built without the curve
        return False
    return True
