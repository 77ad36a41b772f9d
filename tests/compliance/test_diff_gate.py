"""`factsheet diff` on the sweep's load points: two builds of the same mock server differ by noise alone; a
server with +30 % inter-token latency is worse beyond noise on TPOT and E2EL. Sweep points are indicative
(issue 28): reported, never deciding the exit code; their p99s (48 samples < 459) are not comparable. A
sweep alone therefore decides nothing: the verdict is inconclusive (diff 1.4.0), and its exit code the
policy's `on_inconclusive` (these tests pass it, to see the rows behind a passing gate).

The mock streams 8 tokens, the first after 100 ms and one every 40 ms after it (E2EL ≥ 380 ms); +30 % ITL
makes that 52 ms (E2EL ≥ 464 ms, +22 %). Timings this long keep a busy host's scheduling jitter (a few ms)
well inside the 10 % limits between two builds of the same server.
"""

from __future__ import annotations

import json

import pytest

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.compliance_builds import build, runner, spec_text

pytestmark = pytest.mark.system

POINTS = "- {concurrency: 4, num_requests: 48}\n"


def _build_with(tmp, itl_ms: float):
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=itl_ms)) as url:
        result, out = build(tmp, spec_text(url, POINTS))
    assert result.exit_code == 0, result.output
    return out / "factsheet.json"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("diff")
    return {
        "base": _build_with(tmp / "base", 40),
        "again": _build_with(tmp / "again", 40),
        "slower": _build_with(tmp / "slower", 52),
    }


LENIENT = "policy_version: 1\nid: lenient\ntitle: t\nversion: '1'\non_inconclusive: pass\n"


def _diff(old, new, out, *extra):
    out.mkdir(parents=True, exist_ok=True)
    (out / "lenient.yaml").write_text(LENIENT)
    extra = ("-p", str(out / "lenient.yaml"), *extra)
    result = runner.invoke(app, ["diff", str(old), str(new), "-o", str(out), *extra])
    return result, json.loads((out / "diff.json").read_text())


def test_same_server_is_no_regression(builds, tmp_path):
    result, report = _diff(builds["base"], builds["again"], tmp_path)
    assert result.exit_code == 0, result.output
    assert report["verdict"] == "inconclusive" and report["gate"] == "pass"
    assert report["verdict_reason"].startswith("no figure the gate decides on")
    bare = runner.invoke(app, ["diff", str(builds["base"]), str(builds["again"]), "-o", str(tmp_path / "b")])
    assert bare.exit_code == 1, bare.output  # on_inconclusive's default: fail
    compared = [f for f in report["figures"] if f["status"] == "compared"]
    assert {f["figure"] for f in compared} >= {"tpot_ms.p50", "e2el_ms.p50", "goodput", "slo_attainment"}
    assert all(f["indicative"] for f in compared)
    p99 = next(f for f in report["figures"] if f["figure"] == "e2el_ms.p99")
    assert p99["status"] == "not_comparable" and p99["reason"].startswith("too few samples")
    assert (tmp_path / "diff.md").read_text().startswith("### factsheet diff: **Inconclusive**")


def test_slower_itl_is_worse_on_sweep_points_which_are_indicative(builds, tmp_path):
    # Issue 28 changed this: sweep points never decide the exit code (was: exit 1, p50s regressed).
    result, report = _diff(builds["base"], builds["slower"], tmp_path)
    assert result.exit_code == 0, result.output
    assert not any(f["regression"] for f in report["figures"])
    tpot = next(f for f in report["figures"] if f["figure"] == "tpot_ms.p50")
    assert tpot["change_rel"] > 0.2 and tpot["noise"]["lower"] > 0 and tpot["indicative"]
    assert tpot["beyond_noise"] and tpot["beyond_limit"]
    assert "indicative: worse beyond noise and limit" in (tmp_path / "diff.html").read_text()


def test_limit_above_the_change_is_no_regression(builds, tmp_path):
    # p50s move by 22-30 %; p99s and goodput get limits no jitter can reach (a p99 rests on a few samples).
    metrics = ("ttft_ms", "tpot_ms", "itl_ms", "e2el_ms")
    limits = [f"--max-regression={m}.p50=80%" for m in metrics] + [
        f"--max-regression={m}.p99=1000%" for m in metrics
    ]
    limits.append("--max-regression=goodput=100%")
    result, report = _diff(builds["base"], builds["slower"], tmp_path, *limits)
    assert result.exit_code == 0, result.output
    tpot = next(f for f in report["figures"] if f["figure"] == "tpot_ms.p50")
    assert tpot["beyond_noise"] and not tpot["beyond_limit"]


def test_different_workload_is_not_comparable(builds, tmp_path, mock_url):
    result, out = build(tmp_path / "other", spec_text(mock_url, "- {concurrency: 2, num_requests: 12}\n"))
    assert result.exit_code == 0, result.output
    result, report = _diff(builds["base"], out / "factsheet.json", tmp_path / "d")
    # Nothing compared is no "No regression" (issue 20), and the verdict says so.
    assert report["verdict"] == "inconclusive"
    reasons = {f["reason"] for f in report["figures"] if f["status"] == "not_comparable"}
    assert (
        "no such load point in the old factsheet" in reasons
        and "no such load point in the new factsheet" in reasons
    )
