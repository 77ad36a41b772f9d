"""A tiny live campaign against the embedded vLLM target (slow: starts a real server)."""

from pathlib import Path

import pandas as pd
import pytest

from tuner.campaign.runner import run_campaign
from tuner.campaign.spec import CampaignSpec
from tuner.features.derive import serving_python

HERE = Path(__file__).parent
ROOT = HERE.parent.parent


@pytest.mark.slow
@pytest.mark.skipif(serving_python() is None, reason="serving environment (.venv-vllm) not installed")
def test_tiny_live_campaign_measures_latency_and_cpu_proxy(tmp_path):
    spec = CampaignSpec.model_validate(
        {
            "feature_model": str(HERE / "live_sampling.uvl"),
            "sample": {"method": "uniform", "n": 3, "seed": 0},
            "repetitions": 1,
            "measurer": "tuner.campaign.vllm_measurer:from_options",
            "options": {"spec": str(ROOT / "models" / "smollm2-cpu.yaml"), "requests": 3, "output_len": 16},
        }
    )
    run_campaign(spec, tmp_path / "c")
    df = pd.read_parquet(tmp_path / "c" / "measurements.parquet")
    assert len(df) == len({*df.config_id}) and len(df) >= 2
    assert (df["n_requests"] == 3).all()
    assert (df["e2el_p50_ms"] > df["ttft_p50_ms"]).all() and (df["ttft_p50_ms"] > 0).all()
    assert (df["cpu_s"] > 0).all()  # the server's process group burned CPU while serving
    assert df["restart_s"].max() > 0 and (df["restart_s"] == 0).sum() >= 1  # one start, then reused
