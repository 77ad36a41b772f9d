"""`factsheet check`, `factsheet diff` and `factsheet policies` (registered by factsheet.cli)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from factsheet.cli_common import guarded

out = Console(soft_wrap=True)  # one finding = one line in a CI log
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
    from factsheet.compliance.gate import gate_failure, run_check

    report, written = run_check(
        factsheet_json, policy, output, junit=junit, allow_insufficient=allow_insufficient
    )
    _print_summary(report)
    for p in written:
        out.print(f"  {p}", highlight=False, markup=False)
    failure = gate_failure(report)
    if failure:
        from probes.core.errors import CheckFailed

        raise CheckFailed(failure)


def _print_summary(report) -> None:
    counts = ", ".join(f"{n} {o.replace('_', ' ')}" for o, n in report.counts.items() if n)
    out.print(f"compliance: {report.verdict.upper()} ({counts})", highlight=False, markup=False)
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
    from factsheet.compliance.diff import compare, parse_limits, write_diff
    from factsheet.compliance.policy import load_policy
    from factsheet.validate import load_factsheet
    from probes.core.errors import CheckFailed

    limits = {}
    for ref in policy or []:
        limits.update(parse_limits(load_policy(ref).max_regression, source=ref))
    limits.update(parse_limits(dict(_split(x) for x in max_regression or []), source="--max-regression"))
    a, b = load_factsheet(old), load_factsheet(new)
    result = compare(a, old, b, new, limits)
    written = write_diff(result, output or new.parent)
    out.print(result.markdown(), highlight=False, markup=False)
    for p in written:
        out.print(f"  {p}", highlight=False, markup=False)
    if result.verdict != "no_regression":  # a regression, or no figure the records let us compare
        raise CheckFailed(result.verdict_reason)


def _split(item: str) -> tuple[str, str]:
    from factsheet.compliance.diff import DiffError

    key, sep, value = item.partition("=")
    if not sep or not key or not value:
        raise DiffError(f"--max-regression {item!r}: expected METRIC=LIMIT, e.g. e2el_ms.p99=10%")
    return key.strip(), value.strip()


@guarded
def policies(
    name: Annotated[
        str | None, typer.Argument(help="a built-in profile: print its rules and parameters")
    ] = None,
) -> None:
    """List the built-in policy profiles (or show one)."""
    from factsheet.compliance.policy import PolicyError, load_policy, profile_names

    names = profile_names()
    if name is None:
        for n in names:
            p = load_policy(n)
            params = ", ".join(f"{a.name}={a.value}" for a in p.parameters) or "no parameters"
            out.print(
                f"{n}  {p.version}  {p.title}: {len(p.rules)} rules; {params}", highlight=False, markup=False
            )
        return
    if name not in names:
        raise PolicyError(f"{name}: no such built-in profile (profiles: {', '.join(names)})")
    p = load_policy(name)
    out.print(f"{p.id} {p.version}: {p.title}", highlight=False, markup=False)
    if p.description:
        out.print(p.description, highlight=False, markup=False)
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
