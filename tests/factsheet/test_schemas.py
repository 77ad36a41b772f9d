"""The JSON Schemas checked in under schemas/v<MAJOR>/ are exactly what the models generate, each with a
stable, versioned $id; every released major's folder stays."""

from __future__ import annotations

import json
import re

from factsheet.api.json_schemas import json_schemas, schema_bytes
from factsheet.document.schema import SCHEMA_VERSION
from factsheet.document.versions import SPEC_SCHEMA_VERSION
from factsheet.spec.build import SPEC_VERSION

ID = re.compile(r"^https://llm-factsheet\.dev/schemas/v(\d+)/([a-z-]+)-(\d+)\.(\d+)\.(\d+)\.schema\.json$")


def test_schemas_up_to_date(repo):
    for name, schema in json_schemas().items():
        path = repo / "schemas" / name
        assert path.is_file(), f"{name} missing: run `make schemas`"
        assert path.read_bytes() == schema_bytes(schema), f"{name} is stale: run `make schemas`"


def test_schema_versions_present():
    schemas = json_schemas()
    assert "schema_version" in schemas["v1/factsheet.schema.json"]["properties"]
    assert "spec_version" in schemas["v1/build-spec.schema.json"]["properties"]
    assert schemas["v1/factsheet.schema.json"]["version"] == SCHEMA_VERSION
    assert SPEC_SCHEMA_VERSION.split(".")[0] == str(SPEC_VERSION)


def test_every_published_schema_has_a_versioned_id(repo):
    """Each major folder holds both schemas; each $id names the folder's major, the file and a semver."""
    majors = sorted(p for p in (repo / "schemas").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert majors and all(re.fullmatch(r"v\d+", p.name) for p in majors), majors
    current = f"v{SCHEMA_VERSION.split('.')[0]}"
    assert current in [p.name for p in majors]
    for folder in majors:
        for name in ("factsheet", "build-spec"):
            schema = json.loads((folder / f"{name}.schema.json").read_text())
            match = ID.match(schema["$id"])
            assert match, schema["$id"]
            assert f"v{match[1]}" == folder.name and match[2] == name
            assert schema["version"] == ".".join(match.groups()[2:])
            assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
