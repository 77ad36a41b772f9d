"""`factsheet publish` and the build spec's `publish:` against a real MLflow tracking server (started once for
this module on 127.0.0.1, SQLite backend store, local artifact store), read back with MlflowClient.

Known truth: the factsheet is built here against the mock server, signed with a key made here and gated by
a policy it passes; every metric read back must equal the figure the factsheet states, every tag the
factsheet's digest, key id and verdict, every artifact the file beside the factsheet."""

from __future__ import annotations

import hashlib
import json
import shutil
import textwrap
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import headline_index
from factsheet.publish.contents import DIGEST_TAG, VERDICT_TAG, metrics
from factsheet.rederive.validate import load_factsheet
from probes.targets.ports import free_port
from tests.publish.mlflow_server import mlflow_server, refusing_proxy
from tests.support.compliance_builds import build, spec_text

pytestmark = [pytest.mark.system, pytest.mark.timeout(600)]
mlflow = pytest.importorskip("mlflow")  # the test extra installs it; skip, not fail, without it

GATE_POLICY = """\
    policy_version: 1
    id: generous
    title: p99 E2EL within 5 s
    version: "1"
    rules:
      - id: p99-e2el
        title: p99 E2EL within 5 s
        field: load.points[headline].result.metrics.e2el_ms.percentiles.p99
        op: "<="
        threshold: 5000
        unit: ms
        evidence: {measured: true, raw_records: true}
    """
BUILD_EXPERIMENT = "built-and-published"
runner = CliRunner()


def cli(*args) -> tuple[int, str]:
    result = runner.invoke(app, [str(a) for a in args])
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with mlflow_server(tmp_path_factory.mktemp("mlflow")) as uri:
        yield uri


@pytest.fixture(scope="module")
def client(server):
    return mlflow.MlflowClient(tracking_uri=server, registry_uri=server)


