"""Numbers in a build spec are numbers (issue 42 item 5): a count written as "2", 2.0, 51.0 or true, or a
quantity written as "2.5", is one line naming the field, exit 2, before anything runs. Before, pydantic's
lax mode converted them: `capacity.repeats: "2"` passed the spec check and every measurement ran before
the build exited 3; `"0"` and `"-5"` silently meant no repeats; `51.0` ran 51 (at most 50)."""

from __future__ import annotations

import typing

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.spec.build import BuildSpec, load_spec
from probes.core.errors import InputError
from tests.support import mock_spec

# Pass-through values a server is sent as they are (any JSON scalar), not numbers this tool reads.
PASSED_THROUGH = {"probes.accuracy.spec.HumanEvalSpec.sampling"}


def _numbers(annotation, strict: bool = False) -> list[bool]:
    """For each int or float in `annotation`: whether pydantic reads it strictly (under `Strict`)."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        inner, *meta = typing.get_args(annotation)
        return _numbers(inner, strict or any(getattr(m, "strict", False) for m in meta))
    if origin is not None:
        return [s for a in typing.get_args(annotation) for s in _numbers(a, strict)]
    return [strict] if annotation in (int, float) else []


def _models(annotation) -> list[type[BaseModel]]:
    if typing.get_origin(annotation) is not None:
        return [m for a in typing.get_args(annotation) for m in _models(a)]
    return [annotation] if isinstance(annotation, type) and issubclass(annotation, BaseModel) else []


def _number_fields() -> tuple[list[str], list[str]]:
    """(every number field reachable from the build spec, those a lax read would convert)."""
    seen: set[type] = set()
    fields: list[str] = []
    loose: list[str] = []

    def walk(model: type[BaseModel]) -> None:
        if model in seen:
            return
        seen.add(model)
        for name, info in model.model_fields.items():
            where = f"{model.__module__}.{model.__name__}.{name}"
            strict = any(getattr(m, "strict", False) for m in info.metadata)
            numbers = _numbers(info.annotation, strict)
            if numbers and where not in PASSED_THROUGH:
                fields.append(where)
                if not all(numbers):
                    loose.append(where)
            for sub in _models(info.annotation):
                walk(sub)

    walk(BuildSpec)
    return fields, loose


def test_every_number_of_the_build_spec_and_its_sections_is_strict():
    """Walks every section (load, capacity, workload profiles, target, accuracy, energy, tuning, predictor):
    each count and quantity is `Count` / `Quantity` (probes/core/measurement.py), none converted."""
    fields, loose = _number_fields()
    assert loose == []
    for known in (
        "factsheet.spec.build.CapacitySpec.repeats",
        "factsheet.spec.build.LoadSpec.workers",
        "factsheet.spec.build.PointSpec.num_requests",
        "probes.accuracy.spec.HumanEvalSpec.max_tokens",
        "tuner.spec.TunerSpec.max_evaluations",
        "tuner.campaign.spec.CampaignSpec.repetitions",
    ):
        assert known in fields


CAPACITY = {
    "slo": mock_spec.e2el_slo(500),
    "capacity": {"max_value": 8, "num_requests": 8, "confirm_requests": 20, "repeats": 3},
}

# (field as the message names it, the spec override putting `value` there)
FIELDS = {
    "load.capacity.repeats": lambda v: {"load": {**CAPACITY, "capacity": {**CAPACITY["capacity"], "repeats": v}}},
    "load.capacity.confirm_requests": lambda v: {"load": {**CAPACITY, "capacity": {**CAPACITY["capacity"], "confirm_requests": v}}},
    "load.capacity.max_points": lambda v: {"load": {**CAPACITY, "capacity": {**CAPACITY["capacity"], "max_points": v}}},
    "load.workers": lambda v: {"load": {"workers": v}},
    "load.points.0.num_requests": lambda v: {"load": {"points": [{"concurrency": 1, "num_requests": v}]}},
    "load.points.0.concurrency": lambda v: {"load": {"points": [{"concurrency": v, "num_requests": 8}]}},
    "load.output_len": lambda v: {"load": {"output_len": v}},
    "load.warmup_requests": lambda v: {"load": {"warmup_requests": v}},
    "load.workload.shared-prefix.num_prefixes": lambda v: {"load": {"workload": {"profile": "shared-prefix", "num_prefixes": v}}},
    "accuracy.max_tokens": lambda v: {"accuracy": {"max_tokens": v}},
    "accuracy.n_samples": lambda v: {"accuracy": {"n_samples": v}},
    "tuning.max_evaluations": lambda v: {"tuning": {"slo_p99_ms": 500, "max_evaluations": v}},
    "tuning.repeats": lambda v: {"tuning": {"slo_p99_ms": 500, "repeats": v}},
    "model.parameters": lambda v: {"model": {"name": "mock-model", "parameters": v}},
}  # fmt: skip
COUNTS = ["2", 2.0, True, "0", "-5"]


def _refusal(tmp_path, overrides) -> str:
    spec = mock_spec.endpoint_spec(tmp_path, "http://127.0.0.1:9", overrides=overrides)
    with pytest.raises(InputError) as err:
        load_spec(spec)
    message = str(err.value)
    assert "\n" not in message
    return message


def test_the_cases_start_from_a_spec_that_loads(tmp_path):
    """Each case's override with an honest 3 loads: what is refused below is the value, not the spec."""
    for override in FIELDS.values():
        spec = mock_spec.endpoint_spec(tmp_path, "http://127.0.0.1:9", overrides=override(3))
        load_spec(spec)  # raises on a broken case


@pytest.mark.parametrize("value", COUNTS, ids=repr)
@pytest.mark.parametrize("field", sorted(FIELDS))
def test_a_quoted_float_or_bool_count_is_refused_naming_the_field(tmp_path, field, value):
    message = _refusal(tmp_path, FIELDS[field](value))
    assert f"{field}" in message and "valid integer" in message, message


@pytest.mark.parametrize("value", [51.0, 51, -5, 0, 2])
def test_repeats_outside_1_or_3_to_50_are_refused(tmp_path, value):
    message = _refusal(tmp_path, FIELDS["load.capacity.repeats"](value))
    assert "load.capacity.repeats" in message, message


@pytest.mark.parametrize(
    ("field", "override"),
    [
        ("load.points.0.rate", {"load": {"points": [{"rate": "2.5", "num_requests": 8}]}}),
        ("load.slo.ttft_ms", {"load": {"slo": {"ttft_ms": "80"}}}),
        ("load.capacity.max_value", {"load": {**CAPACITY, "capacity": {**CAPACITY["capacity"], "max_value": "8"}}}),
        ("tuning.slo_p99_ms", {"tuning": {"slo_p99_ms": "500"}}),
    ],
)  # fmt: skip
def test_a_quoted_quantity_is_refused_naming_the_field(tmp_path, field, override):
    message = _refusal(tmp_path, override)
    assert field in message and "valid number" in message, message


def test_the_cli_refuses_quoted_repeats_with_one_line_and_exit_2(tmp_path):
    spec = mock_spec.endpoint_spec(
        tmp_path, "http://127.0.0.1:9", overrides=FIELDS["load.capacity.repeats"]("2")
    )
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "load.capacity.repeats: Input should be a valid integer" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
