"""Capacity at SLO for two workload profiles side by side (`load.compared_workloads`), against a server whose
capacity is known.

The mock serves 4 requests at once, each taking 100 + 7 × 20 = 240 ms (8 output tokens); from 5 users on a
request waits a whole service time (≥ 480 ms). With a p99 E2EL threshold of 450 ms the largest passing
concurrency is exactly 4, whatever the prompts: synthetic on the completions endpoint and chat-sessions on
the chat endpoint both find 4. The mock reports a prefix-cache hit fraction of 0.75 on /metrics, so each
answer's server view states it and page 1 quotes it.
"""

from __future__ import annotations

import hashlib
import json
import shutil

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.document.schema import SCHEMA_VERSION
from probes.load.workloads.chat_sessions import scripts
from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import ChatSessionsProfile
from probes.targets.mock_server import MockServerConfig, running
from tests.support.fake_http import Recording, serving
from tests.support.mock_spec import e2el_slo, endpoint_spec_dict
from tests.support.spec_builder import DELETE, merged, spec_yaml, write_spec

pytestmark = pytest.mark.system

runner = CliRunner()

CAPACITY = {"knob": "concurrency", "start": 2, "max_value": 8, "num_requests": 16, "confirm_requests": 20}
SESSIONS = {
    "profile": "chat-sessions", "system_prompt_len": 16, "turns_min": 2, "turns_max": 2, "user_turn_len": 8,
    "output_len": 8,
}  # fmt: skip


