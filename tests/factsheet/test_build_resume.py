"""`factsheet build --resume` reuses what an earlier (killed) build checkpointed when its spec section and
target are unchanged, and says so; without --resume a non-empty output folder is refused.

Known truth: a reused measurement is the very one the earlier build made (same start time, same raw
records digest); a re-measured one starts later. The mock server's capacity is exactly 4 (4 slots,
p99 E2EL threshold between one and two service times), so the capacity search is deterministic.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.mock_spec import e2el_slo

pytestmark = pytest.mark.system

ROOT = Path(__file__).resolve().parents[2]
CAPACITY = {"knob": "concurrency", "start": 2, "max_value": 8, "num_requests": 12, "confirm_requests": 16}
SLOTS = MockServerConfig(model="mock-model", ttft_ms=40, itl_ms=10, slots=4)  # 40 + 7 × 10 = 110 ms


def _spec(tmp_path: Path, url: str, endpoint_spec, second_requests: int = 12) -> Path:
    """The spec with a capacity search; `second_requests` is the second load point's request count."""
    overrides = {"load": {"slo": e2el_slo(205), "capacity": CAPACITY}}
    return endpoint_spec(tmp_path, url, points=((1, 4), (4, second_requests)), overrides=overrides)


def _build(spec: Path, out: Path, *flags: str):
    return CliRunner().invoke(app, ["build", str(spec), "-o", str(out), *flags])


def _sheet(out: Path) -> dict:
    return json.loads((out / "factsheet.json").read_text())


@pytest.fixture(scope="module")
def slots_url():
    with running(SLOTS) as url:
        yield url


@pytest.fixture(scope="module")
def first(tmp_path_factory, slots_url, endpoint_spec):
    """One complete build: its spec, output folder and factsheet."""
    folder = tmp_path_factory.mktemp("first")
    spec = _spec(folder, slots_url, endpoint_spec)
    result = _build(spec, folder / "out")
    assert result.exit_code == 0, result.output
    return spec, folder / "out", _sheet(folder / "out")


def _copy(out: Path, dest: Path) -> Path:
    subprocess.run(["cp", "-a", str(out), str(dest)], check=True)
    return dest


def test_a_non_empty_output_folder_is_refused_without_resume(first):
    spec, out, _ = first
    before = {p: p.stat().st_mtime_ns for p in out.rglob("*")}
    result = _build(spec, out)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "not empty" in lines[0] and "--resume" in lines[0]
    assert {p: p.stat().st_mtime_ns for p in out.rglob("*")} == before  # nothing touched


def test_resume_and_overwrite_together_are_refused(first, tmp_path):
    spec, _, _ = first
    result = _build(spec, tmp_path / "out", "--resume", "--overwrite")
    assert result.exit_code == 2 and "choose one" in result.output


def test_resume_after_a_kill_reuses_the_checkpointed_points_and_says_so(first, tmp_path):
    spec, out, sheet = first
    # What a build killed during the second load point leaves: the first point's checkpoint and
    # records, nothing of the second, no factsheet.
    out = _copy(out, tmp_path / "out")
    for name in ("factsheet.json", "factsheet.html", "factsheet.pdf", "measurements/load-02.json"):
        (out / name).unlink()
    result = _build(spec, out, "--resume")
    assert result.exit_code == 0, result.output
    assert "resume: reused load 1/2: concurrency=1" in result.output
    assert "load 2/2: concurrency=4, 12 requests" in result.output  # measured again
    resumed = _sheet(out)
    old, new = sheet["load"]["points"], resumed["load"]["points"]
    assert new[0] == old[0]  # the very measurement, records digest included
    assert new[1]["result"]["started_at"] > old[1]["result"]["started_at"]
    # The capacity probes and confirmation were checkpointed too: all replayed, same answer.
    probes = len(sheet["load"]["capacity"]["records"])
    assert sheet["load"]["capacity"]["result"]["points"][-1]["confirmation"]
    assert result.output.count("resume: reused capacity ") == probes
    assert resumed["load"]["capacity"] == sheet["load"]["capacity"]
    assert f"resume: reused {1 + probes} measurement(s)" in result.output


def test_a_changed_spec_section_is_measured_again(first, tmp_path, slots_url, endpoint_spec):
    _, out, sheet = first
    out = _copy(out, tmp_path / "out")
    spec = _spec(tmp_path, slots_url, endpoint_spec, second_requests=14)
    result = _build(spec, out, "--resume")
    assert result.exit_code == 0, result.output
    assert "resume: reused load 1/2: concurrency=1" in result.output
    assert "resume: load 2/2: concurrency=4 measured again (spec changed)" in result.output
    assert _sheet(out)["load"]["points"][1]["result"]["point"]["num_requests"] == 14


def test_another_target_is_measured_again(first, tmp_path, endpoint_spec):
    _, out, _ = first
    out = _copy(out, tmp_path / "out")
    with running(SLOTS) as other:  # the same server software on another address: another target
        spec = _spec(tmp_path, other, endpoint_spec)
        result = _build(spec, out, "--resume")
    assert result.exit_code == 0, result.output
    assert not any(line.startswith("resume: reused") for line in result.output.splitlines())
    assert "resume: load 1/2: concurrency=1 measured again (target changed)" in result.output
    assert "resume: nothing reused" in result.output


def test_altered_raw_records_are_not_reused(first, tmp_path):
    spec, out, _ = first
    out = _copy(out, tmp_path / "out")
    with (out / "records" / "load-01.jsonl").open("ab") as f:
        f.write(b"\n")
    result = _build(spec, out, "--resume")
    assert result.exit_code == 0, result.output
    assert "load 1/2: concurrency=1 measured again (its raw records records/load-01.jsonl do not match" in (
        result.output.replace("\n", " ")
    )


def test_overwrite_replaces_the_earlier_build(first, tmp_path):
    spec, out, sheet = first
    out = _copy(out, tmp_path / "out")
    (out / "measurements" / "load-09.json").write_text("{}")  # a stale checkpoint of some other build
    result = _build(spec, out, "--overwrite")
    assert result.exit_code == 0, result.output
    assert "resume:" not in result.output
    assert not (out / "measurements" / "load-09.json").exists()
    assert (
        _sheet(out)["load"]["points"][0]["result"]["started_at"]
        > sheet["load"]["points"][0]["result"]["started_at"]
    )


def test_kill_9_during_a_build_then_resume(tmp_path, slots_url, endpoint_spec):
    """The real sequence: the CLI is killed outright in its second load point, then resumed."""
    spec = _spec(tmp_path, slots_url, endpoint_spec, second_requests=400)
    out, log = tmp_path / "out", tmp_path / "build.log"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    with log.open("wb") as f:
        cli = subprocess.Popen(
            [sys.executable, "-m", "factsheet", "build", str(spec), "-o", str(out)],
            stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT,
        )  # fmt: skip
    try:
        deadline = time.monotonic() + 90
        while "load 2/2" not in log.read_text() and cli.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert cli.poll() is None, log.read_text()
        time.sleep(0.5)
        cli.send_signal(signal.SIGKILL)
        cli.wait(10)
    finally:
        cli.kill()
    assert (out / "measurements" / "load-01.json").is_file() and not (out / "factsheet.json").exists()
    assert _build(spec, out).exit_code == 2  # not overwritten unasked
    result = _build(spec, out, "--resume")
    assert result.exit_code == 0, result.output
    assert "resume: reused load 1/2: concurrency=1" in result.output
    assert not list((out / "measurements").glob(".*")) and not list(
        (out / "records").glob(".*")
    )  # no torn file
