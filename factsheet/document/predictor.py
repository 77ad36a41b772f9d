"""The predictor section's models: every field of what `tuner.predictor.predict.predict_campaign` returns,
typed, with its unit and definition, so that the published JSON Schema describes the whole section and
`validate` can re-derive it (factsheet/rederive/predictor.py).

Figures keep the unit their name states (`e2el_p50_ms`: milliseconds, `cpu_s`: CPU-seconds, `pass_at_1`: a
share in [0, 1]); a prediction, interval, MAE or error sd of a figure is in that figure's unit. The shapes are
the ones schema 1.2.0 documents carried untyped, so those documents validate unchanged.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field

from factsheet.document.records_file import RecordsFile
from probes.core.measurement import Model, NotMeasured

FIGURE_UNIT = (
    "the figure's unit, as its name states (_ms milliseconds, _s seconds; pass_at_1 a share in [0, 1])"
)
KwargValue = bool | int | float | str
Sense = Literal["min", "max"]


class FeatureModelSummary(Model):
    """The feature model the configurations were sampled from."""

    feature_model: str = Field(description="bundled model name or the .uvl file the campaign named")
    library: str = Field(description="the library (and its version) whose options the model describes")
    features: int = Field(ge=0, description="features in the model")
    constraints: int = Field(ge=0, description="cross-tree constraints in the model")
    valid_configurations: int = Field(ge=0, description="valid configurations, counted exactly (BDD)")


class Sampling(Model):
    method: str = Field(description="'t-wise' or 'uniform'")
    t: int | None = Field(description="strength of a t-wise sample; None for uniform")
    seed: int
    n: int = Field(ge=0, description="configurations the sampler returned")
    seconds: float = Field(ge=0, description="sampling time, seconds")
    coverage_2wise: float = Field(
        ge=0, le=1, description="share of the valid feature pairs the measured configurations cover"
    )


class Campaign(Model):
    configurations: int = Field(ge=0, description="configurations planned")
    repetitions: int = Field(ge=1, description="measurements planned per configuration")
    measurements: int = Field(ge=0, description="measurements finished (the table's rows)")
    executor: str | None = Field(description="'local' or 'ray'")
    wall_s: float = Field(ge=0, description="wall time of every campaign run together, seconds")
    nodes: list[str] = Field(description="host names that measured")
    seed: int | None = Field(
        None, description="the campaign's seed, which the recommendation's sample uses (>= 1.3.0)"
    )


class AccuracyStatement(Model):
    """What the campaign's HumanEval+ figures rest on (`tuner.campaign.accuracy.AccuracyOptions.statement`)."""

    subset: str
    mode: str = Field(description="'chat' or 'completion'")
    prompting: str
    max_tokens: int = Field(ge=1, description="most tokens generated per program")
    samples_per_task: int = Field(ge=1)
    figures: dict[str, str] = Field(description="figure name → its definition")


class FoldScore(Model):
    """One score over the folds of a k-fold cross-validation."""

    mean: float = Field(description="mean over folds")
    sd: float | None = Field(description="sample standard deviation over folds; None with one fold")
    folds: int = Field(ge=1, description="folds the score was computed on")


class CvScores(Model):
    """Out-of-fold scores of one model on per-configuration means (None: no fold could compute it)."""

    r2: FoldScore | None = Field(description="coefficient of determination R², unitless (folds of ≥ 2)")
    mae: FoldScore | None = Field(description=f"mean absolute error, in {FIGURE_UNIT}")
    mape: FoldScore | None = Field(
        description="mean absolute percentage error as a fraction (0.1 = 10 %); folds with a 0 left out"
    )


class PredictionError(Model):
    scale: Literal["log", "absolute"] = Field(
        description="log: s of log(y/ŷ), interval ŷ·exp(±1.96 s); absolute: s of y − ŷ, interval ŷ ± 1.96 s"
    )
    sd: float = Field(
        ge=0, description=f"root mean square out-of-fold error s (log scale: unitless; else {FIGURE_UNIT})"
    )
    definition: str


class ModelSelection(Model):
    """The model that predicts a figure for the recommendation: the candidate with the best mean CV R²."""

    kind: str = Field(description="random_forest, random_forest_log, ridge_log or lasso_pairs_log")
    basis: str = Field(description="why this candidate")
    cv: CvScores = Field(description="the chosen candidate's CV scores")
    candidates: dict[str, CvScores] = Field(description="every candidate's CV scores, by kind")
    log_kinds: str = Field(description="whether the log candidates competed, and why not")
    lasso: str | None = Field(None, description="why lasso_pairs_log was left out (absent: it competed)")
    configurations: int = Field(ge=0, description="configurations (per-configuration means) learned from")
    folds: int = Field(ge=2, description="folds of the cross-validation")
    error: PredictionError