@pytest.fixture(scope="module")
def key_id(tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("keys")
    code, output = cli("keygen", "-o", folder)
    assert code == 0, output
    return folder / "factsheet-signing.key", output.split("key id:")[1].split()[0]


@pytest.fixture(scope="module")
def sheet_dir(tmp_path_factory, mock_url, server, key_id) -> Path:
    """A signed, gated factsheet whose build publishes itself (spec `publish:`) to the server."""
    key, _ = key_id
    extra = textwrap.dedent(f"""\
        compliance: {{policies: [gate.yaml]}}
        sign: {{key: "{key}"}}
        publish: {{mlflow_uri: "{server}", experiment: {BUILD_EXPERIMENT}}}
        """)
    points = "- {concurrency: 4, num_requests: 24}\n- {concurrency: 1, num_requests: 6}\n"
    result, out = build(
        tmp_path_factory.mktemp("sheet"), spec_text(mock_url, points, extra), {"gate.yaml": GATE_POLICY}
    )
    assert result.exit_code == 0, result.output
    assert "published: run" in result.output
    return out


def _runs(client, experiment: str, status: str | None = None):
    exp = client.get_experiment_by_name(experiment)
    if exp is None:
        return []
    flt = f"attributes.status = '{status}'" if status else ""
    return client.search_runs([exp.experiment_id], filter_string=flt)


def _digest(path: Path) -> str:
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def _all_artifacts(client, run_id: str, path: str = "factsheet") -> set[str]:
    out: set[str] = set()
    for info in client.list_artifacts(run_id, path):
        out |= _all_artifacts(client, run_id, info.path) if info.is_dir else {info.path}
    return out


def test_the_build_publishes_one_run_holding_the_factsheets_figures(sheet_dir, client, key_id):
    (run,) = _runs(client, BUILD_EXPERIMENT)
    assert run.info.status == "FINISHED"
    sheet = load_factsheet(sheet_dir / "factsheet.json")
    m = sheet.load.points[headline_index(sheet.load.points)].result.metrics
    got = run.data.metrics
    # Values equal the factsheet's figures exactly (MLflow stores doubles).
    assert got["e2el_p99_ms"] == m.e2el_ms.p(99)
    ci = m.percentile_ci["e2el_ms.p99"]
    assert (got.get("e2el_p99_ms_ci_low"), got.get("e2el_p99_ms_ci_high")) == (ci.lower, ci.upper)
    assert got["ttft_p50_ms"] == m.ttft_ms.p(50)
    assert got["goodput_rps"] == m.goodput
    assert (got["goodput_rps_ci_low"], got["goodput_rps_ci_high"]) == (m.goodput_ci.lower, m.goodput_ci.upper)
    assert got["completed_requests_count"] == 24  # the headline point is the one with most requests
    assert got == metrics(sheet)  # nothing more, nothing less than what the factsheet states
    params = run.data.params
    assert params["model.name"] == "mock-model" and params["load.input_len"] == "16"
    assert params["load.slo.e2el_ms"] == "5000.0" and params["load.headline_point"] == "concurrency=4"
    tags = run.data.tags
    assert tags[DIGEST_TAG] == _digest(sheet_dir / "factsheet.json")
    assert tags["llm_factsheet.schema_version"] == sheet.schema_version
    assert tags["llm_factsheet.tool_version"] == sheet.provenance.tool_version
    assert tags["llm_factsheet.signature_key_id"] == key_id[1]
    assert tags[VERDICT_TAG] == "pass"
    records = {rec.path for _, rec in sheet.records_files()}
    expected = {
        "factsheet.json",
        "factsheet.html",
        "factsheet.pdf",
        "factsheet.intoto.jsonl",
        "compliance.json",
        "compliance.html",
        "compliance.pdf",
        "compliance-junit.xml",
        *records,
    }
    assert _all_artifacts(client, run.info.run_id) == {f"factsheet/{n}" for n in expected}
    # What the registry holds is the file itself, byte for byte.
    local = client.download_artifacts(run.info.run_id, "factsheet/factsheet.json", str(sheet_dir.parent))
    assert _digest(Path(local)) == tags[DIGEST_TAG]


def test_publishing_the_same_factsheet_again_changes_nothing(sheet_dir, client, server):
    (before,) = _runs(client, BUILD_EXPERIMENT)
    code, output = cli(
        "publish", sheet_dir / "factsheet.json", "--mlflow-uri", server, "--experiment", BUILD_EXPERIMENT
    )
    assert code == 0, output
    assert f"already published (nothing changed): run {before.info.run_id}" in output
    (after,) = _runs(client, BUILD_EXPERIMENT)
    assert after.info.run_id == before.info.run_id
    assert after.info.end_time == before.info.end_time
    assert len(client.get_metric_history(after.info.run_id, "e2el_p99_ms")) == 1


def test_a_new_model_version_is_registered_once_and_tagged(sheet_dir, client, server):
    args = ["publish", sheet_dir / "factsheet.json", "--mlflow-uri", server, "--experiment", "registry"]
    code, output = cli(*args, "--registered-model", "mock-model")
    assert code == 0, output
    (run,) = _runs(client, "registry", "FINISHED")
    (version,) = client.search_model_versions("name = 'mock-model'")
    assert version.run_id == run.info.run_id and version.source == f"runs:/{run.info.run_id}/factsheet"
    assert version.tags[DIGEST_TAG] == _digest(sheet_dir / "factsheet.json")
    assert version.tags[VERDICT_TAG] == "pass"
    code, output = cli(*args, "--registered-model", "mock-model")
    assert code == 0 and "already tagged" in output, output
    assert len(client.search_model_versions("name = 'mock-model'")) == 1
    assert len(_runs(client, "registry")) == 1


def test_an_existing_model_version_is_tagged_and_a_missing_one_refused(sheet_dir, client, server):
    client.create_registered_model("deployed")
    existing = client.create_model_version("deployed", source="s3://bucket/weights", tags={"team": "serving"})
    args = ["publish", sheet_dir / "factsheet.json", "--mlflow-uri", server, "--experiment", "tagging"]
    code, output = cli(*args, "--registered-model", "deployed", "--model-version", "7")
    assert code == 2 and "has no version '7'" in output, output
    assert _runs(client, "tagging") == []  # refused before any run was created
    code, output = cli(*args, "--registered-model", "deployed", "--model-version", existing.version)
    assert code == 0, output
    tags = client.get_model_version("deployed", existing.version).tags
    assert tags["team"] == "serving" and tags[DIGEST_TAG] == _digest(sheet_dir / "factsheet.json")
    assert tags["llm_factsheet.run_id"] == _runs(client, "tagging", "FINISHED")[0].info.run_id


def test_an_unreachable_server_exits_2_in_seconds(sheet_dir):
    started = time.monotonic()
    code, output = cli(
        "publish", sheet_dir / "factsheet.json", "--mlflow-uri", f"http://127.0.0.1:{free_port()}"
    )
    assert code == 2, output
    assert time.monotonic() - started < 20
    assert "not reachable" in output or "MLflow at" in output
    assert len(output.strip().splitlines()) == 1


def test_a_refused_upload_leaves_the_run_failed_and_exits_2(sheet_dir, client, server):
    with refusing_proxy(server, allowed_uploads=1) as proxy:
        code, output = cli(
            "publish", sheet_dir / "factsheet.json", "--mlflow-uri", proxy, "--experiment", "refused"
        )
    assert code == 2, output
    assert len(output.strip().splitlines()) == 1
    assert "uploading artifacts failed" in output and "marked FAILED" in output
    (run,) = _runs(client, "refused")
    assert run.info.status == "FAILED"  # never FINISHED: a reader trusting FINISHED runs sees nothing
    assert run.data.tags[DIGEST_TAG] == _digest(sheet_dir / "factsheet.json")
    assert len(_all_artifacts(client, run.info.run_id)) == 1  # the one upload the store took
    # A later publish does not take the FAILED run for a published one: it publishes whole.
    code, output = cli(
        "publish", sheet_dir / "factsheet.json", "--mlflow-uri", server, "--experiment", "refused"
    )
    assert code == 0 and "already" not in output, output
    assert len(_runs(client, "refused", "FINISHED")) == 1


def test_a_malformed_factsheet_exits_2_and_creates_nothing(sheet_dir, client, server, tmp_path):
    bad = tmp_path / "bad"
    shutil.copytree(sheet_dir, bad)
    data = json.loads((bad / "factsheet.json").read_text())
    del data["identity"]
    (bad / "factsheet.json").write_text(json.dumps(data))
    code, output = cli("publish", bad / "factsheet.json", "--mlflow-uri", server, "--experiment", "malformed")
    assert code == 2 and "identity" in output, output
    assert len(output.strip().splitlines()) == 1
    assert client.get_experiment_by_name("malformed") is None  # nothing at all reached the server
    # Raw records that no longer match their digests are a failed check (exit 1), and nothing is sent either.
    altered = tmp_path / "altered"
    shutil.copytree(sheet_dir, altered)
    rec = next(p for p in (altered / "records").iterdir())
    rec.write_bytes(rec.read_bytes() + b"\n")
    code, output = cli(
        "publish", altered / "factsheet.json", "--mlflow-uri", server, "--experiment", "malformed"
    )
    assert code == 1 and "do not match" in output, output
    assert client.get_experiment_by_name("malformed") is None


def test_an_interrupt_mid_upload_leaves_the_run_failed_and_exits_130(sheet_dir, client, server, monkeypatch):
    calls = []
    upload = mlflow.MlflowClient.log_artifact

    def interrupted(self, *args, **kwargs):
        calls.append(args)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return upload(self, *args, **kwargs)

    monkeypatch.setattr(mlflow.MlflowClient, "log_artifact", interrupted)
    code, output = cli(
        "publish", sheet_dir / "factsheet.json", "--mlflow-uri", server, "--experiment", "ctrl-c"
    )
    assert code == 130, output
    (run,) = _runs(client, "ctrl-c")
    assert run.info.status == "FAILED"
