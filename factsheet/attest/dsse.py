"""DSSE envelopes (https://github.com/secure-systems-lab/dsse): PAE from securesystemslib, Ed25519
from cryptography, and a verifier that follows the protocol (keyid is only a hint, both base64
alphabets accepted, unknown payload types rejected)."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from securesystemslib.dsse import Envelope

from factsheet.attest.keys import key_id
from probes.core.errors import InputError

IN_TOTO_PAYLOAD_TYPE = "application/vnd.in-toto+json"


class MalformedEnvelope(InputError):
    """Not a DSSE envelope (bad JSON, missing field, bad base64)."""


def pae(payload_type: str, payload: bytes) -> bytes:
    """Pre-Authentication Encoding, the bytes a DSSE signature covers."""
    return Envelope(payload, payload_type, {}).pae()


def sign(payload: bytes, private: Ed25519PrivateKey, payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> dict:
    """A one-signature envelope as a JSON-ready dict (standard base64, as securesystemslib writes)."""
    sig = private.sign(pae(payload_type, payload))
    return {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": payload_type,
        "signatures": [{"keyid": key_id(private.public_key()), "sig": base64.b64encode(sig).decode()}],
    }


@dataclass(frozen=True)
class Parsed:
    payload: bytes
    payload_type: str
    signatures: list[tuple[str | None, bytes]]  # (keyid hint, signature)


def _b64(text: object, what: str) -> bytes:
    if not isinstance(text, str):
        raise MalformedEnvelope(f"{what} is not a base64 string")
    try:  # the protocol: verifiers accept the standard and the URL-safe alphabet
        alphabet = "-_" if ("-" in text or "_" in text) else "+/"
        return base64.b64decode(text, altchars=alphabet.encode(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise MalformedEnvelope(f"{what} is not valid base64 ({exc})") from exc


def parse(data: bytes | str | dict) -> Parsed:
    if not isinstance(data, dict):
        try:
            data = json.loads(data)
        except ValueError as exc:
            raise MalformedEnvelope(f"not JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise MalformedEnvelope("a DSSE envelope is a JSON object")
    missing = [k for k in ("payload", "payloadType", "signatures") if k not in data]
    if missing:
        raise MalformedEnvelope(f"missing {', '.join(missing)}")
    if not isinstance(data["payloadType"], str):
        raise MalformedEnvelope("payloadType is not a string")
    sigs = data["signatures"]
    if not isinstance(sigs, list) or not sigs:
        raise MalformedEnvelope("signatures must be a non-empty list")
    parsed = []
    for i, s in enumerate(sigs):
        if not isinstance(s, dict) or "sig" not in s:
            raise MalformedEnvelope(f"signatures[{i}] has no sig")
        keyid = s.get("keyid")
        if keyid is not None and not isinstance(keyid, str):
            raise MalformedEnvelope(f"signatures[{i}].keyid is not a string")
        parsed.append((keyid, _b64(s["sig"], f"signatures[{i}].sig")))
    return Parsed(_b64(data["payload"], "payload"), data["payloadType"], parsed)


def verify(envelope: Parsed, public: Ed25519PublicKey, payload_type: str = IN_TOTO_PAYLOAD_TYPE) -> bool:
    """True when some signature verifies under `public` over the PAE and the payload type is the one
    expected. The keyid is not trusted (the protocol: it MUST NOT decide security), so every
    signature is tried."""
    message = pae(envelope.payload_type, envelope.payload)
    for _, sig in envelope.signatures:
        try:
            public.verify(sig, message)
        except InvalidSignature:
            continue
        return envelope.payload_type == payload_type
    return False