class TaskSampling(Model):
    """χ² test of homogeneity of a task share's pass counts over configurations."""

    n_tasks: int = Field(ge=1)
    configurations: int = Field(ge=2)
    chi2_p: float = Field(ge=0, le=1, description="p-value of the χ² test")


class Learnability(Model):
    """Does the figure vary across configurations beyond its repetition noise? (one-way ANOVA, α = 0.05)"""

    learnable: bool | None = Field(description="None: fewer than two configurations with two repetitions")
    anova_p: float | None = Field(None, ge=0, le=1, description="p-value of the one-way ANOVA")
    between_config_sd: float | None = Field(
        None, ge=0, description=f"sd of the configurations' means, in {FIGURE_UNIT}"
    )
    repetition_sem: float | None = Field(
        None, ge=0, description=f"root mean square standard error of a configuration's mean, in {FIGURE_UNIT}"
    )
    tasks: TaskSampling | None = None
    reason: str
    statement: str | None = Field(
        None, description="what the factsheet prints instead of an R² (not learnable)"
    )


class CurvePoint(Model):
    """Random Forest R² on held-out configurations when trained on n random ones."""

    n: int = Field(ge=1, description="configurations used for training")
    r2_mean: float = Field(description="mean held-out R² over the repeats")
    r2_sd: float = Field(description="sample sd of the held-out R² over the repeats")
    repeats: int = Field(ge=1)


class Importance(Model):
    """Permutation importance of a feature for the Random Forest (10 permutations)."""

    feature: str
    mean: float = Field(description="mean decrease of R² when the feature is permuted")
    sd: float = Field(description="its sd over the permutations")


class LearnedFigure(Model):
    """One figure learned from the configurations' features."""

    status: Literal["not_learnable"] | None = Field(
        None,
        description="'not_learnable' when the learnability test says so (absent: learnable or undecided)",
    )
    configurations: int = Field(ge=0, description="configurations with a value of this figure")
    learnability: Learnability
    selection: ModelSelection
    cv: dict[Literal["mean", "ridge", "random_forest"], CvScores] = Field(
        description="the baselines' and the Random Forest's CV scores"
    )
    learning_curve: list[CurvePoint]
    importance: list[Importance] = Field(description="the ten most important features, most important first")


class ConfigurationMeans(Model):
    """One configuration's mean over its repetitions of each Pareto figure (the figure names are the keys)."""

    model_config = ConfigDict(extra="allow")
    __pydantic_extra__: dict[str, float] = Field(init=False)  # figure → mean, in the figure's unit

    config_id: str = Field(description="sha256 of the configuration's sorted features, first 12 hex digits")


class Pareto(Model):
    senses: dict[str, Sense] = Field(description="figure → minimised or maximised")
    front: list[ConfigurationMeans] = Field(description="the non-dominated measured configurations")
    configurations: list[ConfigurationMeans] = Field(description="every measured configuration")


class Objective(Model):
    target: str = Field(description="the figure optimised")
    sense: Sense


class Prediction(Model):
    """A figure of the recommendation as predicted by its selected model."""

    mean: float = Field(description=f"the prediction, in {FIGURE_UNIT}")
    model: str = Field(description="the selected model's kind")
    cv_r2: float | None = Field(description="its mean CV R²")
    interval_95: tuple[float, float] = Field(description=f"95 % interval (an estimate), in {FIGURE_UNIT}")
    error_scale: Literal["log", "absolute"]
    error_sd: float = Field(ge=0, description="the model's out-of-fold error s (see error_scale)")
    uncertainty: str = Field(description="what the interval rests on")


class Recommendation(Model):
    """The sampled valid configuration with the best predicted objective meeting every constraint."""

    features: list[str] = Field(description="selected features")
    kwargs: dict[str, dict[str, KwargValue]] = Field(
        description="keyword arguments by target (request, engine)"
    )
    measured_before: bool = Field(description="whether the campaign measured this configuration")
    objective: Objective
    constraints: dict[str, tuple[Literal[">=", "<="], float]] = Field(
        description=f"figure → (operator, bound in {FIGURE_UNIT})"
    )
    constraints_on: str = Field(description="the predicted mean, or the whole 95 % interval")
    candidates: int = Field(ge=1, description="valid configurations sampled uniformly and predicted")
    meeting_constraints: int = Field(ge=1, description="candidates predicted to meet every constraint")
    predicted: dict[str, Prediction] = Field(description="figure → its prediction")
    notes: list[str] = Field(
        default_factory=list, description="figures predicted close to the mean (not learnable)"
    )


