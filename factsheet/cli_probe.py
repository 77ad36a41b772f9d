"""`factsheet probe load`: the load probe on its own, with the flags users know from `vllm bench serve`."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.table import Table

from factsheet.cli_common import check_output, err, guarded
from factsheet.outputs import PROBE_SCRAPES
from factsheet.progress import bars
from factsheet.provenance import tool_version
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError, describe_validation_error
from probes.core.files import write_atomic
from probes.core.measurement import NotMeasured
from probes.load.metrics import LATENCY_METRICS, LoadMetrics
from probes.load.point import SLO, LoadPoint
from probes.load.records import records_jsonl
from probes.load.runner import PointResult, run_point
from probes.load.workload import WorkloadConfig, build_workload
from probes.server_view import DEFAULT_INTERVAL_S, ServerViewConfig, scrapes_jsonl

probe_app = typer.Typer(help="Run one probe on its own, outside a factsheet build.", no_args_is_help=True)


@probe_app.callback()
def _probe() -> None:
    """Run one probe on its own, outside a factsheet build."""
    # A callback keeps `probe` a command group even with a single command in it.


_GOODPUT = re.compile(r"^(ttft|tpot|e2el):(\d+(?:\.\d+)?)$")


class ProbeInputError(InputError):
    """A flag value the load probe cannot use; the message names the flag."""


def parse_goodput(items: list[str]) -> dict[str, float]:
    """vLLM's `--goodput ttft:MS tpot:MS e2el:MS` (space- or comma-separated) → SLO thresholds."""
    out: dict[str, float] = {}
    for item in (x for raw in items for x in re.split(r"[,\s]+", raw) if x):
        m = _GOODPUT.match(item)
        if not m:
            raise ProbeInputError(f"--goodput: '{item}' is not ttft:MS, tpot:MS or e2el:MS")
        out[f"{m[1]}_ms"] = float(m[2])
    return out


def parse_percentiles(text: str) -> tuple[float, ...]:
    try:
        qs = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise ProbeInputError(
            f"--metric-percentiles: '{text}' is not a comma-separated list of numbers"
        ) from None
    if not qs or any(not 0 < q < 100 for q in qs):
        raise ProbeInputError(f"--metric-percentiles: each must be in (0, 100), got '{text}'")
    return qs


def _fmt(x: float | None, digits: int = 2) -> str:
    return "—" if x is None else f"{x:.{digits}f}"


def _table(result: PointResult, percentiles: tuple[float, ...]) -> Table:
    m: LoadMetrics = result.metrics
    t = Table(title=f"load · {result.label} · {m.completed} ok / {m.failed} failed")
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
            f"[{_fmt(ci.lower)}, {_fmt(ci.upper)}]" if ci else "—",
            enough,
        )
    return t


def _summary(result: PointResult) -> list[str]:
    m = result.metrics
    lines = [
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
        if a.client_bound:
            lines.append("[bold red]client-bound[/]: " + "; ".join(a.client_bound_reasons))
    if result.aborted:
        lines.append(f"[bold red]aborted[/]: {result.aborted}")
    lines += server_view_lines(result)
    return lines


def _write_scrapes(output: Path, result: PointResult, doc: dict) -> None:
    """The run's /metrics scrapes beside its records, named with their digest in result.json."""
    if isinstance(result.scrapes, list):
        scrapes = scrapes_jsonl(result.scrapes)
        doc["scrapes_file"], doc["scrapes_digest"] = PROBE_SCRAPES, sha256_bytes(scrapes)
        write_atomic(output / PROBE_SCRAPES, scrapes)


def server_view_lines(result: PointResult) -> list[str]:
    """The server's own figures and the saturation verdict, one line each."""
    view, sat = result.server_view, result.saturation
    lines = []
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
            "[bold red]over-saturated[/]: the waiting queue or TTFT grows without bound over the run"
        )
    return lines


def _point(**kw) -> LoadPoint:
    try:
        return LoadPoint.at(**kw)
    except ValidationError as exc:
        raise ProbeInputError(describe_validation_error(exc)) from None


@probe_app.command("load", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@guarded
def load(
    ctx: typer.Context,
    base_url: Annotated[str, typer.Option("--base-url", help="server root, e.g. http://127.0.0.1:8000")],
    model: Annotated[str, typer.Option("--model", help="model name the server serves")],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="directory for result.json + records.jsonl")
    ] = Path("probe-load"),
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
) -> None:
    """Measure a server under load like `vllm bench serve`, with arrival fidelity and sample sufficiency."""
    console = Console()
    try:
        # vLLM spells several thresholds as separate words after one --goodput: accept them here.
        thresholds = parse_goodput([*(goodput or []), *ctx.args])
        percentiles = parse_percentiles(metric_percentiles)
        if (concurrency is None) == (request_rate is None):
            raise ProbeInputError(
                "give exactly one of --concurrency (closed loop) or --request-rate (open loop)"
            )
        if slo_p99_metric not in ("ttft", "tpot", "e2el"):
            raise ProbeInputError(f"--slo-p99-metric: '{slo_p99_metric}' is not ttft, tpot or e2el")
        slo = SLO(**thresholds, p99_metric=f"{slo_p99_metric}_ms")
        point = _point(
            concurrency=concurrency,
            rate=request_rate,
            burstiness=burstiness,
            max_concurrency=max_concurrency,
            num_requests=num_prompts,
            duration_s=duration,
            warmup_requests=warmup,
            cooldown_requests=cooldown,
            input_len=input_len,
            output_len=output_len,
            endpoint=endpoint,
            ignore_eos=ignore_eos,
            seed=seed,
            request_timeout_s=timeout,
        )
        spec = WorkloadConfig(
            source=dataset, input_len=input_len, output_len=output_len, path=dataset_path,
            tokenizer_path=tokenizer, seed=seed,
        )  # fmt: skip
        built = build_workload(spec, num_prompts)
        view = ServerViewConfig(
            scrape=scrape, interval_s=scrape_interval, stop_when_saturated=stop_when_saturated
        )
        check_output(output)
    except ValidationError as exc:
        raise ProbeInputError(describe_validation_error(exc)) from None

    with bars(err) as bar:
        result = asyncio.run(
            run_point(
                base_url.rstrip("/"), model, point, slo, api_key=api_key, prompts=built.prompts,
                workload=built.workload, output_lens=built.output_lens, percentiles=percentiles,
                progress=bar(point.label), server_view=view,
            )
        )  # fmt: skip
    if result.metrics.completed == 0 and result.metrics.errors.get("connect"):
        raise ProbeInputError(
            f"--base-url: cannot reach {base_url} ({result.aborted or 'connection failed'})"
        )

    records = records_jsonl(result.records)
    doc = json.loads(result.model_dump_json())
    doc["records_file"] = "records.jsonl"
    doc["records_digest"] = sha256_bytes(records)
    doc["tool_version"] = tool_version()  # from the installed package's metadata
    _write_scrapes(output, result, doc)
    write_atomic(output / "records.jsonl", records)
    write_atomic(output / "result.json", json.dumps(doc, indent=2).encode())
    console.print(_table(result, percentiles))
    for line in _summary(result):
        console.print(line)
    console.print(f"wrote {output / 'result.json'} and {output / 'records.jsonl'}")
