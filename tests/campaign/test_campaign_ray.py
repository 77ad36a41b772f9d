"""The Ray executor on a local cluster started by the test (2 CPUs, no dashboard, small object store)."""

import os

import pandas as pd
import pytest

ray = pytest.importorskip("ray", reason="ray not installed (optional extra 'ray')")

from tuner.campaign.runner import run_campaign  # noqa: E402
from tuner.campaign.spec import CampaignSpec  # noqa: E402

# One local Ray cluster at a time on the host: the two Ray files share a worker (tests/conftest.py).
pytestmark = [pytest.mark.system, pytest.mark.xdist_group("local-ray")]


@pytest.fixture
def local_ray(monkeypatch):
    # workers inherit the driver's environment: they import the test measurer (tests.support) and this checkout
    monkeypatch.setenv("PYTHONPATH", os.getcwd())
    try:
        ray.init(
            num_cpus=2, include_dashboard=False, object_store_memory=80 * 1024 * 1024, log_to_driver=False
        )
    except Exception as exc:  # Ray's own startup timeout on an overloaded host (raylet waits for its agents)
        if "timed out during startup" not in str(exc):
            raise
        pytest.skip(f"local Ray could not start on this host: {exc}")
    yield
    ray.shutdown()


def test_ray_campaign_survives_a_killed_worker(tmp_path, local_ray):
    log, kill = tmp_path / "log", tmp_path / "killed"
    spec = CampaignSpec.model_validate(
        {
            "feature_model": "vllm_serving",
            "sample": {"method": "uniform", "n": 4, "seed": 2},
            "repetitions": 2,
            "measurer": "tests.support.campaign_measurers:synthetic",
            "options": {"log": str(log), "kill_file": str(kill)},
            "executor": "ray",
        }
    )
    store = run_campaign(spec, tmp_path / "c")
    assert kill.exists(), "a worker was killed mid-campaign"
    df = pd.read_parquet(tmp_path / "c" / "measurements.parquet")
    assert len(df) == 8 and len(store.done()) == 8
    assert len(log.read_text().splitlines()) == 8  # the killed attempt recorded nothing; its retry did
    assert store.plan()["executor"] == "ray"
