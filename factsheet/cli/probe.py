"""`factsheet probe load`: the load probe on its own, with the flags users know from `vllm bench serve`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from factsheet.api.probe import ProbeLoadArgs, parse_goodput, probe_load  # parse_goodput: vLLM's spelling
from factsheet.cli.common import Terminal, data, err, guarded, styled
from factsheet.cli.progress import bars
from probes.core.measurement import MISSING, NotMeasured, shown
from probes.load.metrics import LATENCY_METRICS, LoadMetrics
from probes.load.runner import PointResult
from probes.load.turns import turn_summary
from probes.server_view import DEFAULT_INTERVAL_S

__all__ = ["parse_goodput", "probe_app"]

probe_app = typer.Typer(help="Run one probe on its own, outside a factsheet build.", no_args_is_help=True)


@probe_app.callback()
def _probe() -> None:
    """Run one probe on its own, outside a factsheet build."""
    # A callback keeps `probe` a command group even with a single command in it.


def _fmt(x: float | None, digits: int = 2) -> str:
    return shown(x, f".{digits}f")


def _table(result: PointResult, percentiles: tuple[float, ...]) -> Table:
    m: LoadMetrics = result.metrics
    t = Table(title=data(f"load · {result.label} · {m.completed} ok / {m.failed} failed"))
    t.add_column("metric")
    t.add_column("n", justify="right")
    t.add_column("mean", justify="right")
    for q in percentiles:
        t.add_column(f"p{q:g}", justify="right")
    t.add_column("p99 95 % CI", justify="right")
    t.add_column("p99 samples", justify="right")
    for name in LATENCY_METRICS:
        d = getattr(m, name)
        ci = m.percentile_ci.get(f"{name}.p99")
        suff = m.sample_sufficiency[name]
        enough = f"{suff.n}/{suff.n_required}" + ("" if suff.sufficient else " insufficient")
        t.add_row(
            f"{name} (ms)",
            str(d.n),
            _fmt(d.mean),
            *(_fmt(d.p(q)) for q in percentiles),
            f"[{_fmt(ci.lower)}, {_fmt(ci.upper)}]" if ci else MISSING,
            enough,
        )
    return t


def _summary(result: PointResult) -> list[str | Text]:
    m = result.metrics
    lines: list[str | Text] = [
        f"request throughput {_fmt(m.request_throughput)} req/s · output {_fmt(m.output_throughput, 1)} tok/s"
        f" · window {_fmt(m.duration_s, 3)} s",
    ]
    if m.goodput is not None:
        ci = m.goodput_ci
        lines.append(
            f"goodput {_fmt(m.goodput)} req/s (95 % CI {_fmt(ci.lower if ci else None)}–"
            f"{_fmt(ci.upper if ci else None)}) · SLO attainment {_fmt(m.slo_attainment, 3)}"
        )
    if m.p99_check is not None:
        c = m.p99_check
        verdict = {True: "met", False: "NOT met", None: "unknown"}[c.met]
        lines.append(f"p99 check: {c.metric} p99 {_fmt(c.p99_ms)} ms ≤ {c.threshold_ms:g} ms: {verdict}")
    if m.errors:
        lines.append("errors: " + ", ".join(f"{k} {v}" for k, v in sorted(m.errors.items())))
    if result.arrivals is not None:
        a = result.arrivals
        lines.append(
            f"arrivals: target {a.target_rate:g}/s, scheduled {_fmt(a.scheduled_rate)}/s, achieved "
            f"{_fmt(a.achieved_rate)}/s, send lag p99 {_fmt(a.send_lag_ms.p(99), 3)} ms"
        )
        if a.write_lag_ms is not None:
            lines.append(
                f"by the last byte: achieved {_fmt(a.achieved_rate_written)}/s, write lag p99 "
                f"{_fmt(a.write_lag_ms.p(99), 3)} ms"
            )
        if a.client_bound:
            lines.append(styled("client-bound:", "bold red", "; ".join(a.client_bound_reasons)))
    if result.client is not None:
        c = result.client
        lines.append(
            f"client: {c.workers} worker{'s' if c.workers > 1 else ''} ({c.event_loop}), "
            f"event-loop lag p50 {_fmt(c.loop_lag_ms.p(50), 3)} / "
            f"p99 {_fmt(c.loop_lag_ms.p(99), 3)} ms, write delay p99 {_fmt(c.write_delay_ms.p(99), 3)} ms"
        )
        for o in c.clock_offsets or []:
            lines.append(
                f"worker {o.worker} on node {o.node[:12]}: clock offset {o.offset_ms:+.3f} ± {o.uncertainty_ms:.3f} ms"
            )
        if c.client_bound:
            lines.append(styled("client-bound:", "bold red", "; ".join(c.client_bound_reasons)))
    if result.aborted:
        lines.append(styled("aborted:", "bold red", result.aborted))
    return lines + turn_summary(result.turns) + server_view_lines(result)


def server_view_lines(result: PointResult) -> list[str | Text]:
    """The server's own figures and the saturation verdict, one line each."""
    view, sat = result.server_view, result.saturation
    lines: list[str | Text] = []
    if isinstance(view, NotMeasured):
        lines.append(f"server view: not measured: {view.reason}")
    elif view is not None:
        parts = [f"{view.scrapes} scrapes every {view.interval_s:g} s"]
        for name in ("kv_cache_usage", "running", "waiting"):
            g = getattr(view, name)
            if not isinstance(g, NotMeasured):
                parts.append(f"{name} mean {g.mean:.3g} max {g.max:.3g}")
        hit = view.prefix_cache_hit_rate
        if not isinstance(hit, NotMeasured) and hit.value is not None:
            parts.append(f"prefix-cache hit rate {hit.value:.2f}")
        over = view.client_overhead_ms
        if not isinstance(over, NotMeasured):
            parts.append(
                f"server TTFT p50 {over.server_ttft_p50_ms:.4g} ms (client − server {over.difference_ms:.3g} ms)"
            )
        lines.append("server view: " + " · ".join(parts))
    if sat is not None and sat.over_saturated:
        lines.append(
            styled(
                "over-saturated:", "bold red", "the waiting queue or TTFT grows without bound over the run"
            )
        )
    return lines


