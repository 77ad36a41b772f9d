"""`factsheet keygen`, `factsheet sign`, `factsheet verify` (registered in factsheet/cli/commands.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factsheet import api
from factsheet.cli.common import Terminal, guarded

out = Terminal()  # key ids and paths stay whole on one line


@guarded
def keygen(
    output: Annotated[Path, typer.Option("-o", "--output", help="folder for the key pair")],
) -> None:
    """Create an Ed25519 key pair: factsheet-signing.key (mode 0600) and factsheet-signing.pub."""
    keys = api.generate_keys(output)
    out.print(f"private key: {keys.private} (mode 0600; keep it secret)")
    out.print(f"public key:  {keys.public}")
    out.print(f"key id:      {keys.key_id}")


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
            help="compliance.json of factsheet check: its policies are re-run on the sheet, their verdict signed",
        ),
    ] = None,
    model_folder: Annotated[
        Path | None,
        typer.Option(
            "--model-folder", help="the served weights folder, to sign as an OMS bundle (<name>.model.sig)"
        ),
    ] = None,
    oms_key: Annotated[
        Path | None,
        typer.Option(
            "--oms-key", help="EC P-256/P-384/P-521 private key (PEM) for the OMS bundle (no Ed25519)"
        ),
    ] = None,
) -> None:
    """Sign the factsheet: an in-toto Statement over its files in a DSSE envelope (<name>.intoto.jsonl)."""
    signed = api.sign_factsheet(factsheet_json, key, compliance, model_folder, oms_key)
    if signed.oms is not None:
        out.print(f"OMS bundle written: {signed.oms}")
    if signed.results is not None:
        out.print(f"results bundle written: {signed.results}")
    out.print(f"attestation written: {signed.attestation} (key id {signed.key_id})")


@guarded
def verify(
    factsheet_json: Annotated[
        Path, typer.Argument(help="factsheet.json (its attestation and files beside it)")
    ],
    pubkey: Annotated[Path, typer.Option("--pubkey", help="Ed25519 public key (PEM) to trust")],
    attestation: Annotated[
        Path | None, typer.Option("--attestation", help="default: <name>.intoto.jsonl beside the JSON")
    ] = None,
    model_folder: Annotated[
        Path | None, typer.Option("--model-folder", help="the served weights folder the OMS bundle covers")
    ] = None,
    oms_pubkey: Annotated[
        Path | None, typer.Option("--oms-pubkey", help="EC public key (PEM) the OMS bundle is checked under")
    ] = None,
) -> None:
    """Verify the signature and every signed file's digest (exit 0 all match, 1 anything differs)."""
    result = api.verify_factsheet(factsheet_json, pubkey, attestation, model_folder, oms_pubkey)
    result.raise_for_status()
    out.print(f"{factsheet_json}: verified, signed by key {result.key_id}")
    out.print(f"  {len(result.subjects)} signed files match: {', '.join(result.subjects)}")
    if result.compliance:
        out.print(f"  compliance: {result.compliance.result} against {result.compliance.policy}")
    if result.results:
        out.print(f"  {len(result.results)} results statements verify: {', '.join(result.results)}")
    for note in result.notes:
        out.print(f"  {note}")


def register(app: typer.Typer) -> None:
    for fn in (keygen, sign, verify):
        app.command(fn.__name__)(fn)
