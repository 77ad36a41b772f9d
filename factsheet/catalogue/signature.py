"""A build's signature status for the index, decided with the project's own verifier
(`factsheet.attest.attestation.verify_factsheet`) under the public keys the reviewer trusts.

verified              a signature verifies under a given key and every signed file matches its digest (and
                      the raw records still give the figures: what `factsheet verify` checks)
unsigned              no attestation beside the factsheet
signed, key unknown   an attestation whose signature verifies under none of the given keys and names none of
                      them, while the files match the digests it states (nothing to say against it, nothing for it)
signature failed      the signature or a signed file does not check, or the attestation is unreadable: shown,
                      never an error, since a tampered build is exactly what a reviewer must see
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from pydantic import Field

from factsheet.attest import dsse
from factsheet.attest.attestation import key_id, load_public, verify_envelopes
from factsheet.attest.statement import file_sha256
from factsheet.document.files import ATTESTATION
from factsheet.untrusted.limits import MAX_ATTESTATION_BYTES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import read_confined
from probes.core.errors import CheckFailed, InputError
from probes.core.measurement import Model

Status = Literal["verified", "unsigned", "signed, key unknown", "signature failed"]


class Signature(Model):
    status: Status
    key_id: str | None = Field(None, description="the key that verified, or the one the envelope names")
    detail: str = ""


@dataclass(frozen=True)
class TrustedKey:
    path: Path
    public: Ed25519PublicKey
    key_id: str


def load_keys(paths: list[Path]) -> list[TrustedKey]:
    """Every --pubkey, read before anything else (a bad key file is bad input: exit 2)."""
    out = []
    for p in paths:
        public = load_public(p)
        out.append(TrustedKey(Path(p), public, key_id(public)))
    return out


def signature_of(json_path: Path, keys: list[TrustedKey]) -> Signature:
    folder = json_path.parent
    try:  # confined to the factsheet's folder, symlinks refused, size checked before a byte is read
        data = read_confined(folder, ATTESTATION, MAX_ATTESTATION_BYTES, "attestation", no_symlinks=True)
    except FileNotFoundError:
        return Signature(status="unsigned", detail=f"no {ATTESTATION} beside the factsheet")
    except (OSError, InputError) as exc:  # nothing about where a link leads, or whether that exists
        why = exc.strerror if isinstance(exc, OSError) else _local(exc, folder)
        return Signature(status="signature failed", detail=f"{ATTESTATION} is not read: {why}")
    try:
        lines = [line for line in data.splitlines() if line.strip()]
        # nesting and numbers bounded before parsing (factsheet.untrusted): a deep line is unreadable, not a crash
        envelopes = [dsse.parse(parse_json(line, f"line {i}")) for i, line in enumerate(lines, 1)]
    except InputError as exc:
        return Signature(status="signature failed", detail=f"{ATTESTATION} is unreadable: {exc}")
    if not envelopes:
        return Signature(status="signature failed", detail=f"{ATTESTATION} is empty")
    trusted = next((k for k in keys for e in envelopes if dsse.verify(e, k.public)), None)
    if trusted is not None:
        try:
            verify_envelopes(json_path, trusted.public, envelopes, Path(ATTESTATION))
        except (CheckFailed, InputError) as exc:
            return Signature(status="signature failed", key_id=trusted.key_id, detail=_local(exc, folder))
        return Signature(status="verified", key_id=trusted.key_id, detail=f"signed by key {trusted.key_id}")
    hints = [kid for e in envelopes for kid, _ in e.signatures if kid]
    ours = {k.key_id for k in keys}
    named = next((h for h in hints if h in ours), None)
    if named is not None:
        return Signature(
            status="signature failed", key_id=named, detail=f"the signature does not verify under key {named}"
        )
    differs = _unverified_digest_mismatch(envelopes, json_path.parent)
    if differs:
        return Signature(
            status="signature failed",
            key_id=hints[0] if hints else None,
            detail=f"{differs} differs from the digest the attestation states (its key is not trusted here)",
        )
    return Signature(
        status="signed, key unknown",
        key_id=hints[0] if hints else None,
        detail="signed by a key none of the given --pubkey files holds",
    )


def _unverified_digest_mismatch(envelopes: list[dsse.Parsed], folder: Path) -> str | None:
    """The first file inside the folder whose sha256 differs from what an (untrusted) statement says: a
    claim that is false on its face needs no key to be refuted."""
    for e in envelopes:
        try:
            subjects = parse_json(e.payload, "payload").get("subject", [])
        except (ValueError, AttributeError):  # InputError is a ValueError
            return "the attestation's payload"
        for s in subjects if isinstance(subjects, list) else []:
            if not isinstance(s, dict):
                continue
            name, digest = s.get("name"), s.get("digest")
            want = digest.get("sha256") if isinstance(digest, dict) else None
            if not isinstance(name, str) or not _inside(name, folder):
                continue
            try:  # confined like verify's: a symlinked or missing subject is not the signed file
                if file_sha256(folder, name) != want:
                    return name
            except (OSError, InputError):
                return name
    return None


def _inside(name: str, folder: Path) -> bool:
    p = Path(name)
    return (
        bool(name)
        and not p.is_absolute()
        and ".." not in p.parts
        and (folder / p).resolve().is_relative_to(folder.resolve())
    )


def _local(exc: Exception, folder: Path) -> str:
    """A message without the machine's path to the factsheet's folder (the site shows it)."""
    return str(exc).replace(f"{folder.resolve()}/", "").replace(f"{folder}/", "")
