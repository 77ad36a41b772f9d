"""A tiny live campaign against the embedded vLLM target (slow: starts a real server)."""

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.support.humaneval_path import DATASET
from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec
from tuner.features.derive import serving_python

pytestmark = pytest.mark.e2e

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


@pytest.mark.slow
@pytest.mark.skipif(serving_python() is None, reason="serving environment (.venv-vllm) not installed")
def test_tiny_live_campaign_measures_latency_cpu_and_accuracy_per_configuration(tmp_path):
    # One campaign for latency, CPU and accuracy: one real server start, then each configuration's sampling
    # parameters through it. Two configurations are what the assertions need (one start, one reuse).
    spec = CampaignSpec.model_validate(
        {
            "feature_model": str(HERE / "live_sampling.uvl"),
            "sample": {"method": "uniform", "n": 2, "seed": 0},
            "repetitions": 1,
            "measurer": "tuner.campaign.vllm_measurer:from_options",
            "options": {
                "spec": str(ROOT / "models" / "smollm2-cpu.yaml"),
                "requests": 3,
                "output_len": 16,
                "accuracy": {"tasks": 2, "max_tokens": 128, "mode": "chat", "dataset": str(DATASET)},
            },
        }
    )
    run_campaign(spec, tmp_path / "c")
    df = pd.read_parquet(tmp_path / "c" / "measurements.parquet")
    assert len(df) == len({*df.config_id}) and len(df) >= 2
    assert (df["n_requests"] == 3).all()  # latency rests on its own 3 requests, not the accuracy run's
    assert (df["e2el_p50_ms"] > df["ttft_p50_ms"]).all() and (df["ttft_p50_ms"] > 0).all()
    assert (df["cpu_s"] > 0).all()  # the server's process group burned CPU while serving
    assert df["restart_s"].max() > 0 and (df["restart_s"] == 0).sum() >= 1  # one start, then reused
    assert (df["accuracy_tasks"] == 2).all() and (df["accuracy_generation_failures"] == 0).all()
    for name in ("pass_at_1", "pass_at_1_base"):
        assert df[name].isin([0.0, 0.5, 1.0]).all()  # one program per task, 2 tasks
    assert (df["pass_at_1"] <= df["pass_at_1_base"]).all()  # plus = base and plus tests
    for name in ("graded_base_share", "graded_plus_share"):
        assert df[name].between(0, 1).all()
        assert (df[name][df["pass_at_1"] == 1.0] == 1.0).all()
    assert (df["accuracy_judge_s"] > 0).all() and (df["accuracy_generation_s"] > 0).all()
    for path in (tmp_path / "c" / "measurements").glob("*.json"):
        records = json.loads(path.read_text())["records"]["accuracy"]  # what the figures rest on
        assert [r["task_id"] for r in records] == ["HumanEval/0", "HumanEval/1"]
        assert all(r["base"]["n_passed"] is not None for r in records)
