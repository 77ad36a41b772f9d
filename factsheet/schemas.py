"""The published JSON Schemas (checked in under `schemas/`, tested to be up to date, shipped as the package
data `factsheet.published_schemas`)."""

from __future__ import annotations

import json
from pathlib import Path

from factsheet.store import OutputDir, write_atomic


def json_schemas() -> dict[str, dict]:
    from factsheet.schema import SCHEMA_VERSION, Factsheet
    from factsheet.spec import SPEC_VERSION, BuildSpec

    spec = BuildSpec.model_json_schema(mode="validation")
    spec["$id"] = f"https://llm-factsheet.dev/schemas/build-spec-v{SPEC_VERSION}.schema.json"
    sheet = Factsheet.model_json_schema(mode="serialization")
    sheet["$id"] = f"https://llm-factsheet.dev/schemas/factsheet-{SCHEMA_VERSION}.schema.json"
    return {"build-spec.schema.json": spec, "factsheet.schema.json": sheet}


def schema_bytes(schema: dict) -> bytes:
    return (json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_schemas(folder: Path) -> list[Path]:
    OutputDir(folder).check_writable()
    paths = []
    for name, schema in json_schemas().items():
        write_atomic(folder / name, schema_bytes(schema))
        paths.append(folder / name)
    return paths
