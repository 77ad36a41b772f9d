import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec
from tuner.campaign.store import CampaignError, CampaignStore

pytestmark = pytest.mark.system


def spec(**kw) -> CampaignSpec:
    base = {
        "feature_model": "generation_config",
        "sample": {"method": "uniform", "n": 6, "seed": 1},
        "repetitions": 2,
        "measurer": "tests.support.campaign_measurers:synthetic",
    }
    return CampaignSpec.model_validate({**base, **kw})


def test_local_campaign_measures_every_config_times_repetitions(tmp_path):
    store = run_campaign(spec(), tmp_path / "c")
    plan = store.plan()
    assert len(plan["configs"]) == 6 and plan["repetitions"] == 2
    assert sorted(plan["order"]) != plan["order"] or len(plan["order"]) < 3  # a random order
    df = pd.read_parquet(tmp_path / "c" / "measurements.parquet")
    assert len(df) == 12
    assert set(df.groupby("config_id").size()) == {2}
    assert {"e2el_p50_ms", "cpu_s", "pass_at_1", "node"} <= set(df.columns)
    assert pd.read_csv(tmp_path / "c" / "measurements.csv").shape == df.shape
    assert plan["valid_configurations"] == 63_846_792 and plan["library"].startswith("transformers")


def test_rounds_order_measures_every_configuration_before_any_repetition(tmp_path):
    store = CampaignStore(tmp_path / "c")
    configs = [{"id": f"c{i}", "features": []} for i in range(8)]
    order = store.create(configs, 3, 0, {}, order="rounds")["order"]
    rounds = [order[i * 8 : (i + 1) * 8] for i in range(3)]
    for r, items in enumerate(rounds):
        assert sorted(items) == sorted(f"c{i}-r{r}" for i in range(8))
    assert [i.split("-")[0] for i in rounds[0]] != [
        i.split("-")[0] for i in rounds[1]
    ]  # reshuffled per round


def test_rerun_measures_nothing_again(tmp_path):
    log = tmp_path / "log"
    s = spec(options={"log": str(log)})
    run_campaign(s, tmp_path / "c")
    run_campaign(s, tmp_path / "c")
    assert len(log.read_text().splitlines()) == 12


def test_a_run_stopped_by_an_exception_still_logs_its_time(tmp_path):
    """A budget stop (an exception from the progress callback) keeps its run in runs.jsonl: the campaign's wall
    time is the sum of its runs, interrupted ones included."""

    class Stop(Exception):
        pass

    def stop_after_five(iid):
        if len(CampaignStore(tmp_path / "c").done()) == 5:
            raise Stop

    with pytest.raises(Stop):
        run_campaign(spec(), tmp_path / "c", progress=stop_after_five)
    run_campaign(spec(), tmp_path / "c")
    runs = [json.loads(line) for line in (tmp_path / "c" / "runs.jsonl").read_text().splitlines()]
    assert [(r["measured"], r["ended"]) for r in runs] == [(5, "interrupted"), (7, "complete")]
    assert all(r["wall_s"] > 0 for r in runs)


def test_other_plan_in_directory_is_refused(tmp_path):
    run_campaign(spec(), tmp_path / "c")
    store = CampaignStore(tmp_path / "c")
    with pytest.raises(CampaignError, match="another campaign"):
        store.create([{"id": "x", "features": []}], 1, 0, {})


def test_a_measurer_that_cannot_be_built_leaves_no_plan(tmp_path):
    with pytest.raises(CampaignError, match="measurer: cannot build 'tests.support.campaign_measurers:nope'"):
        run_campaign(spec(measurer="tests.support.campaign_measurers:nope"), tmp_path / "c")
    assert not (tmp_path / "c").exists()


def test_the_ray_executor_builds_no_measurer_on_the_driver(tmp_path, monkeypatch):
    import tuner.campaign.runner as runner

    seen = []
    # the runner holds its own name for run_on_ray (imported at the top, not looked up per call)
    monkeypatch.setattr(runner, "run_on_ray", lambda spec, store, by_id, pending, **kw: seen.extend(pending))
    run_campaign(
        spec(executor="ray", measurer="tests.support.campaign_measurers:nope"), tmp_path / "c"
    )  # built on workers
    assert len(seen) == 12 and (tmp_path / "c" / "plan.json").exists()


def test_kill_9_mid_campaign_loses_nothing_and_resumes(tmp_path):
    log = tmp_path / "log"
    s = spec(options={"log": str(log), "sleep_s": 0.3})
    (tmp_path / "spec.json").write_text(s.model_dump_json())
    code = (
        "import sys, json; from pathlib import Path;"
        "from tuner.campaign.runner import run_campaign; from tuner.campaign.spec import CampaignSpec;"
        f"run_campaign(CampaignSpec.model_validate_json(Path({str(tmp_path / 'spec.json')!r}).read_text()),"
        f" Path({str(tmp_path / 'c')!r}))"
    )
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    store = CampaignStore(tmp_path / "c")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not store.mdir.exists() or len(store.done()) < 4):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = store.done()
    assert 4 <= len(done_before) < 12, "killed mid-campaign"
    calls_before = len(log.read_text().splitlines())
    run_campaign(s, tmp_path / "c")
    assert store.done() >= done_before and len(store.done()) == 12
    # only what was not finished is measured again (at most the one in flight at the kill)
    assert len(log.read_text().splitlines()) - calls_before == 12 - len(done_before)
    assert not list((tmp_path / "c").rglob("*.tmp"))
    rows = [json.loads(p.read_text()) for p in store.mdir.glob("*.json")]
    assert len(rows) == 12
