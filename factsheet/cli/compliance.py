"""`factsheet check`, `factsheet diff` and `factsheet policies` (registered by factsheet.cli.commands)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factsheet import api
from factsheet.cli.common import Terminal, guarded

out = Terminal()  # one finding = one line in a CI log
PolicyOpt = Annotated[
    list[str],
    typer.Option(
        "--policy", "-p", help="policy file or built-in profile name (repeatable; see `factsheet policies`)"
    ),
]


def register(app: typer.Typer) -> None:
    app.command()(check)
    app.command()(diff)
    app.command()(policies)


@guarded
def check(
    factsheet_json: Annotated[Path, typer.Argument(help="factsheet.json (its raw records beside it)")],
    policy: PolicyOpt,
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="folder for compliance.json/.html/.pdf (default: the factsheet's)"
        ),
    ] = None,
    junit: Annotated[
        Path | None, typer.Option("--junit", help="JUnit XML file (default: OUTPUT/compliance-junit.xml)")
    ] = None,
    allow_insufficient: Annotated[
        bool,
        typer.Option(
            "--allow-insufficient", help="insufficient evidence on an error rule warns instead of failing"
        ),
    ] = False,
) -> None:
    """Check a factsheet against policies: compliance report, JUnit XML, and exit 1 when the gate fails."""
    result = api.check_factsheet(
        factsheet_json, policy, output, junit=junit, allow_insufficient=allow_insufficient
    )
    _print_summary(result.report)
    for p in result.written:
        out.print(f"  {p}")
    result.raise_for_status()


def _print_summary(report) -> None:
    counts = ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in report.counts.items() if n)
    out.print(f"compliance: {report.verdict.upper()} ({counts})")
    for r in report.results:
        if r.outcome != "pass":
            mark = "✗" if r.gating else "·"
            out.print(
                f"  {mark} {r.policy}/{r.rule} ({r.severity}) {r.outcome}: {r.reason}",
                highlight=False,
                markup=False,  # a reason names paths like load.points[concurrency=4], not markup
            )


@guarded
def diff(
    old: Annotated[Path, typer.Argument(help="factsheet.json of the baseline (e.g. the last release)")],
    new: Annotated[Path, typer.Argument(help="factsheet.json of the candidate")],
    policy: PolicyOpt = None,
    max_regression: Annotated[
        list[str] | None,
        typer.Option(
            "--max-regression", help="METRIC=LIMIT, e.g. e2el_ms.p99=10% or pass@1=0.02 (repeatable)"
        ),
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="folder for diff.json/.md/.html")
    ] = None,
) -> None:
    """Regression gate between two builds: a change counts only when beyond noise (from raw records) and threshold."""
    result = api.diff_factsheets(
        old, new, policies=policy or [], max_regression=max_regression or [], output=output
    )
    out.print(result.report.markdown())
    for p in result.written:
        out.print(f"  {p}")
    result.raise_for_status()  # a regression, or no figure the records let us compare


@guarded
def policies(
    name: Annotated[
        str | None, typer.Argument(help="a built-in profile: print its rules and parameters")
    ] = None,
) -> None:
    """List the built-in policy profiles (or show one)."""
    profiles = api.policy_profiles(name).profiles
    if name is None:
        for n, p in profiles.items():
            params = ", ".join(f"{a.name}={a.value}" for a in p.parameters) or "no parameters"
            out.print(
                f"{n}  {p.version}  {p.title}: {len(p.rules)} rules; {params}",
                highlight=False,
                markup=False,
            )
        return
    _print_policy(profiles[name])


def _print_policy(p) -> None:
    out.print(f"{p.id} {p.version}: {p.title}")
    if p.description:
        out.print(p.description)
    for a in p.parameters:
        out.print(
            f"  parameter {a.name} = {a.value} {a.unit or ''} — {a.description}",
            highlight=False,
            markup=False,
        )
    for r in p.rules:
        what = (
            r.field
            or r.check
            or (", ".join(r.documents) if r.documents else f"outside: {r.outside_factsheet}")
        )
        refs = "; ".join(f"{x.source} {x.item}" for x in r.references)
        req = f" {r.op} {r.threshold if r.threshold is not None else r.threshold_field or ''}" if r.op else ""
        out.print(
            f"  ({r.severity}) {r.id}: {what}{req}{f'  ({refs})' if refs else ''}",
            highlight=False,
            markup=False,
        )
