"""`generate_keys`, `sign_factsheet` and `verify_factsheet`: the signed attestation of a factsheet
(`factsheet keygen`, `sign`, `verify`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from factsheet.api.results import Result
from factsheet.attest import attestation as attest
from factsheet.attest.attestation import generate
from factsheet.compliance.report import ComplianceReport
from factsheet.compliance.verdict import ComplianceVerdict
from factsheet.untrusted.limits import MAX_COMPLIANCE_REPORT_BYTES
from factsheet.untrusted.parsing import parse_json
from factsheet.untrusted.reading import read_given
from probes.core.digests import sha256_bytes
from probes.core.errors import CheckFailed, InputError, describe_validation_error


class KeyPair(Result):
    private: Path = Field(description="the Ed25519 private key (PEM, mode 0600)")
    public: Path = Field(description="the public key (PEM) a verifier trusts")
    key_id: str


def generate_keys(output: Path) -> KeyPair:
    """An Ed25519 key pair in the folder `output`."""
    private, public, kid = generate(Path(output))
    return KeyPair(private=private, public=public, key_id=kid, written=(private, public))


class SignResult(Result):
    attestation: Path = Field(description="<name>.intoto.jsonl beside the factsheet's JSON")
    results: Path | None = Field(
        None, description="<name>.results.intoto.jsonl: the Test Result and eval-result statements"
    )
    oms: Path | None = Field(None, description="<name>.model.sig: the OMS bundle of the served weights")
    key_id: str
    compliance: ComplianceVerdict | None = Field(
        None, description="the verdict carried in the predicate: the report's policies re-run on the sheet"
    )


def sign_factsheet(
    factsheet_json: Path,
    key: Path,
    compliance: Path | None = None,
    model_folder: Path | None = None,
    oms_key: Path | None = None,
) -> SignResult:
    """Sign the factsheet and the files beside it with the private key at `key`: an in-toto Statement in a
    DSSE envelope. `compliance`: the compliance.json `factsheet check` wrote; its policies are re-run on the
    sheet and the signature carries the verdict they give (a verdict JSON alone is bad input; a report the
    re-run contradicts, or of another factsheet, fails with `CheckFailed`).
    `model_folder` and `oms_key` (an EC P-256/P-384/P-521 key: model-signing's own-key method takes no
    Ed25519): the files the served engine reads from the folder signed as an OpenSSF Model Signing bundle,
    bound by the attestation. Records that no longer give the stated figures are refused (`CheckFailed`):
    nothing is signed, and the files of an earlier signing stay as they were."""
    private = attest.load_private(Path(key))
    report, report_sha256 = (None, None) if compliance is None else _report(Path(compliance))
    signed = attest.sign_factsheet(
        Path(factsheet_json),
        private,
        report,
        report_sha256,
        model_folder=model_folder,
        oms_key=oms_key,
    )
    kid = attest.key_id(private.public_key())
    written = tuple(p for p in (signed.results, signed.oms) if p is not None) + (signed.attestation,)
    return SignResult(
        attestation=signed.attestation,
        results=signed.results,
        oms=signed.oms,
        key_id=kid,
        compliance=signed.compliance,
        written=written,
    )


def _report(path: Path) -> tuple[ComplianceReport, str]:
    """The compliance report at `path` and its digest, read as hostile input (bounded, one line). A verdict
    alone (`{"policy": ..., "result": "PASSED"}`) is refused: nothing in it can be re-run."""
    try:
        raw = read_given(path, MAX_COMPLIANCE_REPORT_BYTES, "compliance report")
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from exc
    data = parse_json(raw, str(path))  # nesting and numbers bounded (exit 2, one line)
    if not (isinstance(data, dict) and data.get("kind") == "llm-factsheet-compliance"):
        raise InputError(
            f"{path}: not a compliance report: a verdict alone is never signed on faith (give the "
            "compliance.json of `factsheet check`, whose policies are re-run on the sheet)"
        )
    try:
        return ComplianceReport.model_validate(data), sha256_bytes(raw)
    except ValidationError as exc:
        raise InputError(f"{path}: not a compliance report: {describe_validation_error(exc)}") from None


class VerifyResult(Result):
    """A signature checked: who signed, which files, and the verdict it carries. `failure` says what does
    not match (an altered or missing file, another key, records that no longer give the figures)."""

    key_id: str | None = Field(None, description="the key that signed; None when no signature verified")
    subjects: tuple[str, ...] = Field((), description="the signed files, all matching their digests")
    compliance: ComplianceVerdict | None = Field(None, description="the signed compliance verdict, if any")
    notes: tuple[str, ...] = Field((), description="what else was checked (records, figures, compliance)")
    results: tuple[str, ...] = Field((), description="the results bundle's statements, each verified")

    @property
    def verified(self) -> bool:
        return self.failure is None


def verify_factsheet(
    factsheet_json: Path,
    pubkey: Path,
    attestation: Path | None = None,
    model_folder: Path | None = None,
    oms_pubkey: Path | None = None,
) -> VerifyResult:
    """Verify the signature under the public key at `pubkey` and every signed file's digest (default
    attestation: <name>.intoto.jsonl beside the JSON). A mismatch is the result's `failure` (exit 1);
    unreadable or malformed input raises `InputError`."""
    try:
        found = attest.verify_factsheet(
            Path(factsheet_json), Path(pubkey), attestation, model_folder, oms_pubkey
        )
    except CheckFailed as exc:
        return VerifyResult(failure=str(exc))
    return VerifyResult(
        key_id=found.key_id,
        subjects=tuple(found.subjects),
        compliance=_signed_verdict(found.predicate.get("compliance"), factsheet_json),
        notes=tuple(found.notes),
        results=tuple(found.results),
    )


def _signed_verdict(data: object, factsheet_json: Path) -> ComplianceVerdict | None:
    """The verdict in a verified predicate; a signed one of another shape is bad input, not a crash."""
    if not data:
        return None
    try:
        return ComplianceVerdict.model_validate(data)
    except ValidationError as exc:
        raise InputError(
            f"{factsheet_json}: the signed compliance verdict is malformed: {describe_validation_error(exc)}"
        ) from None
