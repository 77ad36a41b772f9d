"""A client check's per-worker rows are the records' (issue 42 item 8): a worker the records name cannot be
dropped from `per_worker` (with `workers` and the verdict restated), a row's `sent` is its records' count, and
the pooled loop lag is what the rows' lags pool to. Only each worker's own loop lag is attested."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.load.workers import host_cores
from tests.support.mock_server import mock_url_fixture
from tests.support.mock_spec import endpoint_spec

runner = CliRunner()
FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.9.0"
mock_url = mock_url_fixture("module", ttft_ms=20, itl_ms=5)


def _copy(source: Path, into: Path) -> tuple[Path, dict]:
    shutil.copytree(source, into)
    return into / "factsheet.json", json.loads((into / "factsheet.json").read_text())


def _validate(path: Path, doc: dict) -> tuple[int, str]:
    path.write_text(json.dumps(doc))
    result = runner.invoke(app, ["validate", str(path)])
    return result.exit_code, result.output


def test_the_stored_build_is_honest(tmp_path):
    path, doc = _copy(FIXTURE, tmp_path / "b")
    assert _validate(path, doc)[0] == 0


@pytest.mark.parametrize(
    ("edit", "named"),
    [
        (
            lambda c: c["per_worker"][0].update(sent=c["per_worker"][0]["sent"] - 1),
            "client.per_worker[0].sent",
        ),
        (lambda c: c["loop_lag_ms"].update(mean=c["loop_lag_ms"]["mean"] + 0.5), "client.loop_lag_ms.mean"),
        (lambda c: c["loop_lag_ms"]["percentiles"].update(p99=0.0), "client.loop_lag_ms.percentiles.p99"),
    ],
    ids=["sent", "pooled-mean", "pooled-p99"],
)
def test_a_row_count_or_the_pooled_lag_edited_alone_is_named(tmp_path, edit, named):
    path, doc = _copy(FIXTURE, tmp_path / "b")
    edit(doc["load"]["points"][1]["result"]["client"])
    code, out = _validate(path, doc)
    assert code == 1, out
    assert f"load.points[1].result.{named}" in out


@pytest.fixture(scope="module")
def two_workers(tmp_path_factory, mock_url) -> Path:
    folder = tmp_path_factory.mktemp("two-workers")
    spec = endpoint_spec(folder, mock_url, "  workers: 2\n", points=((4, 16),))
    result = runner.invoke(app, ["build", str(spec), "-o", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder / "out"


@pytest.mark.skipif(host_cores() < 2, reason="needs two cores")
def test_a_worker_the_records_name_cannot_be_dropped(two_workers, tmp_path):
    path, doc = _copy(two_workers, tmp_path / "b")
    assert _validate(path, doc)[0] == 0
    client = doc["load"]["points"][0]["result"]["client"]
    assert [w["worker"] for w in client["per_worker"]] == [0, 1]
    # The forger's edit: worker 1's row gone, one worker stated, the verdict cleared, the pooled lag restated
    # as the remaining worker's (so nothing but the records can tell).
    kept = client["per_worker"][0]
    kept.update(client_bound=False, reasons=[])
    client.update(workers=1, per_worker=[kept], client_bound=False, client_bound_reasons=[])
    client["loop_lag_ms"] = kept["loop_lag_ms"]
    code, out = _validate(path, doc)
    assert code == 1, out
    assert "load.points[0].result.client.per_worker" in out and "worker 1" in out
