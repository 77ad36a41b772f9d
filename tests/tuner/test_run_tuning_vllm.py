"""run_tuning on the real embedded target (vLLM CPU build, SmolLM2-135M): slow, needs `make serving`.

Known truth checked: the default point is measured live, speculation is calibrated from vLLM's own
counters (α in (0, 1], drafts counted), the step model is fitted, and the budget holds.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from probes.core.measurement import NotMeasured
from probes.targets import VllmTarget
from tests.support.vllm_start import one_process
from tuner import OperatingPoint, SpecDecodeCounters, TunerSpec, TuningLoad, run_tuning

REPO = Path(__file__).resolve().parents[2]
SERVING_PYTHON = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(not SERVING_PYTHON.exists(), reason="serving environment missing: run `make serving`"),
]


def test_run_tuning_on_the_embedded_vllm_target():
    spec = yaml.safe_load((REPO / "models" / "smollm2-cpu.yaml").read_text())
    target = VllmTarget.model_validate(one_process(spec["target"]))
    cfg = TunerSpec(
        slo_p99_ms=6000, penalty_lambda=2.0, min_samples=16, time_budget_s=300, max_evaluations=6,
        # One climb, no confirmation: each spec_k change is a real server start (tens of seconds); restarts
        # and confirmation are tested on synthetic evaluators (tests/tuner/test_climb.py, test_confirm.py).
        restarts=0, confirm_runs=0,
        start=OperatingPoint(concurrency=8, max_num_seqs=8, spec_k=0),
        knobs={"concurrency": [4, 8], "max_num_seqs": [8], "spec_k": [0, 2]},
        workload=TuningLoad(input_len=128, output_len=32, num_requests=16),
    )  # fmt: skip
    result = run_tuning(target, cfg, log=lambda _: None)
    assert result.default.source == "live" and result.default.point == cfg.start
    cal = result.calibration
    assert [p.key() for p in cal.points] == [(8, 8, 2), (4, 8, 0), (8, 8, 0)]
    assert isinstance(cal.spec_decode, SpecDecodeCounters) and cal.spec_decode.num_drafts > 0
    assert 0 < cal.simulator.acceptance_rate <= 1
    assert cal.simulator.step.base_s + cal.simulator.step.per_seq_s > 0
    assert cal.simulator.restart_s > 5  # a vLLM start is tens of seconds, never instant
    # Calibration runs are reused, never repeated: no point is searched live twice (confirmation runs
    # re-measure on purpose and are entries of their own). Which points the climb reaches beyond the
    # calibration depends on the host's load, so that is not asserted.
    live = [e.point.key() for e in result.trace if e.source == "live" and e.decision != "confirm"]
    assert live[0] == cfg.start.key() and len(live) == len(set(live))
    assert result.budget.time_used_s <= cfg.time_budget_s
    assert not isinstance(result.fidelity, NotMeasured)
