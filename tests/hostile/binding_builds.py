"""A factsheet with every measured section, built in-process against the mock server, and forgeries of it.

Load points (closed loop at 16 and 1), a capacity search with a confirmation run, HumanEval+ on three tasks
and energy on a fake RAPL counter (30 W of the energy monitor's own clock: tests/support/fake_rapl.py) with
carbon: every kind of raw records a build keeps. The fixture is the folder's (tests/hostile/conftest.py).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.core.digests import sha256_bytes
from probes.targets.mock_server import MockServerConfig, running
from tests.support.fake_rapl import wall_clock_counter
from tests.support.mock_spec import e2el_slo, endpoint_spec_dict
from tests.support.spec_builder import write_spec

runner = CliRunner()
WATTS = 30.0


def _spec(base_url: str, powercap: Path) -> dict:
    capacity = {"knob": "concurrency", "start": 2, "max_value": 8, "num_requests": 16, "confirm_requests": 16}
    energy = {
        "idle_s": 1,
        "gpu": False,
        "sample_interval_s": 0.05,
        "powercap_root": str(powercap),
        "carbon": {"intensity_g_per_kwh": 400, "pue": 1.2},
    }
    overrides = {
        "name": "mock-hostile",
        "load": {"slo": e2el_slo(5000), "capacity": capacity},
        "accuracy": {"mode": "chat", "subset": {"first": 3}, "max_tokens": 64},
        "energy": energy,
    }
    return endpoint_spec_dict(base_url, ((16, 64), (1, 6)), overrides)


@pytest.fixture(scope="session")
def full_build(tmp_path_factory) -> Path:
    """The output folder of one honest build with every section measured (validates: exit 0)."""
    folder = tmp_path_factory.mktemp("full-build")
    with (
        wall_clock_counter(folder / "powercap", WATTS) as powercap,
        running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url,
    ):
        write_spec(folder / "model.yaml", _spec(url, powercap))
        result = runner.invoke(app, ["build", str(folder / "model.yaml"), "-o", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder / "out"


class Forgery:
    """A copy of a build to edit as a hostile author would: the JSON, and records files (with their sha256
    restated in the factsheet, as anyone without the signing key can)."""

    def __init__(self, source: Path, into: Path):
        shutil.copytree(source, into)
        self.root = into
        self.doc = json.loads((into / "factsheet.json").read_text())

    def write(self) -> Path:
        path = self.root / "factsheet.json"
        path.write_text(json.dumps(self.doc))
        return path

    def rewrite_records(self, rec: dict, change: Callable[[list[str]], list[str]]) -> None:
        """Replace the lines of a records file, and restate its digest in the factsheet."""
        path = self.root / rec["path"]
        data = "".join(line + "\n" for line in change(path.read_text().splitlines())).encode()
        path.write_bytes(data)
        rec["sha256"] = sha256_bytes(data)

    def validate(self):
        return runner.invoke(app, ["validate", str(self.write())])

    def records_entries(self) -> list[dict]:
        """Every records entry the factsheet names (load points, capacity steps, accuracy, energy)."""
        load, out = self.doc["load"], []
        out += [p["records"] for p in load.get("points", [])]
        out += load.get("capacity", {}).get("records", [])
        out += [self.doc[s]["records"] for s in ("accuracy", "energy") if "records" in self.doc[s]]
        return out

    def as_older_version(self, version: str = "1.1.0") -> None:
        """What a forger would make of it to escape binding: every header stripped, digests restated, the
        version lowered to one that had no headers."""
        for rec in self.records_entries():
            self.rewrite_records(rec, lambda lines: [line for line in lines if '"header"' not in line])
        self.doc.pop("rules", None)  # no older tool stated them
        self.doc["schema_version"] = version
