"""The JSON Schemas checked in under schemas/ are exactly what the models generate."""

from __future__ import annotations

from factsheet.schemas import json_schemas, schema_bytes


def test_schemas_up_to_date(repo):
    for name, schema in json_schemas().items():
        path = repo / "schemas" / name
        assert path.is_file(), f"{name} missing: run `make schemas`"
        assert path.read_bytes() == schema_bytes(schema), f"{name} is stale: run `make schemas`"


def test_schema_versions_present():
    schemas = json_schemas()
    assert "schema_version" in schemas["factsheet.schema.json"]["properties"]
    assert "spec_version" in schemas["build-spec.schema.json"]["properties"]
