"""The feature-model predictor's calls: `count_features`, `sample_features` (`factsheet features`),
`run_campaign` (`factsheet campaign`) and `predict_campaign` (`factsheet predict`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import yaml
from pydantic import Field, ValidationError

from factsheet.api.results import Result
from factsheet.document.predictor import parse_constraints
from probes.core.errors import InputError, describe_validation_error
from probes.core.files import check_output, write_atomic
from tuner.campaign.spec import CampaignSpec
from tuner.features import sampling
from tuner.features.configs import BUNDLED, kwargs_of, load_bundled
from tuner.features.space import FeatureSpace
from tuner.features.uvl import UVLError, parse_uvl


class _Summary(Result):
    def summary_json(self) -> str:
        """The one JSON line the command prints (the call's figures, not the files it wrote)."""
        return json.dumps(self.model_dump(mode="json", exclude={"written", "failure"}))


def _space(model: str):
    """A UVL file, or the name of a bundled model (generation_config, vllm_serving)."""
    try:
        m = load_bundled(model) if model in BUNDLED else parse_uvl(Path(model).read_text(encoding="utf-8"))
    except UVLError as exc:
        raise InputError(f"{model}: {exc}") from None
    except OSError as exc:
        raise InputError(f"{model}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{model}: not UTF-8 text (a UVL file is)") from None
    return m, FeatureSpace(m)


class FeatureCount(_Summary):
    model: str
    features: int
    constraints: int
    valid_configurations: int = Field(description="exact (BDD), cross-checked by a second counter")
    dead_features: list[str]
    library: str | None
    seconds: float


def count_features(model: str) -> FeatureCount:
    """The exact number of valid configurations of a feature model (a UVL file or a bundled model's name)."""
    start = time.perf_counter()
    m, space = _space(model)
    exact = space.count()
    if space.count_walk() != exact:
        raise RuntimeError("the two exact counters disagree")
    lib, ver = m.root.attributes.get("library"), m.root.attributes.get("library_version")
    return FeatureCount(
        model=model,
        features=len(space.names),
        constraints=len(m.constraints),
        valid_configurations=exact,
        dead_features=space.dead_features(),
        library=f"{lib} {ver}" if lib else None,
        seconds=round(time.perf_counter() - start, 3),
    )


class FeatureSample(_Summary):
    method: str
    t: int | None
    seed: int
    size: int
    coverage: dict[str, float] = Field(description="share of valid 1- and 2-tuples the sample covers")
    seconds: float


def sample_features(
    model: str, *, method: str = "twise", t: int = 2, n: int = 20, seed: int = 0, output: Path | None = None
) -> FeatureSample:
    """A t-wise sample covering every valid t-tuple, or a uniform one of `n`; with `output`, its
    configurations as JSON lines (features and keyword arguments) in that file."""
    # options checked before the diagram exists: an exception holding it in a traceback cycle makes dd
    # complain when the cycle is collected
    if method not in ("twise", "uniform"):
        raise InputError(f"--method: '{method}' is not twise or uniform")
    if method == "twise" and t not in (1, 2, 3):
        raise InputError(f"-t: must be 1, 2 or 3, got {t}")
    if method == "uniform" and n < 1:
        raise InputError(f"-n: must be at least 1, got {n}")
    if output is not None:
        check_output(Path(output), file=True)
    m, space = _space(model)
    smp = sampling.twise(space, t, seed) if method == "twise" else sampling.uniform(space, n, seed)
    cov = {f"{k}-wise": round(sampling.coverage(space, smp.configs, k), 4) for k in (1, 2)}
    written: tuple[Path, ...] = ()
    if output is not None:
        lines = [json.dumps({"features": sorted(c), "kwargs": kwargs_of(m, c)}) for c in smp.configs]
        written = (write_atomic(Path(output), "\n".join(lines) + "\n"),)
    return FeatureSample(
        method=smp.method, t=smp.t, seed=seed, size=len(smp.configs), coverage=cov,
        seconds=round(smp.seconds, 3), written=written,
    )  # fmt: skip


class CampaignResult(_Summary):
    campaign: str = Field(description="the campaign folder")
    configurations: int
    repetitions: int
    measured: int


def run_campaign(
    spec_path: Path,
    output: Path,
    *,
    executor: str | None = None,
    ray_address: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> CampaignResult:
    """Measure a sample of configurations into the folder `output` (resumable: the same call after an
    interruption measures what is left). `executor`/`ray_address` override the spec's."""
    # deferred: the campaign runner and store (~0.5 s) serve `predictor campaign`, not count or sample
    from tuner.campaign.runner import run_campaign as run
    from tuner.campaign.store import CampaignError

    spec = _campaign_spec(Path(spec_path), executor, ray_address)
    check_output(Path(output))
    try:
        store = run(spec, Path(output), progress=progress)
    except CampaignError as exc:
        raise InputError(str(exc)) from None
    plan = store.plan()
    return CampaignResult(
        campaign=str(output),
        configurations=len(plan["configs"]),
        repetitions=plan["repetitions"],
        measured=len(store.done()),
    )


def _campaign_spec(path: Path, executor: str | None, ray_address: str | None):
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if executor is not None:
            data["executor"] = executor
        if ray_address is not None:
            data["ray_address"] = ray_address
        return CampaignSpec.model_validate(data)
    except OSError as exc:
        raise InputError(f"{path}: cannot read ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text (a campaign spec is YAML)") from None
    except (yaml.YAMLError, TypeError) as exc:
        raise InputError(f"{path}: not a YAML mapping ({str(exc).splitlines()[0]})") from None
    except ValidationError as exc:
        raise InputError(f"{path}: {describe_validation_error(exc)}") from None


class Prediction(Result):
    # The predictor's summary is untyped in the tuner today; its typed package (issue 21, item 3) replaces it.
    summary: dict

    def summary_json(self) -> str:
        return json.dumps(self.summary)


def predict_campaign(
    campaign_dir: Path,
    *,
    targets: Sequence[str] = ("e2el_p50_ms", "cpu_s", "pass_at_1"),
    objective: str = "e2el_p50_ms",
    constraints: Mapping[str, str] | Sequence[str] = (),
    verify_reps: int = 0,
    confident: bool = False,
) -> Prediction:
    """Learn the campaign's figures, find the Pareto front, recommend (and verify live `verify_reps`
    times). `constraints`: {"pass_at_1": ">=0.05"} as a spec writes them, or "pass_at_1>=0.05" strings
    as `--constraint` does; one grammar (factsheet.document.predictor.parse_constraints) reads both."""
    # deferred: the predictor and scikit-learn (~0.4 s) serve only `predictor predict`
    from tuner.campaign.store import CampaignError
    from tuner.predictor.predict import predict_campaign as predict

    try:
        out = predict(
            Path(campaign_dir), list(targets), objective, _constraints(constraints), verify_reps, confident
        )
    except CampaignError as exc:
        raise InputError(str(exc)) from None
    return Prediction(summary=out["summary"])


def _constraints(given: Mapping[str, str] | Sequence[str]) -> dict[str, tuple[str, float]]:
    if isinstance(given, Mapping):
        named, flag = dict(given), "constraints"
    else:  # NAME then the condition the spec's grammar reads: 'pass_at_1>=0.05' -> {pass_at_1: '>=0.05'}
        named, flag = {}, "--constraint"
        for item in given:
            cut = min((i for i in (item.find("<"), item.find(">")) if i >= 0), default=len(item))
            named[item[:cut].strip()] = item[cut:]
    try:
        return parse_constraints(named)
    except ValueError as exc:
        raise InputError(f"{flag}: {exc}") from None
