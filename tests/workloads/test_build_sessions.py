"""A build with the chat-sessions profile against the mock server: the factsheet states the workload and
figures by turn, and `validate` re-derives those figures from the records (an edited one is named)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import SCHEMA_VERSION
from probes.targets.mock_server import MockServerConfig, running
from tests.support.mock_spec import endpoint_spec_dict
from tests.support.spec_builder import DELETE, write_spec

runner = CliRunner()


def _spec(url: str) -> dict:
    load = {
        "endpoint": "chat",
        "input_len": DELETE,
        "output_len": 4,
        "slo": {"ttft_ms": 500, "tpot_ms": DELETE},
        "workload": {
            "profile": "chat-sessions", "system_prompt_len": 16, "turns_min": 3, "turns_max": 3, "user_turn_len": 8,
        },
    }  # fmt: skip
    return endpoint_spec_dict(url, ((2, 12),), {"name": "mock-sessions", "load": load})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("sessions")
    with running(MockServerConfig(ttft_ms=30, itl_ms=2, numbered_replies=True)) as url:
        spec = tmp / "model.yaml"
        write_spec(spec, _spec(url))
        result = runner.invoke(app, ["build", str(spec), "-o", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    return tmp / "out"


def test_the_point_states_its_workload_and_figures_by_turn(built):
    sheet = json.loads((built / "factsheet.json").read_text())
    assert sheet["schema_version"] == SCHEMA_VERSION
    res = sheet["load"]["points"][0]["result"]
    w = res["workload"]
    assert w["profile"] == "chat-sessions" and w["generator_version"] == "chat-sessions/1"
    assert w["parameters"]["turns_max"] == 3 and w["requests_digest"].startswith("sha256:")
    assert res["point"]["input_len"] == 8  # the user turn's length, as the profile sets it
    # One system prompt shared by the four sessions, by its digest; an endpoint's template is not visible.
    assert [(p["sessions"], p["sha256"][:7]) for p in w["system_prompts"]] == [(4, "sha256:")]
    for fact in sheet["system"]["deployment"].values():
        assert fact["status"] == "not_measured" and fact["reason"].startswith(
            "an endpoint target serves no files"
        )
    turns = res["turns"]
    assert [t["turn"] for t in turns] == [1, 2, 3] and [t["sent"] for t in turns] == [4, 4, 4]
    assert all(t["ttft_ms"]["unit"] == "ms" and t["ttft_ms"]["percentiles"]["p50"] >= 30 for t in turns)
    # Each turn carries the earlier ones: the prompt the mock counts (words) grows turn by turn.
    grow = [t["prompt_tokens"]["mean"] for t in turns]
    assert grow[0] < grow[1] < grow[2]
    html = (built / "factsheet.html").read_text()
    assert "profile chat-sessions" in html and "By turn index" in html
    header, *lines = (built / sheet["load"]["points"][0]["records"]["path"]).read_text().splitlines()
    assert {(json.loads(x)["session"], json.loads(x)["turn"]) for x in lines} == {
        (s, k) for s in range(4) for k in (1, 2, 3)
    }


def test_validate_rederives_the_turn_figures_and_names_an_edit(built):
    ok = runner.invoke(app, ["validate", str(built / "factsheet.json")])
    assert ok.exit_code == 0, ok.output
    path = built / "factsheet.json"
    sheet = json.loads(path.read_text())
    sheet["load"]["points"][0]["result"]["turns"][1]["ttft_ms"]["percentiles"]["p50"] *= 0.5
    path.write_text(json.dumps(sheet))
    bad = runner.invoke(app, ["validate", str(path)])
    assert bad.exit_code == 1, bad.output
    assert "load.points[0].result.turns" in bad.output
