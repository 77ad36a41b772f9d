"""`factsheet` command line. Exit codes: 0 success, 1 a failed check, 2 bad input or unusable target."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

try:  # newer typer vendors click; its usage errors are those classes
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover - typer that depends on click
    from click import exceptions as click_errors

from factsheet import api
from factsheet.cli import signals
from factsheet.cli.attest import register as register_attest
from factsheet.cli.catalogue import register as register_catalogue
from factsheet.cli.common import Terminal, err, guarded, one_line, state, styled
from factsheet.cli.compliance import register as register_compliance
from factsheet.cli.eval import eval_app
from factsheet.cli.export import register as register_export
from factsheet.cli.predictor import register as register_predictor
from factsheet.cli.probe import probe_app
from factsheet.cli.progress import bars
from factsheet.cli.publish import register as register_publish
from factsheet.document.stamp import tool_version
from probes.core.errors import InputError, describe_validation_error

out = Terminal()  # a path printed is one line, whatever its length (a log is copied from)
app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Measured, justified, verifiable system factsheets for LLM deployments.",
)


def _print_version(value: bool) -> None:
    if value:
        out.print(f"llm-factsheet {tool_version()}")
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
    budget: Annotated[
        float | None,
        typer.Option("--budget", help="time budget in seconds (wins over the spec's load.budget_s)"),
    ] = None,
) -> None:
    """Measure a deployment and write factsheet.json, factsheet.html and factsheet.pdf."""
    with bars(err) as bar:
        log = lambda m: err.print(m)  # noqa: E731
        result = api.build_factsheet(
            spec, output, resume=resume, overwrite=overwrite, sign_key=sign_key, log=log, bars=bar,
            budget_s=budget,
        )  # fmt: skip
    out.print("factsheet written:")
    for p in result.written:
        out.print(f"  {p}")
    for line in result.publication.lines() if result.publication else []:
        out.print(line)
    result.raise_for_status()  # exit 1 when the gate fails (2: bad input found late); the files stay


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
    result = api.validate_factsheet(file, explain=explain)
    result.raise_for_status()  # records or figures that do not match: exit 1, nothing printed before
    out.print(f"{file}: valid {result.kind}")
    for note in result.notes:
        out.print(f"  {note}")
    for line in result.explanation:
        out.print(line)


@app.command()
@guarded
def render(
    factsheet_json: Annotated[Path, typer.Argument(help="factsheet.json")],
    output: Annotated[Path | None, typer.Option("-o", "--output", help="output folder")] = None,
) -> None:
    """Render a factsheet JSON to HTML and PDF."""
    for p in api.render_factsheet(factsheet_json, output).written:
        out.print(f"  {p}")


@app.command()
@guarded
def schema(
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="write the schemas into this folder")
    ] = None,
) -> None:
    """Print (or write) the JSON Schemas of the build spec and the factsheet."""
    # deferred: the schemas load every document model and the build spec (~0.8 s); --help loads neither
    from factsheet.api.json_schemas import json_schemas, write_schemas

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
    serving: Annotated[
        str | None,
        typer.Option(
            help="a serving model with a real capacity, by profile name (probes/targets/serving_model.py)"
        ),
    ] = None,
) -> None:
    """Serve an OpenAI-compatible streaming API with known timing on 127.0.0.1 (to calibrate clients)."""
    # deferred: aiohttp and the mock server (~0.1 s) serve only this command
    from probes.targets.mock_server import MockServerConfig, serve_forever
    from probes.targets.serving_model import PROFILES

    if serving is not None and serving not in PROFILES:
        raise InputError(f"--serving: no profile {serving!r}; one of {', '.join(sorted(PROFILES))}")
    try:
        cfg = MockServerConfig(
            model=model, ttft_ms=ttft_ms, itl_ms=itl_ms, slots=slots, fail_every=fail_every,
            drop_every=drop_every, serving=PROFILES[serving] if serving else None, metrics=serving is not None,
        )  # fmt: skip
    except ValidationError as exc:
        raise InputError(describe_validation_error(exc)) from None
    err.print(f"mock server on http://127.0.0.1:{port} ({cfg.model_dump_json()})")
    serve_forever(cfg, port=port)


def main() -> None:
    # SIGTERM unwinds like Ctrl-C (the target server is always stopped), and any command stops within a
    # second with 143 / 130, nothing half-written: see factsheet/cli/signals.py.
    signals.install()
    try:
        code = app(standalone_mode=False)
    except click_errors.NoArgsIsHelpError as exc:
        exc.show()
        code = 2
    except click_errors.UsageError as exc:
        # click's usage box spans lines; a wrong flag is bad input like any other: one line, exit 2.
        err.print(styled("error:", "red", one_line(exc.format_message())))
        code = 2
    except typer.Abort:  # a stop signal outside a command (click turns KeyboardInterrupt into Abort)
        code = signals.stopped_code() or 130
    except KeyboardInterrupt as exc:  # one that arrived after click had let go
        code = signals.exit_code(exc)
    except SystemExit:  # a library's own stop handler ran instead of the tool's (ray.init: sys.exit(15))
        if signals.stopped_code() is None:
            raise
        code = signals.stopped_code()
    signals.finish(code if isinstance(code, int) else 0)
