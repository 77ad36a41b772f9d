"""What a publish sends, decided without a server: the metric names (each documented in docs/publishing.md), values equal
to the factsheet's figures, nothing for what was not measured, and no file outside the factsheet's folder."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from factsheet.document.schema import headline_index
from factsheet.publish.contents import (
    BOUND_SUFFIXES,
    METRIC_NAMES,
    UNSIGNED,
    MalformedPublication,
    collect,
    metrics,
)
from probes.core.errors import CheckFailed
from probes.load.stats import proportion_ci
from tests.support import sheet_fixture as fx
from tests.support.spec_builder import DELETE, merged, write_spec

PUBLISHING_PAGE = (Path(__file__).parents[2] / "docs" / "publishing.md").read_text()


@pytest.fixture(scope="module")
def full():
    return fx.build_sheet(fx.load_points())


def _stem(name: str) -> str:
    for suffix in BOUND_SUFFIXES:
        name = name.removesuffix(suffix)
    return name


def test_metrics_equal_the_factsheets_figures_and_are_all_named(full):
    got = metrics(full)
    assert {_stem(k) for k in got} <= set(METRIC_NAMES)
    m = full.load.points[headline_index(full.load.points)].result.metrics
    assert got["e2el_p99_ms"] == m.e2el_ms.p(99) and got["tpot_p50_ms"] == m.tpot_ms.p(50)
    ci = m.percentile_ci["ttft_ms.p50"]
    assert (got["ttft_p50_ms_ci_low"], got["ttft_p50_ms_ci_high"]) == (ci.lower, ci.upper)
    # A p99 on 28 samples has a lower bound and no upper one: the one stated is logged, none invented.
    p99 = m.percentile_ci["ttft_ms.p99"]
    assert got["ttft_p99_ms_ci_low"] == p99.lower and p99.upper is None and "ttft_p99_ms_ci_high" not in got
    # pass@1 on the strictest tests (base+plus: 1 of 2 tasks) with its exact interval over tasks.
    exact = proportion_ci(1, 2)
    assert got["pass_at_1_fraction"] == 0.5
    assert (got["pass_at_1_fraction_ci_low"], got["pass_at_1_fraction_ci_high"]) == (exact.lower, exact.upper)
    gross = full.energy.energy.total.gross
    assert got["energy_per_1000_requests_wh"] == gross.wh_per_1000_requests.value
    assert "capacity_at_slo_users" not in got  # capacity was not measured: absent, never 0


def test_nothing_measured_publishes_no_metric():
    assert metrics(fx.empty_sheet()) == {}


def test_every_metric_name_is_documented_in_the_publishing_page():
    for name in METRIC_NAMES:
        assert f"`{name}`" in PUBLISHING_PAGE, name


def _folder(tmp_path: Path, sheet) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "factsheet.json"
    path.write_bytes(sheet.model_dump_json().encode())
    return path


def _with_record_path(sheet, path: str):
    entry = sheet.load.points[0]
    points = [entry.model_copy(update={"records": entry.records.model_copy(update={"path": path})})]
    return sheet.model_copy(
        update={"load": sheet.load.model_copy(update={"points": points + sheet.load.points[1:]})}
    )


def test_a_records_path_outside_the_folder_is_refused_before_it_is_read(full, tmp_path):
    (tmp_path / "secret.jsonl").write_text("not to be published\n")
    path = _folder(tmp_path / "sheet", _with_record_path(full, "../secret.jsonl"))
    with pytest.raises(MalformedPublication, match="inside its folder"):
        collect(path)


def test_a_records_link_out_of_the_folder_is_refused(full, tmp_path):
    (tmp_path / "secret.jsonl").write_text("not to be published\n")
    path = _folder(tmp_path / "sheet", _with_record_path(full, "records/link.jsonl"))
    (path.parent / "records").mkdir()
    (path.parent / "records" / "link.jsonl").symlink_to(tmp_path / "secret.jsonl")
    with pytest.raises(MalformedPublication, match="a link"):
        collect(path)


def test_missing_records_are_a_failed_check_and_an_unsigned_sheet_says_so(full, tmp_path):
    path = _folder(tmp_path, full)
    with pytest.raises(CheckFailed, match="missing"):
        collect(path)
    assert UNSIGNED == "unsigned"


def test_without_mlflow_installed_publishing_names_the_extra(monkeypatch):
    from factsheet.publish.mlflow import PublishError, check_reachable
    from factsheet.spec.publish import PublishSpec

    monkeypatch.setitem(sys.modules, "mlflow", None)  # import mlflow -> ImportError, as without the extra
    with pytest.raises(PublishError, match=r"llm-factsheet\[publish\]"):
        check_reachable(PublishSpec(mlflow_uri="http://127.0.0.1:9"))


def test_a_spec_publish_section_is_checked_when_the_spec_is_read(tmp_path):
    from typer.testing import CliRunner

    from factsheet.cli.commands import app

    spec = tmp_path / "model.yaml"
    base = {
        "spec_version": 1,
        "name": "x",
        "model": {"name": "m"},
        "target": {"kind": "endpoint", "base_url": "http://127.0.0.1:9", "model": "m"},
        "load": {"points": [{"concurrency": 1}]},
        "publish": {"mlflow_uri": "http://127.0.0.1:9", "model_version": "3"},
    }
    write_spec(spec, base)
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "model_version needs registered_model" in result.output, result.output
    assert not (tmp_path / "out").exists()
    # A valid section with an unreachable server: refused in seconds, before anything is measured.
    write_spec(spec, merged(base, {"publish": {"model_version": DELETE}}))
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "not reachable" in result.output, result.output
    assert not (tmp_path / "out").exists()