class Verified(Model):
    """The recommended configuration measured live, compared with its prediction."""

    measured_mean: float = Field(description=f"mean of the live measurements, in {FIGURE_UNIT}")
    measured_sem: float = Field(ge=0, description="its standard error (0 with one measurement)")
    n: int = Field(ge=1, description="live measurements")
    predicted_mean: float
    error: float = Field(description=f"measured mean − predicted, in {FIGURE_UNIT}")
    relative_error: float | None = Field(description="error / measured mean (None when that mean is 0)")
    z: float | None = Field(description="standardised gap (z_definition)")
    z_scale: Literal["log", "absolute"]
    z_definition: str
    interval_95: tuple[float, float]
    within_interval: bool = Field(
        description="whether the measured mean lies in the prediction's 95 % interval"
    )


class NotVerified(Model):
    """A figure the live measurements returned no value of."""

    status: Literal["not_measured"] = "not_measured"
    reason: str | None = Field(None, description="why (absent in documents before schema 1.3.0)")


class BestModel(Model):
    kind: str
    r2: float | None = Field(description="its mean CV R², 3 decimals")


class PredictorSummary(Model):
    configurations: int = Field(ge=0)
    measurements: int = Field(ge=0)
    r2_random_forest: dict[str, float | None] = Field(
        description="learnable figure → the Random Forest's mean CV R², 3 decimals"
    )
    best_model: dict[str, BestModel] = Field(description="learnable figure → the model that predicts it")
    not_learnable: dict[str, str] = Field(description="figure → the statement printed instead of an R²")
    recommended: list[str] | None = Field(description="the recommendation's features (None: none)")
    verified: dict[str, float | None] | None = Field(description="figure → the verification's relative error")


class PredictorSection(Model):
    definition: str = (
        "configurations sampled from a UVL feature model (t-wise and uniform), measured with repetitions in "
        "random order; Random Forest vs mean and ridge baselines by k-fold CV on per-configuration means; "
        "each figure of the recommendation predicted by the candidate with the best mean k-fold CV R² "
        "(random_forest, random_forest_log, ridge_log, lasso_pairs_log; log models learn log y, only where "
        "every value > 0), with a 95 % interval from that model's out-of-fold prediction error (an estimate; "
        "multiplicative for log models); recommendation = best predicted objective meeting the constraints, "
        "then measured and compared with the interval"
    )
    campaign_dir: str
    objective: str | None = Field(None, description="the figure minimised ('max:NAME' maximised; >= 1.3.0)")
    constraints: dict[str, str] | None = Field(
        None, description="the recommendation's constraints as the spec states them (>= 1.3.0)"
    )
    confident: bool | None = Field(
        None, description="constraints held for the whole 95 % interval, not only the mean (>= 1.3.0)"
    )
    records: RecordsFile | None = Field(
        None,
        description="the campaign's measurements, one JSON line each (configuration features, figures, the "
        "latency requests' records), which `validate` re-derives the section from (>= 1.3.0)",
    )
    model: FeatureModelSummary
    sampling: Sampling | None
    campaign: Campaign
    notes: list[str]
    accuracy: AccuracyStatement | None = Field(
        None, description="the HumanEval+ subset, prompting and figure definitions (None: not measured)"
    )
    targets: dict[str, LearnedFigure | NotMeasured] = Field(description="figure → what was learned of it")
    pareto: Pareto | None
    recommendation: Recommendation | None
    verification: dict[str, Verified | NotVerified] | None
    summary: PredictorSummary


def parse_constraints(raw: dict[str, str]) -> dict[str, tuple[str, float]]:
    """{figure: '>=X' | '<=X'} → {figure: (operator, bound)}; ValueError naming `constraints.<figure>`.

    The grammar of `PredictorSection.constraints` (the spec's text, kept as stated): the build spec checks it,
    `validate` re-derives the recommendation with it and `predictor recommend --constraint` reads it."""
    out = {}
    for name, text in raw.items():
        op = text.strip()[:2]
        if op not in (">=", "<="):
            raise ValueError(f"constraints.{name}: '{text}' is not '>=X' or '<=X'")
        try:
            out[name] = (op, float(text.strip()[2:]))
        except ValueError:
            raise ValueError(f"constraints.{name}: '{text}' needs a number after {op}") from None
    return out