def _spec(url: str) -> dict:
    load = {
        "slo": e2el_slo(450),
        "server_view": {"interval_s": 0.2},
        "capacity": CAPACITY,
        "compared_workloads": [{"workload": SESSIONS, "endpoint": "chat", "capacity": CAPACITY}],
    }
    return endpoint_spec_dict(url, ((1, 4),), {"name": "mock-compared", "load": load})


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compared")
    config = MockServerConfig(ttft_ms=100, itl_ms=20, slots=4, metrics=True, prefix_hit_fraction=0.75)
    with running(config) as url:
        spec = tmp / "model.yaml"
        write_spec(spec, _spec(url))
        result = runner.invoke(app, ["build", str(spec), "-o", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    return tmp / "out"


def test_both_profiles_find_the_known_capacity(built):
    sheet = json.loads((built / "factsheet.json").read_text())
    assert sheet["schema_version"] == SCHEMA_VERSION
    load = sheet["load"]
    assert load["capacity"]["result"]["capacity"] == 4
    [compared] = load["compared_workloads"]
    assert compared["workload"]["profile"] == "chat-sessions"
    assert compared["template"]["endpoint"] == "chat" and compared["template"]["input_len"] == 8
    result = compared["capacity"]["result"]
    assert result["capacity"] == 4 and result["confirmed"] is True
    assert result["points"][-1]["confirmation"] and result["points"][-1]["metrics"]["measured"] == 20
    # Its records are its own, named by the profile, and bound to it (role and profile in the header).
    paths = [r["path"] for r in compared["capacity"]["records"]]
    assert paths[0] == "records/capacity-chat-sessions-01.jsonl"
    header = json.loads((built / paths[0]).read_text().splitlines()[0])["header"]
    assert header["role"] == "workload capacity step"
    assert header["context"]["workload"]["profile"] == "chat-sessions"
    # Each request of its runs is a chat turn (session and turn on the record).
    first = json.loads((built / paths[-1]).read_text().splitlines()[1])
    assert first["session"] is not None and first["turn"] in (1, 2)
    hits = result["points"][-1]["server_view"]["prefix_cache_hit_rate"]
    assert hits["value"] == pytest.approx(0.75, abs=0.01)
    # The headline states both capacities, each from its own confirmation run: 20 requests cannot support a
    # p99 claim (MLPerf early stopping needs hundreds), so each is "insufficient", never "sufficient".
    capacities = [f for f in sheet["headline"]["figures"] if f["id"].startswith("capacity_at_slo")]
    assert [(f["id"], f["value"], f["verdict"], f["lower_bound"]) for f in capacities] == [
        ("capacity_at_slo", 4, "insufficient", False), ("capacity_at_slo.chat-sessions", 4, "insufficient", False)
    ]  # fmt: skip
    assert (
        capacities[1]["source"]
        == f"/load/compared_workloads/0/capacity/result/points/{len(result['points']) - 1}"
    )


def test_page_one_states_both_and_the_section_compares_them(built):
    html = (built / "factsheet.html").read_text()
    assert "Capacity at SLO, synthetic" in html and "Capacity at SLO, chat-sessions" in html
    assert "prefix-cache hit rate 75% (server&#39;s /metrics over its confirmation run)" in html
    assert "Capacity at SLO by workload profile" in html and "Capacity at SLO: chat-sessions" in html
    assert (built / "factsheet.pdf").stat().st_size > 0


def test_validate_rederives_the_compared_search_and_names_an_edit(built, tmp_path):
    ok = runner.invoke(app, ["validate", str(built / "factsheet.json")])
    assert ok.exit_code == 0, ok.output
    assert "headline: every page-1 figure recomputes from the rest of the sheet" in ok.output
    sheet = json.loads((built / "factsheet.json").read_text())
    base = "load.compared_workloads[0]"
    edits = {
        f"{base}.capacity.result.capacity": lambda c: c["capacity"]["result"].update(capacity=8),
        f"{base}.capacity.result.points[0].metrics": lambda c: c["capacity"]["result"]["points"][0][
            "metrics"
        ]["e2el_ms"]["percentiles"].update(p99=1.0),
        # Another profile stated over the same records: the records' bound context names it.
        f"{base}.workload": lambda c: c["workload"].update(user_turn_len=64),
    }
    for figure, edit in edits.items():
        copy = json.loads(json.dumps(sheet))
        edit(copy["load"]["compared_workloads"][0])
        path = built / "edited.json"
        path.write_text(json.dumps(copy))
        bad = runner.invoke(app, ["validate", str(path)])
        path.unlink()
        assert bad.exit_code == 1, (figure, bad.output)
        assert figure in bad.output, (figure, bad.output)


def test_an_edited_headline_capacity_is_exit_1_naming_it(built):
    """The compared capacity edited in the headline alone (4 -> 64): validate recomputes it from the sheet."""
    sheet = json.loads((built / "factsheet.json").read_text())
    i = next(
        i for i, f in enumerate(sheet["headline"]["figures"]) if f["id"] == "capacity_at_slo.chat-sessions"
    )
    sheet["headline"]["figures"][i]["value"] = 64
    path = built / "edited-headline.json"
    path.write_text(json.dumps(sheet))
    bad = runner.invoke(app, ["validate", str(path)])
    path.unlink()
    assert bad.exit_code == 1, bad.output
    assert (
        f"headline.figures[{i}].value: stated 64" in bad.output
        and "capacity_at_slo.chat-sessions" in bad.output
    )


def test_the_load_sections_records_cannot_stand_for_the_compared_ones(built):
    """The synthetic search's first records file named as the chat-sessions search's: its header binds it to
    another role, so validate names it."""
    sheet = json.loads((built / "factsheet.json").read_text())
    own = sheet["load"]["capacity"]["records"][0]
    sheet["load"]["compared_workloads"][0]["capacity"]["records"][0] = own
    path = built / "swapped.json"
    path.write_text(json.dumps(sheet))
    bad = runner.invoke(app, ["validate", str(path)])
    path.unlink()
    assert bad.exit_code == 1 and "load.compared_workloads[0].capacity.records[0]" in bad.output, bad.output


@pytest.mark.parametrize(
    ("compared", "message"),
    [
        (
            "    - {workload: {profile: chat-sessions}, capacity: {num_requests: 8}}\n",
            "workload chat-sessions: needs endpoint 'chat'",
        ),
        (
            "    - {workload: {profile: synthetic}, capacity: {num_requests: 8}}\n",
            "profile synthetic is already measured",
        ),
        (
            "    - {workload: {profile: trace, path: t.jsonl}, capacity: {num_requests: 8}}\n",
            "workload trace: no capacity",
        ),
        (  # 16 users of sessions up to 4 turns long need 64 turns, or some users have no session
            "    - {workload: {profile: chat-sessions}, endpoint: chat, capacity: {max_value: 16, num_requests: 24}}\n",
            "capacity.num_requests: 24 requests (turns) may make fewer chat sessions than its 16 users: needs at "
            "least concurrency × turns_max = 64",
        ),
    ],
)
def test_bad_compared_workload_is_one_line_exit_2(tmp_path, compared, message):
    spec = tmp_path / "model.yaml"
    # The compared section is YAML text (the cases' point); the rest of the spec ends with the load mapping.
    rest = merged(_spec("http://127.0.0.1:9"), {"load": {"compared_workloads": DELETE}})
    spec.write_text(spec_yaml(rest) + "  compared_workloads:\n" + compared)
    result = runner.invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert not (tmp_path / "out").exists()


def test_mlflow_metrics_carry_both_capacities_and_page_ones_run(built):
    """The registry's metrics are page 1's figures: each capacity (a compared one named by its profile) and
    the load figures of the run page 1 states (the capacity confirmation, not the sweep's busiest point)."""
    from factsheet.document.schema import Factsheet
    from factsheet.publish.contents import metrics

    sheet = Factsheet.model_validate_json((built / "factsheet.json").read_text())
    got = metrics(sheet)
    assert got["capacity_at_slo_users"] == 4 and got["capacity_at_slo_users.chat-sessions"] == 4
    confirmation = [p for p in sheet.load.capacity.result.points if p.confirmation][-1]
    assert got["e2el_p99_ms"] == confirmation.metrics.e2el_ms.p(99)
    assert got["completed_requests_count"] == confirmation.metrics.completed


def test_publish_refuses_an_edited_compared_capacity_before_any_request(built, tmp_path):
    """The compared capacity edited 4 -> 64: publish re-derives the sheet first, exit 1 naming it, and sends
    nothing (so no MLflow run, FINISHED or other, holds 64)."""
    folder = tmp_path / "sheet"
    shutil.copytree(built, folder)
    sheet = json.loads((folder / "factsheet.json").read_text())
    sheet["load"]["compared_workloads"][0]["capacity"]["result"]["capacity"] = 64
    (folder / "factsheet.json").write_text(json.dumps(sheet))
    Recording.requests = []
    with serving(Recording) as url:
        bad = runner.invoke(app, ["publish", str(folder / "factsheet.json"), "--mlflow-uri", url])
    assert bad.exit_code == 1, bad.output
    assert "load.compared_workloads[0].capacity.result.capacity: stated 64" in bad.output
    assert Recording.requests == []


def test_each_search_names_the_system_prompts_its_runs_sent(built):
    """Each run of the chat-sessions search drew its script from its own seed, so each sent its own system
    prompt: the section lists them by digest, recomputed here from the seeds and sizes the sheet states; the
    synthetic search sent none."""
    load = json.loads((built / "factsheet.json").read_text())["load"]
    assert load["capacity"]["system_prompts"] == []
    [compared] = load["compared_workloads"]
    section, profile = compared["capacity"], ChatSessionsProfile(**compared["workload"])
    expected: dict[str, list[int]] = {}
    for point, seed in zip(section["result"]["points"], section["seeds"], strict=True):
        requests = 20 if point["confirmation"] else 16
        ctx = BuildContext(
            requests, seed, compared["template"]["input_len"], compared["template"]["output_len"]
        )
        sessions = scripts(profile, ctx)
        text = sessions[0].system
        size_and_sessions = expected.setdefault(text, [len(text.encode()), 0])
        size_and_sessions[1] += len(sessions)
    assert section["system_prompts"] == [
        {"sha256": "sha256:" + hashlib.sha256(t.encode()).hexdigest(), "size_bytes": n, "sessions": k}
        for t, (n, k) in expected.items()
    ]
    assert len(expected) == len(section["seeds"]) > 1  # a prompt a run: the seeds differ
    html = (built / "factsheet.html").read_text()
    assert f"capacity search ({len(section['seeds'])} runs)" in html
