"""User documents (build spec, policy, …) parsed from YAML into a pydantic model: every failure is one
`InputError` line naming the document and the field."""

from __future__ import annotations

from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from probes.core.errors import InputError, describe_validation_error

M = TypeVar("M", bound=BaseModel)


def parse_yaml_model(
    data: bytes, model: type[M], source: str, shape: str, error: type[InputError] = InputError
) -> M:
    """`data` as `model`; `shape` says what the top level must be ("a spec is a YAML mapping with …")."""
    try:
        doc = yaml.safe_load(data)
    except yaml.YAMLError as exc:
        raise error(f"{source}: not valid YAML: {exc}") from exc
    if not isinstance(doc, dict):
        raise error(f"{source}: {shape}")
    try:
        return model.model_validate(doc)
    except ValidationError as exc:
        raise error(f"{source}: {describe_validation_error(exc)}") from exc
