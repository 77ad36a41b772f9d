"""`factsheet keygen`, `factsheet sign`, `factsheet verify` (registered in factsheet/cli.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

from factsheet.cli_common import guarded

out = Console(soft_wrap=True)  # key ids and paths stay whole on one line


@guarded
def keygen(
    output: Annotated[Path, typer.Option("-o", "--output", help="folder for the key pair")],
) -> None:
    """Create an Ed25519 key pair: factsheet-signing.key (mode 0600) and factsheet-signing.pub."""
    from factsheet.attest.attestation import generate

    private, public, kid = generate(output)
    out.print(f"private key: {private} (mode 0600; keep it secret)")
    out.print(f"public key:  {public}")
    out.print(f"key id:      {kid}")


@guarded
def sign(
    factsheet_json: Annotated[
        Path, typer.Argument(help="factsheet.json (its HTML, PDF and records beside it)")
    ],
    key: Annotated[Path, typer.Option("--key", help="Ed25519 private key (PEM), from factsheet keygen")],
    compliance: Annotated[
        Path | None,
        typer.Option(
            "--compliance",
            help="compliance.json of a policy check (or a verdict JSON) to carry in the predicate",
        ),
    ] = None,
) -> None:
    """Sign the factsheet: an in-toto Statement over its files in a DSSE envelope (<name>.intoto.jsonl)."""
    from factsheet.attest.attestation import ComplianceVerdict, key_id, load_private, sign_factsheet
    from factsheet.attest.statement import verdict_of_report
    from factsheet.untrusted.limits import MAX_COMPLIANCE_REPORT_BYTES
    from factsheet.untrusted.parsing import parse_json
    from factsheet.untrusted.reading import read_given
    from probes.core.digests import sha256_bytes
    from probes.core.errors import InputError, describe_validation_error

    private = load_private(key)
    verdict = None
    if compliance is not None:
        try:
            raw = read_given(compliance, MAX_COMPLIANCE_REPORT_BYTES, "compliance report")
            data = parse_json(raw, str(compliance))  # nesting and numbers bounded (exit 2, one line)
            is_report = isinstance(data, dict) and data.get("kind") == "llm-factsheet-compliance"
            verdict = verdict_of_report(data) if is_report else ComplianceVerdict.model_validate(data)
            verdict = verdict.model_copy(update={"report_sha256": sha256_bytes(raw)})
        except OSError as exc:
            raise InputError(f"{compliance}: cannot read: {exc.strerror}") from exc
        except InputError:
            raise
        except (ValueError, AttributeError, TypeError) as exc:
            detail = describe_validation_error(exc) if isinstance(exc, ValidationError) else str(exc)
            raise InputError(f"{compliance}: not a compliance report or verdict: {detail}") from exc
    path = sign_factsheet(factsheet_json, private, verdict)
    out.print(f"attestation written: {path} (key id {key_id(private.public_key())})")


@guarded
def verify(
    factsheet_json: Annotated[
        Path, typer.Argument(help="factsheet.json (its attestation and files beside it)")
    ],
    pubkey: Annotated[Path, typer.Option("--pubkey", help="Ed25519 public key (PEM) to trust")],
    attestation: Annotated[
        Path | None, typer.Option("--attestation", help="default: <name>.intoto.jsonl beside the JSON")
    ] = None,
) -> None:
    """Verify the signature and every signed file's digest (exit 0 all match, 1 anything differs)."""
    from factsheet.attest.attestation import verify_factsheet

    result = verify_factsheet(factsheet_json, pubkey, attestation)
    out.print(f"{factsheet_json}: verified, signed by key {result.key_id}")
    out.print(f"  {len(result.subjects)} signed files match: {', '.join(result.subjects)}")
    verdict = result.predicate.get("compliance")
    if verdict:
        out.print(f"  compliance: {verdict.get('result')} against {verdict.get('policy')}")
    for note in result.notes:
        out.print(f"  {note}")


def register(app: typer.Typer) -> None:
    for fn in (keygen, sign, verify):
        app.command(fn.__name__)(fn)
