"""The live adapter against the load probe's mock server (known timing; no vLLM needed)."""

import numpy as np
import pytest

from probes.targets import EndpointTarget
from tests.support.mock_server import mock_url_fixture
from tuner import OperatingPoint, TunerSpec, TuningLoad, tune
from tuner.live import LiveEvaluator

pytestmark = pytest.mark.system

W = TuningLoad(input_len=8, output_len=8, num_requests=24)


mock_url = mock_url_fixture("module", ttft_ms=50.0, itl_ms=5.0, slots=2)


def test_live_run_matches_the_mock_servers_timing(mock_url):
    target = EndpointTarget(base_url=mock_url, model="mock-model", supports_ignore_eos=True)
    with LiveEvaluator(target) as ev:
        e = ev.evaluate(OperatingPoint(concurrency=2, max_num_seqs=128, spec_k=0), W, repeats=1, seed=0)
    (run,) = e.runs
    assert len(run.e2el_ms) == 24 and run.failed == 0
    # 50 ms to the first token, then 7 more at 5 ms: 85 ms, plus local HTTP overhead.
    assert np.median(run.e2el_ms) == pytest.approx(85, abs=30)
    assert np.median(run.ttft_ms) == pytest.approx(50, abs=30)


def test_endpoint_cannot_restart_so_restart_knobs_are_fixed(mock_url):
    target = EndpointTarget(base_url=mock_url, model="mock-model", supports_ignore_eos=True)
    cfg = TunerSpec(
        slo_p99_ms=150.0, workload=W, min_samples=16, max_evaluations=8, time_budget_s=120,
        start=OperatingPoint(concurrency=2, max_num_seqs=128, spec_k=0),
        knobs={"concurrency": [1, 2, 4], "max_num_seqs": [64, 128], "spec_k": [0, 1]},
        confirm_runs=0,  # the search's answer: on a loaded host a late mock may rightly fail confirmation at 2
    )  # fmt: skip
    with LiveEvaluator(target) as ev:
        result = tune(ev, cfg)
    fixed = {f.knob for f in result.fixed_knobs}
    assert fixed <= {"max_num_seqs", "spec_k"} and fixed
    assert all("endpoint target" in f.reason for f in result.fixed_knobs)
    # Two slots: concurrency 4 queues (TTFT doubles) and breaks the 150 ms SLO; 2 is the best.
    assert result.recommended.point.concurrency == 2


def test_speculation_env_preload_follows_the_setting_and_the_users_own_preload_wins(monkeypatch):
    from probes.targets import VllmTarget
    from tuner import live

    target = VllmTarget(model={"path": "/nonexistent"})
    on, off = (
        OperatingPoint(concurrency=1, max_num_seqs=8, spec_k=2),
        OperatingPoint(concurrency=1, max_num_seqs=8, spec_k=0),
    )
    monkeypatch.setattr(live, "iomp_library", lambda t: "/x/lib/libiomp5.so")
    monkeypatch.setattr(live, "PRELOAD_IOMP_FOR_SPECULATION", True)
    ev = LiveEvaluator(target)
    assert ev._speculation_env(on) == {"LD_PRELOAD": "/x/lib/libiomp5.so"} and ev._speculation_env(off) == {}
    assert LiveEvaluator(target, speculation_env={})._speculation_env(on) == {}
    mine = target.model_copy(update={"env": {"LD_PRELOAD": "/my/tcmalloc.so"}})
    assert LiveEvaluator(mine)._speculation_env(on) == {}
    monkeypatch.setattr(live, "PRELOAD_IOMP_FOR_SPECULATION", False)
    assert LiveEvaluator(target)._speculation_env(on) == {}
