"""The published JSON Schemas: checked in under `schemas/v<MAJOR>/` (one folder per released major version,
kept when a new major is released), tested to be up to date, shipped as the package data
`factsheet.published_schemas`.

Each schema's `$id` is stable and carries its semver: https://llm-factsheet.dev/schemas/v1/factsheet-MAJOR.MINOR.PATCH.schema.json.
"""

from __future__ import annotations

import json
from pathlib import Path

from factsheet.compliance.diff import DiffReport
from factsheet.compliance.policy import Policy
from factsheet.compliance.report import ComplianceReport
from factsheet.document.schema import SCHEMA_VERSION, Factsheet
from factsheet.document.versions import (
    DIFF_VERSION,
    POLICY_SCHEMA_VERSION,
    REPORT_VERSION,
    SPEC_SCHEMA_VERSION,
    parse,
)
from factsheet.spec.build import BuildSpec
from probes.core.files import check_output, write_atomic

BASE_URI = "https://llm-factsheet.dev/schemas"
DIALECT = "https://json-schema.org/draft/2020-12/schema"


def schema_id(name: str, version: str) -> str:
    return f"{BASE_URI}/v{parse(version).major}/{name}-{version}.schema.json"


def json_schemas() -> dict[str, dict]:
    """Path under schemas/ (e.g. 'v1/factsheet.schema.json') → schema of the current version."""
    out = {}
    for name, version, schema in (
        ("build-spec", SPEC_SCHEMA_VERSION, BuildSpec.model_json_schema(mode="validation")),
        ("factsheet", SCHEMA_VERSION, Factsheet.model_json_schema(mode="serialization")),
        ("policy", POLICY_SCHEMA_VERSION, Policy.model_json_schema(mode="validation")),
        ("compliance-report", REPORT_VERSION, ComplianceReport.model_json_schema(mode="serialization")),
        ("diff", DIFF_VERSION, DiffReport.model_json_schema(mode="serialization")),
    ):
        schema = {"$schema": DIALECT, "$id": schema_id(name, version), "version": version, **schema}
        out[f"v{parse(version).major}/{name}.schema.json"] = schema
    return out


def schema_bytes(schema: dict) -> bytes:
    return (json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_schemas(folder: Path) -> list[Path]:
    """Write the current major's schemas into `folder`/v<MAJOR>/; other majors' folders are left as released."""
    check_output(folder)
    paths = []
    for name, schema in json_schemas().items():
        path = Path(folder) / name
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, schema_bytes(schema))
        paths.append(path)
    return paths
