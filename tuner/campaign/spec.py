"""What a campaign measures: the feature model, the sample, repetitions, the measurer and the executor."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from probes.core.measurement import Count, Model, Quantity
from tuner.campaign.accuracy import AccuracyOptions


class SampleSpec(Model):
    method: Literal["twise", "uniform"] = "twise"
    t: Count = Field(2, ge=1, le=3, description="strength of a t-wise sample")
    n: Count = Field(20, ge=1, description="size of a uniform sample")
    seed: Count = 0


class SharedOptions(Model):
    """The measurer options every measurer reads the same way, checked with the spec (the others are the
    factory's: it checks them when the measurer is built)."""

    accuracy: AccuracyOptions | None = None

    @field_validator("accuracy")
    @classmethod
    def _dataset_has_the_tasks(cls, accuracy: AccuracyOptions | None) -> AccuracyOptions | None:
        if accuracy is not None:
            accuracy.check_local_dataset()
        return accuracy


class CampaignSpec(Model):
    """`measurer` is 'module:factory'; the factory takes `options` and returns an object with
    `measure(kwargs, *, seed) -> {figure: value}` (kwargs by target: request, engine, model); a key `records`
    in that dict holds the raw records the figures rest on (kept in the measurement's file, not a figure)."""

    feature_model: str = Field(
        description="bundled model name (generation_config, vllm_serving) or a .uvl path"
    )
    sample: SampleSpec = Field(default_factory=SampleSpec)
    extra_uniform: Count = Field(0, ge=0, description="uniform configurations added to the sample")
    repetitions: Count = Field(3, ge=1)
    order: Literal["shuffled", "rounds"] = Field(
        "shuffled",
        description="shuffled: all (configuration, repetition) pairs in one random order; rounds: every "
        "configuration once (random order) before any is repeated, so a campaign stopped early covers the most",
    )
    seed: Count = 0
    measurer: str = Field(description="'module:factory' building the measurer")
    options: dict = Field(
        default_factory=dict,
        description="passed to the measurer's factory; the vLLM measurer's: spec, requests, input_len, "
        "output_len, accuracy: {tasks: N or [task ids], max_tokens, mode: chat|completion} (HumanEval+ "
        "figures per configuration; off by default; checked with the spec, its task ids too when the "
        "dataset is on this machine)",
    )
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = Field(None, description="join this Ray cluster; else start a local one")
    task_cpus: Quantity | None = Field(
        None,
        gt=0,
        description="CPUs each Ray task declares; default: a whole node, so measurements never share it",
    )
    max_configs: Count | None = Field(None, ge=1, description="cap on configurations (tiny CI campaigns)")

    @field_validator("options")
    @classmethod
    def _shared_options(cls, options: dict) -> dict:
        # Before anything is measured or a server started; a failure reads options.accuracy.<field>.
        SharedOptions.model_validate({k: options[k] for k in SharedOptions.model_fields if k in options})
        return options
