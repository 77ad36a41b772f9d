"""A factsheet shaped like the demo's (three load points, a capacity search with its confirmation and repeats,
a second workload's search beside it, a policy gate, the identity declared), built against the mock server: the reader tests measure its pages."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.mock_spec import P99_POLICY, e2el_slo, endpoint_spec

MODEL = {
    "name": "Mock-135M-Instruct",
    "version": "test build",
    "owner": "the test suite",
    "license": "Apache-2.0",
    "architecture": "mock decoder",
    "parameters": 134515008,
    "intended_use": "demonstration target for the reader tests",
    "out_of_scope": "any decision of consequence",
}
GOVERNANCE = {
    "release_date": "2024-11-01",
    "base_model": "Mock-135M (base)",
    "adapters": ["none"],
    "modalities": [{"modality": "text", "direction": "input", "max_size": 2048, "unit": "tokens"},
                   {"modality": "text", "direction": "output", "max_size": 384, "unit": "tokens"}],
    "distribution_channels": ["PyPI package", "OpenAI-compatible endpoint"],
    "acceptable_use_policy": "demonstrations and tests only",
    "known_limitations": ["answers in English only", "no safety tuning"],
    "standards": ["ISO/IEC 42001:2023"],
    "decision_thresholds": [{"figure": "capacity_at_slo", "threshold": ">= 4 concurrent users"}],
}  # fmt: skip
# The demo's number of runs (models/smollm2-cpu.yaml: 21 capacity runs over two searches), against a mock of
# SLOTS slots: a request waits for a slot above that many users, doubling its E2EL (~240 ms alone, ~480 ms
# queued) across the 450 ms SLO. Each search doubles from 4 until 32 fails, then bisects: the load section's
# 4, 8, 16, 32, 24, 28, 26, 25 (8 probes, bracket [24, 25]), the chat sessions' 4, 8, 16, 32, 24, 28, 26 (its
# point budget of 7 spent, bracket [24, 26]); each confirms 24 and repeats it twice: 11 + 10 runs.
SLOTS = 24
CAPACITY = {"knob": "concurrency", "start": 4, "num_requests": 48, "max_points": 8, "confirm_requests": 24,
            "repeats": 3}  # fmt: skip
SESSIONS = {"profile": "chat-sessions", "system_prompt_len": 16, "turns_min": 2, "turns_max": 2,
            "user_turn_len": 8, "output_len": 8}  # fmt: skip
COMPARED_CAPACITY = {**CAPACITY, "max_points": 7}
DEMO_CAPACITY_RUNS = (
    21  # the demo's searches: 7 probes and 4 confirmations; 7 probes, a confirmation, 2 repeats
)


def build_demo_like(folder: Path, overrides: dict | None = None) -> Path:
    """Build into `folder`/out and return that folder (raises with the CLI's output when the build fails)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gate.yaml").write_text(P99_POLICY.format(name="gate", threshold=10_000))
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=SLOTS)) as url:
        spec = endpoint_spec(
            folder,
            url,
            points=((1, 8), (2, 12), (4, 16)),
            overrides={
                "model": MODEL,
                "governance": GOVERNANCE,
                "load": {
                    "slo": e2el_slo(450),
                    "server_view": {"interval_s": 0.2},
                    "capacity": CAPACITY,
                    "compared_workloads": [
                        {"workload": SESSIONS, "endpoint": "chat", "capacity": COMPARED_CAPACITY}
                    ],
                },
                **(overrides or {}),
            },
            extra="compliance: {policies: [gate.yaml]}\n",
        )
        r = CliRunner().invoke(app, ["build", str(spec), "-o", str(folder / "out")])
    if r.exit_code != 0:
        raise AssertionError(f"demo-like build failed ({r.exit_code}): {r.output[-2000:]}")
    return folder / "out"


if __name__ == "__main__":
    import sys

    print(build_demo_like(Path(sys.argv[1])))
