"""The DSSE encoding and verifier against the DSSE project's published test vectors."""

from __future__ import annotations

import base64

import pytest
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

from factsheet.attest import dsse


def test_pae_matches_the_protocol_example_and_its_published_signature():
    # protocol.md, "Test Vectors": ECDSA P-256 / SHA-256 over the PAE, signature as raw r || s.
    message = dsse.pae("http://example.com/HelloWorld", b"hello world")
    assert message == b"DSSEv1 29 http://example.com/HelloWorld 11 hello world"
    x = 46950820868899156662930047687818585632848591499744589407958293238635476079160
    y = 5640078356564379163099075877009565129882514886557779369047442380624545832820
    public = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
    raw = base64.b64decode(
        "A3JqsQGtVsJ2O2xqrI5IcnXip5GToJ3F+FnZ+O88SjtR6rDAajabZKciJTfUiHqJPcIAriEGAHTVeCUjW2JIZA=="
    )
    der = encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big"))
    public.verify(der, message, ec.ECDSA(hashes.SHA256()))  # raises if one byte of the PAE differs
    with pytest.raises(Exception):  # noqa: B017 - any verification failure
        public.verify(der, message.replace(b"29", b"30"), ec.ECDSA(hashes.SHA256()))


# testvectors/vectors.json of the DSSE repository: key A is RFC 8032's test key 1.
KEY_A = Ed25519PrivateKey.from_private_bytes(
    bytes.fromhex("9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60")
)
STATEMENT_B64 = "eyJfdHlwZSI6Imh0dHBzOi8vaW4tdG90by5pby9TdGF0ZW1lbnQvdjEifQ=="
SIG_A = "2WAfaHm5jluo0w+0rk8uVkluELJYWjSmU9x7EUzx+AyteDGJ4/nqyJXfmAUVFIAoQafWm7AxBZNw5M9ixNHiCA=="
TOTO = "application/vnd.in-toto+json"
VECTORS = [
    # id, payload, payloadType, sig, expected PAE (hex), accepted
    ("single-signature", STATEMENT_B64, TOTO, SIG_A,
     "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203433207b225f74797065223a2268747470733a2f2f696e2d746f746f2e696f2f53746174656d656e742f7631227d",
     True),
    ("url-safe-base64", "-_-_Pj8=", TOTO,
     "P-_KHICeR7tI6S_YyejJTRtrXhcQyQ2LYPaL8h90KjC9qN8HU_svOQ6TuDOT1HIrsGW886DbWNWcCmX5twLrAw==",
     "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203520fbffbf3e3f", True),
    ("payload-type-swapped", STATEMENT_B64, "application/vnd.example.other+json", SIG_A, None, False),
    ("empty-payload", "", TOTO,
     "gSggCAaTLTYyRH6FIDBem6meyIynsYy8RTHVzwx9tnTb7Bg/1jMWnuVgI/gffqmbsC2VX5/jHfkkDqsj7CDbDg==",
     "445353457631203238206170706c69636174696f6e2f766e642e696e2d746f746f2b6a736f6e203020", True),
]  # fmt: skip


@pytest.mark.parametrize(("vid", "payload", "ptype", "sig", "pae_hex", "accept"), VECTORS, ids=lambda v: v)
def test_published_ed25519_vectors(vid, payload, ptype, sig, pae_hex, accept):
    env = dsse.parse({"payload": payload, "payloadType": ptype, "signatures": [{"keyid": "A", "sig": sig}]})
    if pae_hex is not None:
        assert dsse.pae(env.payload_type, env.payload).hex() == pae_hex
    assert dsse.verify(env, KEY_A.public_key()) is accept


def test_keyid_is_only_a_hint():
    # Our own key ids never match "A": the verifier must still try the signature (the protocol says a
    # keyid MUST NOT decide security), and a wrong keyid must not make a valid signature fail.
    env = dsse.parse({"payload": STATEMENT_B64, "payloadType": TOTO, "signatures": [{"sig": SIG_A}]})
    assert dsse.verify(env, KEY_A.public_key())


def test_sign_then_verify_and_reject_another_key():
    env = dsse.parse(dsse.sign(b'{"x": 1}', KEY_A))
    assert dsse.verify(env, KEY_A.public_key())
    assert not dsse.verify(env, Ed25519PrivateKey.generate().public_key())


@pytest.mark.parametrize(
    "bad",
    [b"not json", b"[]", b'{"payload": "", "payloadType": "t"}', b'{"payload": "%%", "payloadType": "t", "signatures": [{"sig": ""}]}',
     b'{"payload": "", "payloadType": "t", "signatures": []}'],
)  # fmt: skip
def test_malformed_envelopes_are_input_errors(bad):
    with pytest.raises(dsse.MalformedEnvelope):
        dsse.parse(bad)
