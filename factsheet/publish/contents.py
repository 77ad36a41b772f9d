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
from factsheet.document.files import COMPLIANCE_JSON, COMPLIANCE_SUFFIXES, RENDERINGS
from factsheet.document.headline.figures import stated_or_computed
from factsheet.document.headline.select import informative_run
from factsheet.document.headline_model import VERDICT_WORDS, Figure
from factsheet.document.schema import Factsheet, headline_index
from factsheet.document.stamp import tool_version
from factsheet.rederive.validate import check_outlet, load_factsheet
from probes.core.digests import sha256_file
from probes.core.errors import InputError
from probes.core.measurement import NotMeasured

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
    files = tuple(artifacts(sheet, json_path))  # first: every path confined to the folder before any read
    # Never publish records that no longer match the factsheet's digests, nor a figure (the headline's
    # included) that does not recompute from them: refused (exit 1, naming it) before anything is sent.
    check_outlet(sheet, json_path)
    digest = sha256_file(json_path)
    tags = {
        TAG_PREFIX + "name": sheet.name,
        TAG_PREFIX + "schema_version": sheet.schema_version,
        TAG_PREFIX + "tool_version": sheet.provenance.tool_version,
        TAG_PREFIX + "published_by": f"llm-factsheet {tool_version()}",
        DIGEST_TAG: digest,
        TAG_PREFIX + "signature_key_id": _key_id(attestation_path(json_path)),
        VERDICT_TAG: NOT_RUN if isinstance(sheet.compliance, NotMeasured) else sheet.compliance.verdict,
        **headline_tags(sheet),
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
    "capacity_at_slo_users_at_least",
    "capacity_at_slo_rps_at_least",
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


_CAPACITY = "capacity_at_slo"
_BY_ID = {  # headline figure -> metric name (unit in the name)
    "e2el_ms.p99": "e2el_p99_ms",
    "ttft_ms.p99": "ttft_p99_ms",
    "tpot_ms.p99": "tpot_p99_ms",
    "goodput": "goodput_rps",
    "slo_attainment": "slo_attainment_fraction",
    "pass_at_1": "pass_at_1_fraction",
    "energy_wh_per_1000_requests": "energy_per_1000_requests_wh",
}
HEADLINE_TAG = TAG_PREFIX + "headline."  # + figure id: its verdict in words


def _capacity_metrics(out: dict[str, float], f: Figure) -> None:
    """A capacity from the headline: a lower bound under `<name>_at_least`, never as a capacity; one whose
    long confirmation failed is not logged as a number at all (its tag says "not confirmed")."""
    if f.value is None or f.verdict in ("not_confirmed", "not_measured"):
        return
    stem = "capacity_at_slo_rps" if f.unit == "req/s" else "capacity_at_slo_users"
    name = stem + ("_at_least" if f.lower_bound else "") + f.id.removeprefix(_CAPACITY)
    out[name] = float(f.value)
    # The range the probes cannot tell apart at 95 % (not a CI of a sample statistic): its own names.
    if f.interval is not None:
        if f.interval.lower is not None:
            out[f"{name}_range_low"] = float(f.interval.lower)
        if f.interval.upper is not None:
            out[f"{name}_range_high"] = float(f.interval.upper)


def headline_tags(sheet: Factsheet) -> dict[str, str]:
    """Each headline figure's verdict as a tag (`llm_factsheet.headline.<id>`): an MLflow metric is a bare
    number, so what its samples support (a lower bound, not confirmed, too few samples) goes beside it."""
    out = {}
    for f in stated_or_computed(sheet).figures:
        words = VERDICT_WORDS[f.verdict]
        out[HEADLINE_TAG + f.id] = _param_value(f"{words}: {f.note}" if f.note else words)
    return out


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
    head = stated_or_computed(sheet)  # page 1's figures: from the headline and nothing else
    for f in head.capacities():
        _capacity_metrics(out, f)
    for f in head.figures:
        name = _BY_ID.get(f.id)
        if name is not None and f.value is not None:
            i = f.interval
            _with_ci(out, name, f.value, i and i.lower, i and i.upper)
    run = informative_run(
        sheet.load
    )  # the run the headline's load figures come from: the rest of its figures
    if run is not None:
        m = run.metrics
        for key, q, stem in _LATENCIES:
            if q == 99:
                continue  # the headline's
            ci = m.percentile_ci.get(f"{key}.p{q}")
            _with_ci(out, stem, getattr(m, key).p(q), ci and ci.lower, ci and ci.upper)
        if m.output_throughput is not None:
            out["output_throughput_tokens_per_s"] = float(m.output_throughput)
        out["completed_requests_count"] = float(m.completed)
    en = sheet.energy
    if not isinstance(en, NotMeasured) and not isinstance(en.energy, NotMeasured):
        total = en.energy.total
        if not isinstance(total, NotMeasured):
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
