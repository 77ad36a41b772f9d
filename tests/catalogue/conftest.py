"""Three real builds of one deployment against the mock server, made once per session: the second as the
first (same timing: a change within noise), the third slower (E2EL 55 → 130 ms: beyond noise), with a
capacity search, HumanEval+ on two tasks and energy on a fake powercap counter at a known power, so every
trend has points; builds 1 and 3 are signed. A fourth build of another deployment serves the incremental test.
Known truth is what each factsheet JSON states, read here with json (not the catalogue's reader)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.fake_rapl import wall_clock_counter
from tests.support.humaneval_path import DATASET, records
from tests.support.spec_builder import DELETE, merged, write_spec

runner = CliRunner()
# HumanEval+ Mini (the same tasks, a dozen plus inputs instead of a thousand): the expected outputs take
# a second, not half a minute, per build.
MINI = DATASET.with_name("HumanEvalPlus-Mini-v0.1.10.jsonl.gz")


@dataclass(frozen=True)
class Build:
    folder: Path  # holds factsheet.json and its documents
    watts: float


def _spec(name: str, url: str, overrides: dict | None = None) -> dict:
    spec = {
        "spec_version": 1,
        "name": name,
        "model": {"name": "mock-model", "version": "1"},
        "target": {"kind": "endpoint", "base_url": url, "model": "mock-model"},
        "load": {
            "input_len": 16,
            "output_len": 8,
            # 500 ms: even the slow build's first probes (140 ms a request) pass with room for a busy host's
            # stalls, so every build states a capacity (at 200 ms a 60 ms stall left build 3 without one).
            "slo": {"e2el_ms": 500},
            "capacity": {"knob": "concurrency", "start": 1, "max_value": 8, "num_requests": 16},
            "points": [{"concurrency": 2, "num_requests": 60}],
        },
    }
    return merged(spec, overrides)


# A gate every mock build passes (p99 E2EL within 5 s), run by build 1 so the index shows a verdict.
POLICY = """\
policy_version: 1
id: p99-generous
title: p99 E2EL within 5 s
version: "1"
rules:
  - id: p99-e2el
    title: p99 E2EL within 5000 ms
    field: load.points[headline].result.metrics.e2el_ms.percentiles.p99
    op: "<="
    threshold: 5000
    unit: ms
    evidence: {measured: true, raw_records: true}
"""


def _build(
    tmp: Path, name: str, server: MockServerConfig, watts: float, key: Path | None, gate: bool = False
) -> Build:
    tmp.mkdir(parents=True)
    if gate:
        (tmp / "gate.yaml").write_text(POLICY)
    cap_root = tmp / "powercap"  # a RAPL package counter at `watts` while the build runs
    extra = {
        "energy": {"idle_s": 0.5, "gpu": False, "sample_interval_s": 0.05, "powercap_root": str(cap_root)},
        "accuracy": {"dataset": str(MINI), "subset": {"first": 2}, "max_tokens": 64},
    }
    if gate:
        extra["compliance"] = {"policies": ["gate.yaml"]}
    with wall_clock_counter(cap_root, watts), running(server) as url:
        write_spec(tmp / "model.yaml", _spec(name, url, extra))
        args = ["build", str(tmp / "model.yaml"), "-o", str(tmp / "out")]
        result = runner.invoke(app, args + (["--sign-key", str(key)] if key else []))
    assert result.exit_code == 0, result.output
    return Build(tmp / "out", watts)


@pytest.fixture(scope="session")
def keys(tmp_path_factory) -> tuple[Path, Path]:
    """(private, public) of the key builds 1 and 3 are signed with."""
    folder = tmp_path_factory.mktemp("keys") / "k"
    assert runner.invoke(app, ["keygen", "-o", str(folder)]).exit_code == 0
    return folder / "factsheet-signing.key", folder / "factsheet-signing.pub"


@pytest.fixture(scope="session")
def other_key(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("other-key") / "k"
    assert runner.invoke(app, ["keygen", "-o", str(folder)]).exit_code == 0
    return folder / "factsheet-signing.pub"


@pytest.fixture(scope="session")
def builds(tmp_path_factory, keys) -> list[Build]:
    """Three builds of the deployment 'catalogue-demo', in this order, under one folder `builds[0].folder
    .parent.parent` (releases/1, releases/2, releases/3)."""
    if not MINI.is_file():
        pytest.skip(f"HumanEval+ Mini not found at {MINI}")
    task0 = records()[0]
    # Every reply is task 0's canonical solution: task 0 passes, task 1 fails, so pass@1 = 0.5 exactly.
    solution = f"```python\n{task0['prompt']}{task0['canonical_solution']}```"
    root = tmp_path_factory.mktemp("releases")
    fast = dict(model="mock-model", ttft_ms=20, itl_ms=5, slots=2, reply_text=solution)
    slow = dict(fast, ttft_ms=60, itl_ms=10)
    return [
        _build(root / "1", "catalogue-demo", MockServerConfig(**fast), 30.0, keys[0], gate=True),
        _build(root / "2", "catalogue-demo", MockServerConfig(**fast), 30.0, None),
        _build(root / "3", "catalogue-demo", MockServerConfig(**slow), 60.0, keys[0]),
    ]


@pytest.fixture(scope="session")
def releases(builds) -> Path:
    return builds[0].folder.parent.parent


@pytest.fixture(scope="session")
def other_build(tmp_path_factory) -> Path:
    """A small build of another deployment (no capacity, accuracy or energy), for the incremental test."""
    tmp = tmp_path_factory.mktemp("other")
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url:
        load = {"capacity": DELETE, "points": [{"concurrency": 2, "num_requests": 12}]}
        write_spec(tmp / "model.yaml", _spec("other-deployment", url, {"load": load}))
        result = runner.invoke(app, ["build", str(tmp / "model.yaml"), "-o", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    return tmp / "out"
