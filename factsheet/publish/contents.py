"""What a published factsheet consists of, read from the factsheet and its folder only (no MLflow here):
params (the settings the factsheet records), metrics (the headline figures and their CI bounds, the unit in
each name), tags (what a registry filters on) and artifacts (the files the factsheet names or the build
writes, each confined to the factsheet's folder).

A factsheet someone else made is hostile input: it is read through `load_factsheet`, its raw records must
match their digests before anything leaves the machine, and no file outside its folder is ever read."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from factsheet.attest import dsse
from factsheet.attest.attestation import attestation_path
from factsheet.headline.select import informative_run
from factsheet.outputs import COMPLIANCE_JSON, COMPLIANCE_SUFFIXES, RENDERINGS
from factsheet.provenance import tool_version
from factsheet.schema import CapacitySection, Factsheet, headline_index
from factsheet.validate import check_records, load_factsheet
from probes.core.digests import sha256_file
from probes.core.errors import InputError
from probes.core.measurement import NotMeasured
from probes.load.stats import proportion_ci

TAG_PREFIX = "llm_factsheet."
DIGEST_TAG = TAG_PREFIX + "sha256"  # 'sha256:<hex>' of factsheet.json: how a later publish finds its run
VERDICT_TAG = TAG_PREFIX + "compliance_verdict"
UNSIGNED = "unsigned"
NOT_RUN = "not_run"
ARTIFACT_DIR = "factsheet"  # the run's artifacts keep the folder's layout under this folder
PARAM_MAX_CHARS = 6000  # MLflow's limit on a param's value: a longer one would fail the whole publish
ATTESTATION_MAX_BYTES = 1 << 20  # an envelope is a few kB; a larger file is not read whole
# Written by the build (and `factsheet check -o` into the same folder) beside the factsheet.


class MalformedPublication(InputError):
    """The factsheet or a file it names cannot be published as it is (exit 2, nothing sent)."""


@dataclass(frozen=True)
class Artifact:
    path: Path  # on this machine, inside the factsheet's folder
    name: str  # relative to the folder, POSIX: the artifact's path under ARTIFACT_DIR


@dataclass(frozen=True)
class PublishContents:
    sheet: Factsheet
    sha256: str  # 'sha256:<hex>' of the factsheet file's bytes
    params: dict[str, str]
    metrics: dict[str, float]
    tags: dict[str, str]
    artifacts: tuple[Artifact, ...]
    started_ms: int  # the build's start and end (provenance), so MLflow's run times are the build's
    finished_ms: int

    @property
    def verdict(self) -> str:
        return self.tags[VERDICT_TAG]


def collect(json_path: Path) -> PublishContents:
    """Everything a publish sends, or MalformedPublication / CheckFailed before anything is sent."""
    json_path = Path(json_path)
    sheet = load_factsheet(json_path)
    folder = json_path.parent
    files = tuple(artifacts(sheet, json_path))  # first: every path confined to the folder before any read
    check_records(sheet, folder)  # never publish records that no longer match the factsheet's digests
    digest = sha256_file(json_path)
    tags = {
        TAG_PREFIX + "name": sheet.name,
        TAG_PREFIX + "schema_version": sheet.schema_version,
        TAG_PREFIX + "tool_version": sheet.provenance.tool_version,
        TAG_PREFIX + "published_by": f"llm-factsheet {tool_version()}",
        DIGEST_TAG: digest,
        TAG_PREFIX + "signature_key_id": _key_id(attestation_path(json_path)),
        VERDICT_TAG: NOT_RUN if isinstance(sheet.compliance, NotMeasured) else sheet.compliance.verdict,
        "mlflow.note.content": (
            f"llm-factsheet {sheet.name}, factsheet {digest} (schema {sheet.schema_version}); "
            f"artifacts under {ARTIFACT_DIR}/"
        ),
    }
    return PublishContents(
        sheet=sheet,
        sha256=digest,
        params=params(sheet),
        metrics=metrics(sheet),
        tags=tags,
        artifacts=files,
        started_ms=_epoch_ms(sheet.provenance.started_at),
        finished_ms=_epoch_ms(sheet.provenance.finished_at),
    )


def _epoch_ms(iso: str) -> int:
    try:
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)
    except ValueError as exc:
        raise MalformedPublication(f"provenance time {iso!r} is not ISO 8601: {exc}") from None


def _key_id(path: Path) -> str:
    """The key id the attestation's first signature states (not verified here: `factsheet verify` does that
    with the public key), or 'unsigned' when there is no attestation."""
    if not path.is_file() or path.is_symlink():
        return UNSIGNED
    with open(path, "rb") as f:
        data = f.read(ATTESTATION_MAX_BYTES + 1)
    if len(data) > ATTESTATION_MAX_BYTES:
        raise MalformedPublication(f"{path}: attestation larger than {ATTESTATION_MAX_BYTES} bytes")
    line = next((x for x in data.splitlines() if x.strip()), b"")
    try:
        parsed = dsse.parse(line)
    except dsse.MalformedEnvelope as exc:
        raise MalformedPublication(f"{path}: not a DSSE envelope: {exc}") from None
    kid = parsed.signatures[0][0] if parsed.signatures else None
    if not kid:
        raise MalformedPublication(f"{path}: the envelope's signature names no key id")
    return kid


# --- params: the settings the factsheet records ---------------------------------------------------------


def params(sheet: Factsheet) -> dict[str, str]:
    ident, prov = sheet.identity, sheet.provenance
    out: dict[str, object] = {
        "model.name": ident.name,
        "model.version": ident.version,
        "model.license": ident.license,
        "target.kind": sheet.system.target_kind,
        "spec.file": prov.spec_file,
        "spec.sha256": prov.spec_sha256,
    }
    if not isinstance(sheet.system.engine, NotMeasured):
        out["engine"] = f"{sheet.system.engine.name} {sheet.system.engine.version or ''}".strip()
    i = None if isinstance(sheet.load, NotMeasured) else headline_index(sheet.load.points)
    if i is not None:
        entry = sheet.load.points[i].result
        p, slo = entry.point, entry.metrics.slo
        out |= {
            "load.endpoint": p.endpoint,
            "load.input_len": p.input_len,
            "load.output_len": p.output_len,
            "load.seed": p.seed,
            "load.warmup_requests": p.warmup_requests,
            "load.points": "; ".join(e.result.label for e in sheet.load.points),
            "load.headline_point": entry.label,
            "load.slo.p99_metric": slo.p99_metric,
        }
        out |= {f"load.slo.{k}": v for k, v in slo.thresholds().items()}
    if not isinstance(sheet.load, NotMeasured) and not isinstance(sheet.load.capacity, NotMeasured):
        cap = sheet.load.capacity.result
        out |= {"capacity.knob": cap.knob, "capacity.min_attainment": cap.min_attainment}
    if not isinstance(sheet.accuracy, NotMeasured):
        acc = sheet.accuracy.result
        out |= {
            "accuracy.benchmark": acc.benchmark,
            "accuracy.dataset": f"{acc.dataset.name} {acc.dataset.version}",
            "accuracy.subset": acc.subset,
            "accuracy.mode": acc.mode,
            "accuracy.temperature": acc.temperature,
            "accuracy.max_tokens": acc.max_tokens,
            "accuracy.tests_run": ",".join(acc.tests_run),
        }
        out |= {f"accuracy.sampling.{k}": v for k, v in sorted(acc.sampling.items())}
    return {k: _param_value(v) for k, v in out.items() if v is not None}


def _param_value(value: object) -> str:
    text = str(value)
    return text if len(text) <= PARAM_MAX_CHARS else text[: PARAM_MAX_CHARS - 1] + "…"


# --- metrics: the headline figures, unit in the name, CI bounds beside them --------------------------------

# Every metric name a publish can log (README documents each); a figure with a CI adds `<name>_ci_low` and
# `<name>_ci_high`, capacity its indistinguishable range as `<name>_range_low` / `<name>_range_high`.
METRIC_NAMES = (
    "capacity_at_slo_users",
    "capacity_at_slo_rps",
    "e2el_p99_ms",
    "e2el_p50_ms",
    "ttft_p99_ms",
    "ttft_p50_ms",
    "tpot_p99_ms",
    "tpot_p50_ms",
    "goodput_rps",
    "slo_attainment_fraction",
    "output_throughput_tokens_per_s",
    "completed_requests_count",
    "pass_at_1_fraction",
    "energy_per_1000_requests_wh",
    "energy_per_output_token_j",
)
BOUND_SUFFIXES = ("_ci_low", "_ci_high", "_range_low", "_range_high")

# (factsheet distribution, percentile) -> metric name; every latency is in ms
_LATENCIES = (
    ("e2el_ms", 99, "e2el_p99_ms"),
    ("e2el_ms", 50, "e2el_p50_ms"),
    ("ttft_ms", 99, "ttft_p99_ms"),
    ("ttft_ms", 50, "ttft_p50_ms"),
    ("tpot_ms", 99, "tpot_p99_ms"),
    ("tpot_ms", 50, "tpot_p50_ms"),
)


def _capacity_metrics(out: dict[str, float], section: CapacitySection | NotMeasured, suffix: str) -> None:
    if isinstance(section, NotMeasured) or section.result.capacity is None:
        return
    cap = section.result
    name = ("capacity_at_slo_rps" if cap.knob == "rate" else "capacity_at_slo_users") + suffix
    out[name] = float(cap.capacity)
    # The range the probes cannot tell apart at 95 % (not a CI of a sample statistic): its own names.
    low, high = cap.range
    if low is not None:
        out[f"{name}_range_low"] = float(low)
    if high is not None:
        out[f"{name}_range_high"] = float(high)


def _with_ci(out: dict[str, float], name: str, value, low, high) -> None:
    """A figure and its CI bounds as `<name>_ci_low` / `<name>_ci_high`, each one only where the factsheet
    states it (a p99 on few samples has a lower bound and no upper one: no bound is invented)."""
    if value is None:
        return
    out[name] = float(value)
    if low is not None:
        out[f"{name}_ci_low"] = float(low)
    if high is not None:
        out[f"{name}_ci_high"] = float(high)


def metrics(sheet: Factsheet) -> dict[str, float]:
    """The figures of *At a glance* (each capacity at SLO, the load figures of the run page 1 states, pass@1,
    energy) as MLflow metrics; what was not measured is absent, never zero. A compared workload's capacity is
    named `<capacity metric>.<profile>`."""
    out: dict[str, float] = {}
    load = sheet.load
    if not isinstance(load, NotMeasured):
        _capacity_metrics(out, load.capacity, "")
        for compared in load.compared_workloads:
            _capacity_metrics(out, compared.capacity, f".{compared.workload.profile}")
    run = informative_run(load)  # the capacity confirmation when there is one, as page 1 states it
    if run is not None:
        m = run.metrics
        for key, q, stem in _LATENCIES:
            ci = m.percentile_ci.get(f"{key}.p{q}")
            _with_ci(out, stem, getattr(m, key).p(q), ci and ci.lower, ci and ci.upper)
        g = m.goodput_ci
        _with_ci(out, "goodput_rps", m.goodput, g and g.lower, g and g.upper)
        if m.slo_attainment is not None:
            a = g.attainment if g else None
            _with_ci(out, "slo_attainment_fraction", m.slo_attainment, a and a.lower, a and a.upper)
        if m.output_throughput is not None:
            out["output_throughput_tokens_per_s"] = float(m.output_throughput)
        out["completed_requests_count"] = float(m.completed)
    if not isinstance(sheet.accuracy, NotMeasured):
        rates = sheet.accuracy.result.pass_rates
        v = (rates.plus or rates.base).get("pass@1")
        if v is not None:
            n = rates.n_tasks
            # As At a glance: an exact interval over tasks when each task has one sample.
            ci = proportion_ci(round(v * n), n) if rates.n_samples_per_task == 1 and n else None
            _with_ci(out, "pass_at_1_fraction", v, ci and ci.lower, ci and ci.upper)
    en = sheet.energy
    if not isinstance(en, NotMeasured) and not isinstance(en.energy, NotMeasured):
        total = en.energy.total
        if not isinstance(total, NotMeasured):
            q = total.gross.wh_per_1000_requests
            if not isinstance(q, NotMeasured):
                out["energy_per_1000_requests_wh"] = float(q.value)
            jt = total.gross.j_per_output_token
            if not isinstance(jt, NotMeasured):
                out["energy_per_output_token_j"] = float(jt.value)
    return out


# --- artifacts: only files inside the folder that the factsheet names or the build writes ------------------


def _inside(folder: Path, name: str) -> Path:
    p = PurePosixPath(name)
    if not name or p.is_absolute() or ".." in p.parts or "\\" in name:
        raise MalformedPublication(f"{name!r}: a file named by the factsheet must lie inside its folder")
    path = folder / p
    if path.is_symlink() or not path.resolve().is_relative_to(folder.resolve()):
        raise MalformedPublication(f"{name}: a link, or outside the factsheet's folder: not published")
    return path


def artifacts(sheet: Factsheet, json_path: Path) -> list[Artifact]:
    """The JSON, its HTML and PDF, the attestation, the compliance report and every raw-records file; the
    renderings, attestation and report only when present (a factsheet may be published unsigned, unrendered,
    unchecked). The raw records were already checked against their digests."""
    folder = json_path.parent
    report = COMPLIANCE_JSON if isinstance(sheet.compliance, NotMeasured) else sheet.compliance.report
    stem = str(PurePosixPath(report).with_suffix(""))
    optional = [*RENDERINGS, attestation_path(json_path).name, *(stem + s for s in COMPLIANCE_SUFFIXES)]
    required = [json_path.name, *(rec.path for _, rec in sheet.records_files())]
    out, seen = [], set()
    for name in required + optional:
        if name in seen:
            continue
        seen.add(name)
        path = _inside(folder, name)
        if path.is_file():  # a missing raw-records file is check_records' failed check (exit 1)
            out.append(Artifact(path, str(PurePosixPath(name))))
    return out
