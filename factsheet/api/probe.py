"""`probe_load`: the load probe on its own (`factsheet probe load`), with the settings users know from
`vllm bench serve`, writing the point's result document and its raw records."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationError

from factsheet.api.results import Result
from factsheet.document.files import PROBE_LOAD_DIR, PROBE_RECORDS, PROBE_RESULT_JSON, PROBE_SCRAPES
from factsheet.document.stamp import tool_version
from probes.core.digests import sha256_bytes
from probes.core.errors import InputError, describe_validation_error
from probes.core.files import check_output, write_atomic
from probes.core.measurement import Model
from probes.core.progress import Bars, no_bars
from probes.load.point import SLO, LoadPoint
from probes.load.records import records_jsonl
from probes.load.runner import PointResult, run_point
from probes.load.workers import resolve_workers
from probes.load.workers.ray_fleet import check_address
from probes.load.workloads.flags import probe_workload
from probes.load.workloads.profiles import WorkloadProfile
from probes.load.workloads.workload import WorkloadConfig, build_workload
from probes.server_view import DEFAULT_INTERVAL_S, ServerViewSpec, scrapes_jsonl

_GOODPUT = re.compile(r"^(ttft|tpot|e2el):(\d+(?:\.\d+)?)$")


class ProbeInputError(InputError):
    """A setting the load probe cannot use; the message names the flag."""


class ProbeLoadArgs(Model):
    """The settings of one load point, named like `factsheet probe load`'s flags (and vLLM's)."""

    base_url: str = Field(description="server root, e.g. http://127.0.0.1:8000")
    model: str = Field(description="model name the server serves")
    output: Path = Field(Path(PROBE_LOAD_DIR), description="folder for the result and the raw records")
    endpoint: str = "completions"
    concurrency: int | None = Field(None, description="closed loop: concurrent users")
    request_rate: float | None = Field(None, description="open loop: target req/s")
    burstiness: float = 1.0
    max_concurrency: int | None = None
    num_prompts: int = 200
    duration: float | None = Field(None, description="stop sending after this many seconds")
    input_len: int = 128
    output_len: int = 64
    ignore_eos: bool = True
    goodput: list[str] = Field(default_factory=list, description="SLO thresholds as ttft:MS tpot:MS e2el:MS")
    slo_p99_metric: str = Field("e2el", description="metric whose p99 is checked: ttft, tpot or e2el")
    metric_percentiles: str | tuple[float, ...] = Field("50,90,95,99", description="percentiles reported")
    warmup: int = 0
    cooldown: int = 0
    dataset: str = "synthetic"
    dataset_path: str | None = None
    tokenizer: str | None = None
    workload: str | None = Field(
        None, description="workload profile: synthetic, chat-sessions, shared-prefix, ..."
    )
    workload_option: list[str] = Field(default_factory=list, description="profile parameters as KEY=VALUE")
    seed: int = 0
    scrape: bool = Field(True, description="scrape the server's /metrics while the point runs")
    scrape_interval: float = Field(DEFAULT_INTERVAL_S, description="seconds between /metrics scrapes")
    stop_when_saturated: bool = Field(
        False, description="stop once the scraped waiting queue grows without bound"
    )
    timeout: float = Field(300.0, description="per-operation request timeout, s")
    api_key: str | None = None
    workers: int | Literal["auto"] = Field(
        1,
        description="worker processes, one event loop each ('auto': one per core); at most the host's cores",
    )
    executor: Literal["processes", "ray"] = Field(
        "processes", description="workers as processes or Ray actors"
    )
    ray_address: str | None = Field(None, description="executor ray: the cluster's host:port")


class ProbeLoadResult(Result):
    """The measured point, and where its result document and raw records were written."""

    point: PointResult
    percentiles: tuple[float, ...] = Field(description="the percentiles reported, as asked")
    result_json: Path
    records: Path


def parse_goodput(items: list[str]) -> dict[str, float]:
    """vLLM's `--goodput ttft:MS tpot:MS e2el:MS` (space- or comma-separated) → SLO thresholds."""
    out: dict[str, float] = {}
    for item in (x for raw in items for x in re.split(r"[,\s]+", raw) if x):
        m = _GOODPUT.match(item)
        if not m:
            raise ProbeInputError(f"--goodput: '{item}' is not ttft:MS, tpot:MS or e2el:MS")
        out[f"{m[1]}_ms"] = float(m[2])
    return out


def parse_percentiles(text: str | tuple[float, ...]) -> tuple[float, ...]:
    if isinstance(text, str):
        try:
            qs = tuple(float(x) for x in text.split(",") if x.strip())
        except ValueError:
            raise ProbeInputError(
                f"--metric-percentiles: '{text}' is not a comma-separated list of numbers"
            ) from None
    else:
        qs = tuple(text)
    if not qs or any(not 0 < q < 100 for q in qs):
        raise ProbeInputError(f"--metric-percentiles: each must be in (0, 100), got '{text}'")
    return qs