@probe_app.command("load", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@guarded
def load(
    ctx: typer.Context,
    base_url: Annotated[str, typer.Option("--base-url", help="server root, e.g. http://127.0.0.1:8000")],
    model: Annotated[str, typer.Option("--model", help="model name the server serves")],
    output: Annotated[
        Path | None,
        typer.Option(
            "-o", "--output", help="directory for result.json + records.jsonl (default: probe-load)"
        ),
    ] = None,
    endpoint: Annotated[str, typer.Option(help="completions or chat")] = "completions",
    concurrency: Annotated[int | None, typer.Option(help="closed loop: concurrent users")] = None,
    request_rate: Annotated[float | None, typer.Option(help="open loop: target req/s")] = None,
    burstiness: Annotated[float, typer.Option(help="gamma shape of gaps: 1 Poisson, inf constant")] = 1.0,
    max_concurrency: Annotated[int | None, typer.Option(help="open loop: cap on requests in flight")] = None,
    num_prompts: Annotated[
        int, typer.Option("--num-prompts", "--num-requests", help="requests to send")
    ] = 200,
    duration: Annotated[float | None, typer.Option(help="stop sending after this many seconds")] = None,
    input_len: Annotated[int, typer.Option(help="prompt tokens (mean)")] = 128,
    output_len: Annotated[int, typer.Option(help="max_tokens (mean)")] = 64,
    ignore_eos: Annotated[bool, typer.Option("--ignore-eos/--no-ignore-eos")] = True,
    goodput: Annotated[list[str] | None, typer.Option(help="SLO thresholds: ttft:MS tpot:MS e2el:MS")] = None,
    slo_p99_metric: Annotated[
        str, typer.Option(help="metric whose p99 is checked: ttft, tpot or e2el")
    ] = "e2el",
    metric_percentiles: Annotated[
        str, typer.Option(help="comma-separated percentiles to report")
    ] = "50,90,95,99",
    warmup: Annotated[int, typer.Option(help="first requests left out of the window")] = 0,
    cooldown: Annotated[int, typer.Option(help="last requests left out of the window")] = 0,
    dataset: Annotated[str, typer.Option(help="synthetic, humaneval or jsonl")] = "synthetic",
    dataset_path: Annotated[str | None, typer.Option(help="humaneval .jsonl.gz or user .jsonl")] = None,
    tokenizer: Annotated[str | None, typer.Option(help="tokenizer.json for exact synthetic lengths")] = None,
    workload: Annotated[
        str | None, typer.Option(help="workload profile: synthetic, chat-sessions, shared-prefix, ...")
    ] = None,
    workload_option: Annotated[
        list[str] | None, typer.Option(help="a profile parameter KEY=VALUE (repeatable)")
    ] = None,
    seed: int = 0,
    timeout: Annotated[float, typer.Option(help="per-operation request timeout, s")] = 300.0,
    api_key: Annotated[str | None, typer.Option(envvar="OPENAI_API_KEY", help="bearer token")] = None,
    scrape: Annotated[bool, typer.Option("--scrape/--no-scrape", help="scrape the server's /metrics")] = True,
    scrape_interval: Annotated[
        float, typer.Option(help="seconds between /metrics scrapes")
    ] = DEFAULT_INTERVAL_S,
    stop_when_saturated: Annotated[
        bool, typer.Option(help="stop sending once the scraped waiting queue grows without bound")
    ] = False,
    workers: Annotated[
        str, typer.Option(help="worker processes, one event loop each: N or auto (one per core)")
    ] = "1",
    executor: Annotated[
        str, typer.Option(help="processes (this host) or ray (actors across a cluster)")
    ] = "processes",
    ray_address: Annotated[str | None, typer.Option(help="executor ray: the cluster's host:port")] = None,
) -> None:
    """Measure a server under load like `vllm bench serve`, with arrival fidelity and sample sufficiency."""
    # vLLM spells several thresholds as separate words after one --goodput: they arrive as extra args.
    flags = {k: v for k, v in locals().items() if k in ProbeLoadArgs.model_fields and v is not None}
    flags["goodput"] = [*(goodput or []), *ctx.args]
    with bars(err) as bar:
        result = probe_load(bars=bar, **flags)
    console = Terminal()
    console.print(_table(result.point, result.percentiles))
    for line in _summary(result.point):
        console.print(line)
    console.print(f"wrote {result.result_json} and {result.records}")
