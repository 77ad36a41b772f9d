import json
from importlib import metadata

import pytest
from typer.testing import CliRunner

from factsheet.cli.probe import parse_goodput, probe_app
from probes.core.digests import sha256_bytes
from probes.load.records import load_records
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.ports import free_port

runner = CliRunner()


def test_probe_load_writes_result_and_records(tmp_path):
    out = tmp_path / "o"
    with running(MockServerConfig(ttft_ms=20, itl_ms=2)) as url:
        res = runner.invoke(
            probe_app,
            ["load", "--base-url", url, "--model", "mock-model", "--request-rate", "50", "--num-prompts", "20",
             "--input-len", "8", "--output-len", "4", "--goodput", "ttft:500", "tpot:50", "e2el:1000",
             "--metric-percentiles", "50,99", "-o", str(out)],
        )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((out / "result.json").read_text())
    data = (out / "records.jsonl").read_bytes()
    assert doc["records_digest"] == sha256_bytes(data) and len(load_records(data)) == 20
    assert doc["tool_version"] == metadata.version("llm-factsheet")  # installed metadata, not a constant
    m = doc["metrics"]
    assert m["completed"] == 20 and m["slo"]["tpot_ms"] == 50 and m["good"] == 20
    assert set(m["ttft_ms"]["percentiles"]) == {"p50", "p99"}
    assert m["sample_sufficiency"]["e2el_ms"]["sufficient"] is False  # 20 < 459
    assert "ttft_ms (ms)" in res.output and "insufficient" in res.output
    assert not list(out.glob(".*.tmp"))


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--concurrency", "2", "--request-rate", "3"], "exactly one of"),
        (["--concurrency", "2", "--goodput", "ttft=5"], "--goodput"),
        (["--concurrency", "0"], "concurrency"),
        (["--concurrency", "2", "--metric-percentiles", "50,100"], "--metric-percentiles"),
        (["--concurrency", "2", "--dataset", "jsonl"], "workload.path"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args, needle):
    res = runner.invoke(probe_app, ["load", "--base-url", "http://127.0.0.1:9", "--model", "m", *args])
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output


def test_unreachable_endpoint_is_exit_2(tmp_path):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    res = runner.invoke(probe_app, ["load", "--base-url", url, "--model", "m", "--concurrency", "2",
                                    "--num-prompts", "50", "-o", str(tmp_path / "o")])  # fmt: skip
    assert res.exit_code == 2 and "cannot reach" in res.output
    assert not (tmp_path / "o" / "result.json").exists()


def test_goodput_accepts_vllm_spelling():
    assert parse_goodput(["ttft:500 tpot:50", "e2el:1000"]) == {
        "ttft_ms": 500,
        "tpot_ms": 50,
        "e2el_ms": 1000,
    }
