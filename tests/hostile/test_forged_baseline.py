"""Issue 42, as filed: one figure of the *old* factsheet edited (a repeat's p99, the confirmation's goodput
to 999), its records untouched, made `factsheet diff OLD_FORGED NEW` exit 0, "No regression", "0 of 31
figure(s) compared", against a genuinely slower candidate that the genuine baseline does not pass. The
baseline is now held to its records as the candidate is: `unsupported`, exit 1, one line naming the figure.

Known truth: the mock serves 4 requests at once, each 100 + 7 × 20 = 240 ms (the slower candidate: 7 × 30,
310 ms); under a p99 E2EL threshold of 450 ms both capacities are 4, and each confirmation at 4 is repeated
k = 3 times.
"""

from __future__ import annotations

import json
import shutil

import pytest

from factsheet.cli.commands import app
from probes.targets.mock_server import MockServerConfig, running
from tests.support.compliance_builds import runner
from tests.support.mock_spec import e2el_slo, endpoint_spec_dict
from tests.support.spec_builder import write_spec

pytestmark = pytest.mark.system

CAPACITY = {
    "knob": "concurrency", "start": 2, "max_value": 8, "num_requests": 16, "confirm_requests": 24, "repeats": 3,
}  # fmt: skip


def _build(folder, itl_ms: float):
    folder.mkdir(parents=True)
    spec = endpoint_spec_dict("", overrides={"load": {"slo": e2el_slo(450), "capacity": CAPACITY}})
    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=itl_ms, slots=4)) as url:
        spec["target"]["base_url"] = url
        write_spec(folder / "model.yaml", spec)
        result = runner.invoke(app, ["build", str(folder / "model.yaml"), "-o", str(folder / "out")])
    assert result.exit_code == 0, result.output
    return folder / "out" / "factsheet.json"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("forged-baseline")
    return {"base": _build(tmp / "base", 20), "slower": _build(tmp / "slower", 30)}


def _forged(base, dest, edit):
    shutil.copytree(base.parent, dest)
    doc = json.loads((dest / "factsheet.json").read_text())
    edit(doc["load"]["capacity"])
    (dest / "factsheet.json").write_text(json.dumps(doc, indent=2))
    return dest / "factsheet.json"


def _diff(old, new, out):
    result = runner.invoke(app, ["diff", str(old), str(new), "-o", str(out)])
    return result, json.loads((out / "diff.json").read_text())


def _repeat_p99(cap):
    cap["repeats"]["runs"][0]["point"]["metrics"]["e2el_ms"]["percentiles"]["p99"] = 1.0


def _goodput(cap):
    cap["result"]["points"][-1]["metrics"]["goodput"] = 999.0


@pytest.mark.parametrize(
    ("edit", "figure"),
    [
        (_repeat_p99, "load.capacity.repeats.runs[0].point.metrics.e2el_ms.percentiles.p99"),
        (_goodput, "load.capacity.result.points[5].metrics.goodput"),
    ],
)
def test_a_forged_baseline_is_refused_against_a_slower_candidate(builds, tmp_path, edit, figure):
    genuine, report = _diff(builds["base"], builds["slower"], tmp_path / "genuine")
    assert genuine.exit_code == 1 and report["verdict"] in ("regression", "inconclusive"), genuine.output
    forged = _forged(builds["base"], tmp_path / "forged", edit)
    result, report = _diff(forged, builds["slower"], tmp_path / "out")
    assert result.exit_code == 1, result.output  # was 0, "No regression"
    assert report["verdict"] == "unsupported" and report["gate"] == "fail"
    if figure.endswith("goodput"):  # the confirmation is the search's last run, wherever the search went
        last = len(json.loads(forged.read_text())["load"]["capacity"]["result"]["points"]) - 1
        figure = figure.replace("[5]", f"[{last}]")
    assert report["verdict_reason"].startswith(
        f"the baseline's figures are not supported by its records: {figure}"
    )
    last_line = result.output.strip().splitlines()[-1]
    assert last_line.startswith("check failed: the baseline's figures") and figure in last_line
