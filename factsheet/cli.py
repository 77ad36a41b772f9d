"""`factsheet` command line. Exit codes: 0 success, 1 a failed check, 2 bad input or unusable target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console

try:  # newer typer vendors click; its usage errors are those classes
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - typer that depends on click
    from click import exceptions as click_errors

from factsheet import signals
from factsheet.attest.cli import register as register_attest
from factsheet.catalogue.cli import register as register_catalogue
from factsheet.cli_common import err, guarded, one_line, state
from factsheet.cli_eval import eval_app
from factsheet.cli_predictor import register as register_predictor
from factsheet.cli_probe import probe_app
from factsheet.compliance.cli import register as register_compliance
from factsheet.export.cli import register as register_export
from factsheet.outputs import FACTSHEET_JSON
from factsheet.progress import bars
from factsheet.publish.cli import register as register_publish

out = Console()
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measured, justified, verifiable system factsheets for LLM deployments.",
)


def _print_version(value: bool) -> None:
    if value:
        from factsheet.provenance import tool_version

        out.print(f"llm-factsheet {tool_version()}", highlight=False)
        raise typer.Exit()


@app.callback()
def _main(
    debug: Annotated[bool, typer.Option("--debug", help="show tracebacks")] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="print the tool version"),
    ] = False,
) -> None:
    state["debug"] = debug


@app.command()
@guarded
def build(
    spec: Annotated[Path, typer.Argument(help="build spec (model.yaml)")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="output folder")] = None,
    resume: Annotated[
        bool,
        typer.Option("--resume", help="reuse the measurements an earlier build left in the output folder"),
    ] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="replace an earlier build in the output folder")
    ] = False,
    sign_key: Annotated[
        Path | None, typer.Option("--sign-key", help="sign the outputs with this key")
    ] = None,
) -> None:
    """Measure a deployment and write factsheet.json, factsheet.html and factsheet.pdf."""
    from factsheet.attest.attestation import build_signer, key_id, sign_factsheet
    from factsheet.build import build as run_build
    from factsheet.compliance.gate import BuildGate
    from factsheet.render import render_all
    from factsheet.spec import load_spec
    from probes.core.errors import InputError

    if resume and overwrite:
        raise InputError("--resume and --overwrite: choose one (reuse the earlier build, or replace it)")
    parsed, raw = load_spec(spec)
    signer = build_signer(parsed.sign, spec, sign_key)
    gate = BuildGate(parsed, spec)  # policies checked before anything is measured
    if parsed.publish is not None:  # MLflow installed and answering, before anything is measured
        from factsheet.publish.mlflow import check_reachable

        check_reachable(parsed.publish)
    out_dir = output or Path(parsed.output_dir or f"out/{parsed.name}")
    with bars(err) as bar:
        log = lambda m: err.print(m, highlight=False)  # noqa: E731
        sheet = run_build(parsed, spec, raw, out_dir, log=log, bar=bar, resume=resume, overwrite=overwrite)
    sheet = gate.attach(sheet, out_dir)
    paths = render_all(sheet, out_dir, signing_key_id=signer and key_id(signer.public_key()))
    paths += gate.write(out_dir)
    if signer is not None:
        paths.append(sign_factsheet(out_dir / FACTSHEET_JSON, signer, gate.verdict(), sheet=sheet))
    out.print("factsheet written:")
    for p in paths:
        out.print(f"  {p}")
    if parsed.publish is not None:  # whatever the gate's verdict: the run and version carry it as a tag
        from factsheet.publish.mlflow import publish_factsheet

        for line in publish_factsheet(out_dir / FACTSHEET_JSON, parsed.publish).lines():
            out.print(line, highlight=False)
    gate.raise_if_failed()  # exit 1 when the gate fails; the files above are written either way


@app.command()
@guarded
def validate(
    file: Annotated[Path, typer.Argument(help="a build spec (.yaml) or a factsheet (.json)")],
    explain: Annotated[
        bool,
        typer.Option("--explain", help="also list which fields are re-derived, re-checked, or attested only"),
    ] = False,
) -> None:
    """Check a build spec or a factsheet (schema, raw records' digests and bindings, every figure they
    determine)."""
    from factsheet.validate import validate_file

    kind, notes = validate_file(file)
    out.print(f"{file}: valid {kind}")
    for note in notes:
        out.print(f"  {note}")
    if explain:
        from factsheet.rederive.coverage import explain as classes

        for line in classes():
            out.print(line, markup=False, highlight=False)


@app.command()
@guarded
def render(
    factsheet_json: Annotated[Path, typer.Argument(help="factsheet.json")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="output folder")] = None,
) -> None:
    """Render a factsheet JSON to HTML and PDF."""
    from factsheet.render import render_all
    from factsheet.validate import load_factsheet

    sheet = load_factsheet(factsheet_json)
    for p in render_all(sheet, output or factsheet_json.parent, write_json=output is not None):
        out.print(f"  {p}")


@app.command()
@guarded
def schema(
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="write the schemas into this folder")
    ] = None,
) -> None:
    """Print (or write) the JSON Schemas of the build spec and the factsheet."""
    from factsheet.json_schemas import json_schemas, write_schemas

    if output is None:
        out.print_json(json.dumps(json_schemas()))
    else:
        for p in write_schemas(output):
            out.print(str(p))


app.add_typer(probe_app, name="probe", help="Run a probe on its own.")
app.add_typer(eval_app, name="eval", help="Evaluate completions produced elsewhere.")
register_attest(app)  # keygen, sign, verify
register_export(app)  # export
register_compliance(app)  # check, diff, policies
register_predictor(app)
register_publish(app)  # publish
register_catalogue(app)  # catalogue


@app.command("mock-server")
@guarded
def mock_server(
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    ttft_ms: float = 100.0,
    itl_ms: float = 10.0,
    slots: int = 1024,
    fail_every: int = 0,
    drop_every: int = 0,
    model: str = "mock-model",
) -> None:
    """Serve an OpenAI-compatible streaming API with known timing on 127.0.0.1 (to calibrate clients)."""
    from probes.core.errors import InputError, describe_validation_error
    from probes.targets.mock_server import MockServerConfig, serve_forever

    try:
        cfg = MockServerConfig(
            model=model, ttft_ms=ttft_ms, itl_ms=itl_ms, slots=slots, fail_every=fail_every,
            drop_every=drop_every,
        )  # fmt: skip
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc)) from None
    err.print(f"mock server on http://127.0.0.1:{port} ({cfg.model_dump_json()})")
    serve_forever(cfg, port=port)


def main() -> None:
    # SIGTERM unwinds like Ctrl-C (the target server is always stopped), and any command stops within a
    # second with 143 / 130, nothing half-written: see factsheet/signals.py.
    signals.install()
    try:
        code = app(standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:
        exc.show()
        code = 2
    except click_errors.UsageError as exc:
        # click's usage box spans lines; a wrong flag is bad input like any other: one line, exit 2.
        err.print(f"[red]error:[/red] {one_line(exc.format_message())}", highlight=False)
        code = 2
    except typer.Abort:  # a stop signal outside a command (click turns KeyboardInterrupt into Abort)
        code = signals.stopped_code() or 130
    except KeyboardInterrupt as exc:  # one that arrived after click had let go
        code = signals.exit_code(exc)
    signals.finish(code if isinstance(code, int) else 0)
