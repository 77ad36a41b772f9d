"""The vLLM measurer's accuracy option against a fake OpenAI-compatible server (the logic; the live run is in
test_campaign_vllm.py): every sampling parameter reaches the accuracy requests, which come after the latency
requests and are not counted in them."""

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support.fake_http import FakeHandler, serving
from tests.support.humaneval_path import DATASET, task_in
from tuner.campaign.measure import measure_one
from tuner.campaign.store import CampaignStore
from tuner.campaign.vllm_measurer import from_options

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "models" / "smollm2-cpu.yaml"


class _Fake(FakeHandler):
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server API
        body = self.read_json()
        type(self).seen.append((self.path, body))
        if body.get("stream"):  # as asked: max_tokens tokens, the last chunk saying so
            n = body["max_tokens"]
            self.reply_events(
                [
                    {"choices": [{"text": "a", "finish_reason": "length" if i == n - 1 else None}]}
                    for i in range(n)
                ]
            )
            return
        record = task_in(body["messages"][0]["content"])
        # Greedy answers right, sampling at temperature 1 answers wrong: the parameters reach the server.
        code = record["prompt"] + record["canonical_solution"] if body["temperature"] == 0.0 else "x = 1\n"
        self.reply_json({"choices": [{"message": {"content": f"```python\n{code}```"}}]})


@pytest.fixture()
def measurer(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(tmp_path))
    m = from_options(
        str(SPEC),
        requests=3,
        accuracy={"tasks": 2, "max_tokens": 77, "mode": "chat", "dataset": str(DATASET)},
    )
    with serving(_Fake) as url:
        # A running "server": the fake endpoint, and this test's own process group for the CPU proxy.
        m._server = SimpleNamespace(base_url=url, pid=os.getpgrp())
        m._engine = {}
        _Fake.seen.clear()
        yield m


def test_accuracy_requests_carry_every_parameter_and_follow_the_latency_requests(measurer):
    params = {"temperature": 0.0, "top_k": 5, "min_p": 0.1, "repetition_penalty": 1.3}
    figures = measurer.measure({"request": params, "engine": {}}, seed=7)
    paths = [p for p, _ in _Fake.seen]
    assert paths == ["/v1/completions"] * 3 + ["/v1/chat/completions"] * 2  # latency first, then accuracy
    assert figures["n_requests"] == 3  # the latency figures rest on the latency requests only
    accuracy_bodies = [b for p, b in _Fake.seen if p.endswith("/chat/completions")]
    for i, body in enumerate(accuracy_bodies):
        assert {k: body[k] for k in params} == params
        assert body["max_tokens"] == 77 and body["seed"] == 7 + i and "stream" not in body
    assert figures["pass_at_1"] == 1.0 and figures["graded_plus_share"] == 1.0
    assert figures["accuracy_tasks"] == 2
    # The raw records the figures rest on: one per task, its verdicts with the inputs passed, and the reply.
    records = figures["records"]["accuracy"]
    assert [r["task_id"] for r in records] == ["HumanEval/0", "HumanEval/1"]
    assert (
        records[0]["plus"]["status"] == "pass"
        and records[0]["plus"]["n_passed"] == records[0]["plus"]["n_inputs"]
    )
    assert records[0]["reply"].startswith("```python\n")


def test_records_stay_in_the_measurement_file_out_of_the_table(tmp_path):
    class WithRecords:
        def measure(self, kwargs, *, seed):
            return {"pass_at_1": 0.5, "records": {"accuracy": [{"task_id": "HumanEval/0"}]}}

    store = CampaignStore(tmp_path)
    config = {"id": "c0", "features": ["A"], "kwargs": {}, "sampled_by": "uniform"}
    store.create([config], 1, 0, {})
    store.record("c0-r0", measure_one(WithRecords(), config, 0, 0))
    assert json.loads((tmp_path / "measurements" / "c0-r0.json").read_text())["records"]["accuracy"] == [
        {"task_id": "HumanEval/0"}
    ]
    df = store.table()
    assert "records" not in df.columns and df["pass_at_1"].tolist() == [0.5]


def test_sampling_parameters_change_the_measured_accuracy(measurer):
    figures = measurer.measure({"request": {"temperature": 1.0}, "engine": {}}, seed=0)
    assert figures["pass_at_1"] == 0.0 and figures["graded_base_share"] == 0.0


def test_accuracy_is_off_by_default_and_bad_options_are_named():
    assert from_options(str(SPEC)).accuracy is None
    with pytest.raises(ValueError, match="options.accuracy.*mode"):
        from_options(str(SPEC), accuracy={"tasks": 2, "mode": "poem"})
    for none in (0, []):
        with pytest.raises(ValueError, match="options.accuracy: tasks.*at least one task"):
            from_options(str(SPEC), accuracy={"tasks": none})
