"""`generate_keys`, `sign_factsheet` and `verify_factsheet`: the signed attestation of a factsheet
(`factsheet keygen`, `sign`, `verify`)."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, ValidationError

from factsheet.api.results import Result
from factsheet.attest import attestation as attest
from factsheet.attest.attestation import generate
from factsheet.compliance.verdict import ComplianceVerdict, verdict_of_report
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
    compliance: ComplianceVerdict | None = Field(None, description="the verdict carried in the predicate")


def sign_factsheet(
    factsheet_json: Path,
    key: Path,
    compliance: Path | None = None,
    model_folder: Path | None = None,
    oms_key: Path | None = None,
) -> SignResult:
    """Sign the factsheet and the files beside it with the private key at `key`: an in-toto Statement in a
    DSSE envelope. `compliance`: a compliance.json (or a verdict JSON) whose verdict the signature carries.
    `model_folder` and `oms_key` (an EC P-256/P-384/P-521 key: model-signing's own-key method takes no
    Ed25519): the served weights signed as an OpenSSF Model Signing bundle, bound by the attestation.
    Records that no longer give the stated figures are refused (`CheckFailed`): nothing is signed."""
    private = attest.load_private(Path(key))
    verdict, report = (None, None) if compliance is None else _verdict(Path(compliance))
    path = attest.sign_factsheet(
        Path(factsheet_json), private, verdict, report=report, model_folder=model_folder, oms_key=oms_key
    )
    kid = attest.key_id(private.public_key())
    results = attest.results_path(Path(factsheet_json))
    oms = attest.oms.oms_path(Path(factsheet_json)) if model_folder is not None else None
    written = tuple(p for p in (results, oms) if p is not None and p.exists()) + (path,)
    return SignResult(
        attestation=path,
        results=results if results.exists() else None,
        oms=oms,
        key_id=kid,
        compliance=verdict,
        written=written,
    )


def _verdict(path: Path) -> tuple[ComplianceVerdict, dict | None]:
    """The verdict of a compliance report or verdict JSON, read as hostile input (bounded, one line), and
    the report itself when it is one (its rules' figures go into the Test Result)."""
    try:
        raw = read_given(path, MAX_COMPLIANCE_REPORT_BYTES, "compliance report")
        data = parse_json(raw, str(path))  # nesting and numbers bounded (exit 2, one line)
        is_report = isinstance(data, dict) and data.get("kind") == "llm-factsheet-compliance"
        verdict = verdict_of_report(data) if is_report else ComplianceVerdict.model_validate(data)
        return verdict.model_copy(update={"report_sha256": sha256_bytes(raw)}), data if is_report else None
    except OSError as exc:
        raise InputError(f"{path}: cannot read: {exc.strerror}") from exc
    except InputError:
        raise
    except (ValueError, AttributeError, TypeError) as exc:
        detail = describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
        raise InputError(f"{path}: not a compliance report or verdict: {detail}") from exc


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