def probe_load(args: ProbeLoadArgs | None = None, *, bars: Bars = no_bars, **settings) -> ProbeLoadResult:
    """Measure one load point (closed loop with `concurrency`, open loop with `request_rate`) and write
    result.json and records.jsonl into `output`. Settings as a `ProbeLoadArgs` or as keywords. Bad input
    (a setting, the workload, an unwritable folder, an unreachable server) raises `ProbeInputError`, an
    `InputError`, naming the flag; nothing is written then."""
    try:
        args = args or ProbeLoadArgs(**settings)
        slo, point, percentiles, profile = _settings(args)
        workers = resolve_workers(args.workers, "--workers", args.executor)
        if args.executor == "ray" and args.ray_address:
            check_address(args.ray_address)
        spec = WorkloadConfig(
            source=args.dataset, input_len=args.input_len, output_len=args.output_len,
            path=args.dataset_path, tokenizer_path=args.tokenizer, seed=args.seed,
        )  # fmt: skip
        built = build_workload(spec, args.num_prompts)
        view = ServerViewSpec(
            scrape=args.scrape, interval_s=args.scrape_interval, stop_when_saturated=args.stop_when_saturated
        )
        check_output(args.output)
    except ValidationError as exc:
        raise ProbeInputError(describe_validation_error(exc)) from None
    result = asyncio.run(
        run_point(
            args.base_url.rstrip("/"), args.model, point, slo, api_key=args.api_key, prompts=built.prompts,
            workload=built.workload, output_lens=built.output_lens, percentiles=percentiles,
            progress=bars(point.label), profile=profile, tokenizer_path=args.tokenizer, server_view=view,
            workers=workers, executor=args.executor, ray_address=args.ray_address,
        )
    )  # fmt: skip
    if result.metrics.completed == 0 and result.metrics.errors.get("connect"):
        raise ProbeInputError(
            f"--base-url: cannot reach {args.base_url} ({result.aborted or 'connection failed'})"
        )
    written = _write(result, args.output)
    return ProbeLoadResult(
        point=result, percentiles=percentiles, written=written, result_json=written[1], records=written[0]
    )


def _settings(args: ProbeLoadArgs) -> tuple[SLO, LoadPoint, tuple[float, ...], WorkloadProfile | None]:
    """The SLO, the load point, the percentiles and the workload profile the settings give, checked in the
    order of the flags. A profile may fix the lengths, and a trace the rate and the request count."""
    thresholds = parse_goodput(args.goodput)
    percentiles = parse_percentiles(args.metric_percentiles)
    profile, request_rate, num_prompts, shape = probe_workload(
        args.workload, args.workload_option, args.dataset_path, args.concurrency, args.request_rate,
        args.num_prompts,
    )  # fmt: skip
    if (args.concurrency is None) == (request_rate is None):
        raise ProbeInputError("give exactly one of --concurrency (closed loop) or --request-rate (open loop)")
    if args.slo_p99_metric not in ("ttft", "tpot", "e2el"):
        raise ProbeInputError(f"--slo-p99-metric: '{args.slo_p99_metric}' is not ttft, tpot or e2el")
    slo = SLO(**thresholds, p99_metric=f"{args.slo_p99_metric}_ms")
    point = LoadPoint.at(
        concurrency=args.concurrency, rate=request_rate, burstiness=args.burstiness,
        max_concurrency=args.max_concurrency, num_requests=num_prompts, duration_s=args.duration,
        warmup_requests=args.warmup, cooldown_requests=args.cooldown, input_len=shape[0] or args.input_len,
        output_len=shape[1] or args.output_len, endpoint=args.endpoint, ignore_eos=args.ignore_eos, seed=args.seed,
        request_timeout_s=args.timeout,
    )  # fmt: skip
    return slo, point, percentiles, profile


def _write(result: PointResult, output: Path) -> tuple[Path, ...]:
    """The raw records, then the result document naming them by file and digest, with the tool's version."""
    records = records_jsonl(result.records)
    doc = json.loads(result.model_dump_json())
    doc["records_file"] = PROBE_RECORDS
    doc["records_digest"] = sha256_bytes(records)
    doc["tool_version"] = tool_version()  # from the installed package's metadata
    paths = (output / PROBE_RECORDS, output / PROBE_RESULT_JSON)
    scrapes = _scrapes(result, doc)
    if scrapes is not None:  # the run's /metrics scrapes beside its records, named with their digest
        write_atomic(output / PROBE_SCRAPES, scrapes)
    write_atomic(paths[0], records)
    write_atomic(paths[1], json.dumps(doc, indent=2).encode())
    return paths if scrapes is None else (*paths, output / PROBE_SCRAPES)


def _scrapes(result: PointResult, doc: dict) -> bytes | None:
    if not isinstance(result.scrapes, list):
        return None
    scrapes = scrapes_jsonl(result.scrapes)
    doc["scrapes_file"], doc["scrapes_digest"] = PROBE_SCRAPES, sha256_bytes(scrapes)
    return scrapes
