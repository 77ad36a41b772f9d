"""`factsheet eval humaneval`: judge completions produced elsewhere, with the build's sandbox and verdicts."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from factsheet import api
from factsheet.cli.common import Terminal, data, guarded

eval_app = typer.Typer(no_args_is_help=True)
out = Terminal()


@eval_app.command("humaneval")
@guarded
def humaneval(
    samples: Annotated[
        Path, typer.Option("--samples", help="EvalPlus samples JSONL (task_id + completion|solution)")
    ],
    output: Annotated[Path, typer.Option("-o", "--output", help="folder for eval_report.json and verdicts")],
    dataset: Annotated[str | None, typer.Option("--dataset", help="HumanEval+ .jsonl(.gz) path")] = None,
    concurrency: Annotated[int, typer.Option(help="sandboxed processes at once")] = 2,
) -> None:
    """Per-sample base/plus verdicts with the failure cause, and pass@k."""
    result = api.evaluate_humaneval(samples, output, dataset=dataset, concurrency=concurrency)
    report = result.report
    table = Table(title=data(f"{report.dataset.name} — {len(report.per_sample)} samples"))
    table.add_column("tests")
    for k in report.pass_rates.base:
        table.add_column(k, justify="right")
    table.add_row("base", *(f"{v:.3f}" for v in report.pass_rates.base.values()))
    if report.pass_rates.plus is not None:
        table.add_row("base + plus", *(f"{v:.3f}" for v in report.pass_rates.plus.values()))
    out.print(table)
    out.print(f"isolation: {', '.join(report.isolation)}")
    for path in result.written:
        out.print(f"  {path}")
