"""Repeats of the headline run (spec `capacity.repeats`, schema 1.7.0), against a server of known timing.

The mock serves 4 requests at once, each 100 + 7 × 20 = 240 ms; 5 users or more queue a whole service time
(≥ 480 ms). Under a p99 E2EL threshold of 450 ms capacity is exactly 4, so every repeat of the confirmation at
4 must pass, and each repeat's p99 E2EL is near 240 ms (the mock is never early, only late).
"""

from __future__ import annotations

import json
import math
import shutil

import pytest
from typer.testing import CliRunner

from factsheet.binding import header_line, parse_header
from factsheet.cli.commands import app
from factsheet.document.headline.figures import headline
from factsheet.document.headline.rebuild import (
    rebuild_interval,
    t_quantile,
)
from factsheet.document.repeats import SEED_BLOCK
from factsheet.document.schema import Factsheet
from factsheet.document.versions import DIFF_VERSION
from factsheet.spec.build import CapacitySpec
from probes.core.digests import sha256_bytes
from probes.targets.isolation import CACHE_RESET, reset_prefix_cache
from probes.targets.mock_server import MockServerConfig, running
from tests.support import mock_spec
from tests.support.mock_spec import e2el_slo

pytestmark = pytest.mark.system

MOCK = MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=4)
CAPACITY = {
    "knob": "concurrency", "start": 2, "max_value": 8, "num_requests": 16, "confirm_requests": 24, "repeats": 3,
}  # fmt: skip


def _build(tmp_path, endpoint_spec, mock=MOCK, out="out"):
    with running(mock) as url:
        spec = endpoint_spec(tmp_path, url, overrides={"load": {"slo": e2el_slo(450), "capacity": CAPACITY}})
        return CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / out)])


def _validate(path):
    return CliRunner().invoke(app, ["validate", str(path)])


@pytest.fixture(scope="module")
def holds_four(tmp_path_factory):
    """The mock holding 4 users, built once with repeats: its output folder (a test that changes it copies it)."""
    tmp = tmp_path_factory.mktemp("four")
    result = _build(tmp, mock_spec.endpoint_spec)
    assert result.exit_code == 0, result.output
    return tmp / "out"


def test_repeats_are_measured_isolated_seeded_and_rederived(tmp_path, holds_four):
    shutil.copytree(holds_four, tmp_path / "out")
    path = tmp_path / "out" / "factsheet.json"
    sheet = json.loads(path.read_text())
    cap = sheet["load"]["capacity"]
    points = cap["result"]["points"]
    assert cap["result"]["capacity"] == 4 and points[-1]["confirmation"]
    rep = cap["repeats"]
    assert rep["k"] == 3 and rep["of"] == len(points) - 1 and len(rep["runs"]) == 2
    # each further run: the same value and size, after a prefix-cache reset the endpoint answered
    for run in rep["runs"]:
        assert run["point"]["value"] == 4 and run["point"]["passed"]
        assert run["isolation"]["method"] == CACHE_RESET and run["isolation"]["done"]
        assert run["point"]["metrics"]["e2el_ms"]["n"] == 24
        assert run["system_prompts"] == []  # synthetic prompts: no system message, and the run says so
    assert cap["system_prompts"] == []
    # every run its own seed, by the rule: load.seed + 1000 × block + position
    base = sheet["load"]["points"][0]["result"]["point"]["seed"]
    assert cap["seeds"] == [base + SEED_BLOCK + i for i in range(len(points))]
    assert [r["seed"] for r in rep["runs"]] == [base + SEED_BLOCK + len(points) + j for j in range(2)]
    # page 1's capacity figure carries the rebuild interval over the three runs
    figure = next(f for f in sheet["headline"]["figures"] if f["id"].startswith("capacity"))
    rebuild = figure["rebuild"]
    assert rebuild["k"] == 3 and rebuild["passed"] == 3 and len(rebuild["values"]) == 3
    assert all(240 <= v < 450 for v in rebuild["values"])  # the mock's 240 ms, never early
    assert rebuild["interval"]["lower"] <= rebuild["mean"] <= rebuild["interval"]["upper"]
    mean, sd, low, high = rebuild_interval(rebuild["values"])
    assert math.isclose(rebuild["mean"], mean) and math.isclose(rebuild["interval"]["upper"], high)
    assert "prefix-cache reset" in rebuild["isolation"]
    # the figures of the repeated run carry theirs too
    e2el = next(f for f in sheet["headline"]["figures"] if f["id"] == "e2el_ms.p99")
    assert e2el["rebuild"]["k"] == 3 and e2el["rebuild"]["values"][0] == e2el["value"]
    html = (tmp_path / "out" / "factsheet.html").read_text()
    assert "rebuild" in html.lower()
    ok = _validate(path)
    assert ok.exit_code == 0, ok.output
    original = json.dumps(sheet)
    edits = {
        "load.capacity.repeats.runs[0].point": lambda d: d["load"]["capacity"]["repeats"]["runs"][0]["point"][
            "metrics"
        ]["e2el_ms"].update(mean=1.0),
        "load.capacity.repeats.runs[1].seed": lambda d: d["load"]["capacity"]["repeats"]["runs"][1].update(
            seed=7
        ),
        "load.capacity.repeats.runs": lambda d: d["load"]["capacity"]["repeats"]["runs"].pop(),
        "load.capacity.seeds": lambda d: d["load"]["capacity"]["seeds"].reverse(),
    }
    for name, edit in edits.items():
        doc = json.loads(original)
        edit(doc)
        path.write_text(json.dumps(doc))
        edited = _validate(path)
        assert edited.exit_code == 1 and name in edited.output, f"{name}: {edited.output}"


@pytest.mark.parametrize("k", [0, 2, 51])
def test_a_number_of_repeats_that_gives_no_interval_is_refused(k):
    with pytest.raises(ValueError, match="1 \\(no repeats\\) or 3 to 50"):
        CapacitySpec(knob="concurrency", max_value=8, num_requests=16, confirm_requests=24, repeats=k)


def test_repeats_need_a_confirmation_run_to_repeat():
    with pytest.raises(ValueError, match="repeats: needs confirm_requests"):
        CapacitySpec(knob="concurrency", max_value=8, num_requests=16, repeats=3)


def test_a_bad_repeats_is_one_line_and_exit_2(tmp_path, endpoint_spec):
    spec = endpoint_spec(
        tmp_path, "http://127.0.0.1:9", overrides={"load": {"capacity": {**CAPACITY, "repeats": 2}}}
    )
    result = CliRunner().invoke(app, ["build", str(spec), "-o", str(tmp_path / "out")])
    assert result.exit_code == 2 and "repeats" in result.output
    assert "Traceback" not in result.output and not (tmp_path / "out").exists()


def test_the_rebuild_interval_is_the_normal_prediction_interval():
    # x = 1, 2, 3: mean 2, sd 1; t(2, 0.975) = 4.3027; half-width 4.3027 · √(1 + 1/3) = 4.9683
    mean, sd, low, high = rebuild_interval([1.0, 2.0, 3.0])
    assert (mean, sd) == (2.0, 1.0)
    assert math.isclose(t_quantile(2), 4.302652729, rel_tol=1e-6)
    assert math.isclose(high - mean, 4.302652729 * math.sqrt(4 / 3), rel_tol=1e-6)
    assert math.isclose(mean - low, high - mean)
    with pytest.raises(ValueError):
        rebuild_interval([1.0, 2.0])


def test_a_target_without_a_reset_says_the_cache_was_not_reset():
    with running(MOCK.model_copy(update={"prefix_cache_reset": False})) as url:
        isolation = reset_prefix_cache(url, None)
    assert isolation.method == CACHE_RESET and not isolation.done and "HTTP 404" in isolation.detail
    with running(MOCK) as url:
        assert reset_prefix_cache(url, None).done


def test_diff_decides_a_repeated_run_by_its_between_run_spread(tmp_path, endpoint_spec, holds_four):
    """Both sides repeated the confirmation: its figures are compared by Welch's t-test over the repeats (a p99
    from 24 samples per run, too few within one run, by the repeats' spread alone). A token 10 ms slower (E2EL
    240 → 310 ms, capacity still 4) is a regression on page 1's p99 E2EL, the p50 reported beside it
    (indicative: page 1 states no rebuild interval for it); the same build is not."""
    (tmp_path / "b").mkdir()
    slower = MOCK.model_copy(update={"itl_ms": 30})
    assert _build(tmp_path / "b", endpoint_spec, mock=slower).exit_code == 0
    old, new = holds_four / "factsheet.json", tmp_path / "b" / "out" / "factsheet.json"
    same = CliRunner().invoke(app, ["diff", str(old), str(old), "-o", str(tmp_path / "same")])
    assert same.exit_code == 0, same.output
    result = CliRunner().invoke(app, ["diff", str(old), str(new), "-o", str(tmp_path / "d")])
    report = json.loads((tmp_path / "d" / "diff.json").read_text())
    assert report["diff_version"] == DIFF_VERSION and "between-run" in report["noise_scope"]
    row = next(f for f in report["figures"] if f["figure"] == "e2el_ms.p99" and f["old_repeats"] is not None)
    assert len(row["old_repeats"]) == 3 and len(row["new_repeats"]) == 3
    p50 = next(f for f in report["figures"] if f["figure"] == "e2el_ms.p50" and f["old_repeats"] is not None)
    assert p50["indicative"] and not p50["regression"] and p50["change_rel"] > 0.2
    assert "Welch" in row["noise"]["method"] and row["noise"]["alpha"] < 0.05
    assert result.exit_code == 1, result.output
    # measured host load: a busy host holds the verdict (tests/compliance/test_diff_claims.py sets it)
    assert row["not_decided"] == "busy host" if row["busy_host"] else row["regression"]
    # The host's speed before each run compared (a reference kernel; set here as a 1.5× slower host would
    # state it): noted on every row compared on the repeats, never applied, so the slower tokens are still a
    # regression (factsheet/compliance/host_speed.py says why).
    a = _on_host(old.parent, tmp_path / "host" / "a", 10.0, 0.9)
    b = _on_host(new.parent, tmp_path / "host" / "b", 15.0, 0.9)
    result = CliRunner().invoke(app, ["diff", str(a), str(b), "-o", str(tmp_path / "host" / "diff")])
    report = json.loads((tmp_path / "host" / "diff" / "diff.json").read_text())
    rows = [f for f in report["figures"] if f["old_repeats"] is not None]
    assert rows and all(f["host_ratio"] == pytest.approx(1.5) for f in rows)
    assert all(any("took 1.50× the baseline's" in n for n in f["notes"]) for f in rows)
    tpot = next(f for f in rows if f["figure"] == "tpot_ms.p50")
    assert tpot["new"] / tpot["old"] == pytest.approx(1.5, rel=0.1)  # as measured: 20 → 30 ms
    assert report["verdict"] == ("inconclusive" if tpot["busy_host"] else "regression"), result.output
    # A candidate that restates its host as slower in factsheet.json alone is refused: its records bind the
    # kernel's time and the server's share the build measured, so its figures are unsupported.
    forged = tmp_path / "forged"
    shutil.copytree(new.parent, forged)
    sheet = json.loads((forged / "factsheet.json").read_text())
    cap = sheet["load"]["capacity"]
    for load in [*cap["host_load"], *(r["host_load"] for r in cap["repeats"]["runs"])]:
        if load.get("speed"):
            load["speed"]["reference_ms"] *= 1.5
    (forged / "factsheet.json").write_text(json.dumps(sheet))
    result = CliRunner().invoke(
        app, ["diff", str(old), str(forged / "factsheet.json"), "-o", str(tmp_path / "f")]
    )
    assert json.loads((tmp_path / "f" / "diff.json").read_text())["verdict"] == "unsupported", result.output
    assert result.exit_code == 1


def test_two_answers_are_compared_by_the_capacity_row_alone(tmp_path, endpoint_spec, holds_four):
    """Known truth: one server holds 4 users, the other 5 (slots), each answer held in all 3 runs. Their
    confirmation runs are at different loads, so those rows are not compared: the capacity row, decided on
    both sides' repeats, decides in their place. 4 → 5 is no regression (exit 0). 5 → 4 is one: the
    candidate's range ends at 5 on a short probe (its long runs were at 4, where it held), so the fall is
    decided by that probe's p99 at 5, no lower than its 95 % lower end, against the baseline's prediction
    interval over its 3 runs at 5 (diff 1.6.0: about 480 ms against about 245)."""
    (tmp_path / "five").mkdir()
    assert _build(tmp_path / "five", endpoint_spec, mock=MOCK.model_copy(update={"slots": 5})).exit_code == 0
    four, five = holds_four / "factsheet.json", tmp_path / "five" / "out" / "factsheet.json"
    for old, new, verdict in ((four, five, "no_regression"), (five, four, "regression")):
        out = tmp_path / f"{old.parent.parent.name}-{new.parent.parent.name}"
        result = CliRunner().invoke(app, ["diff", str(old), str(new), "-o", str(out)])
        report = json.loads((out / "diff.json").read_text())
        cap = next(f for f in report["figures"] if f["figure"] == "capacity_at_slo")
        assert {cap["old"], cap["new"]} == {4, 5}, result.output
        assert cap["between_run"]
        check = cap["capacity_check"]
        if verdict == "regression":  # the fall, by the probe at 5 against the baseline's runs at 5
            assert (check["old_value"], check["new_value"], check["new_runs"]) == (5, 5, [])
            assert check["new_probe_lower"] > 1.5 * max(check["old_repeats"]) and check["worse"]
        else:
            assert check is None
        rows = [f for f in report["figures"] if f["scope"].startswith("capacity (synthetic) confirmation")]
        assert rows and all(
            f["status"] == "not_comparable" and f["decided_by"] == "capacity_at_slo" for f in rows
        )
        # a busy host (measured, not set) holds a worse capacity row open rather than deciding it
        expected = "inconclusive" if verdict == "regression" and cap["busy_host"] else verdict
        assert report["verdict"] == expected, result.output
        assert result.exit_code == (0 if expected == "no_regression" else 1)


def _on_host(folder, to, reference_ms: float, server: float):
    """A copy of a build's folder whose timed runs (a repeated step's) state the host's speed `reference_ms`
    and the server's share `server` of the host's CPU, on a host otherwise quiet, as a build on such a host
    states them: each run's records header restated to bind them, and page 1 (whose rebuild rows count the
    runs on a busy host) restated from them, as the build states them."""
    shutil.copytree(folder, to)
    sheet = json.loads((to / "factsheet.json").read_text())
    cap = sheet["load"]["capacity"]
    runs = [*zip(cap["host_load"], cap["records"], strict=True)]
    runs += [(r["host_load"], r["records"]) for r in cap["repeats"]["runs"]]
    timed = [(load, ref) for load, ref in runs if load.get("speed")]
    assert timed  # the build timed its repeated step's runs
    for load, ref in timed:
        load["speed"].update(reference_ms=reference_ms, fastest_ms=reference_ms, slowest_ms=reference_ms)
        load.update(server=server, other=0.0, busy=False)
        path = to / ref["path"]
        first, rest = path.read_bytes().split(b"\n", 1)
        context = parse_header(first).context.model_copy(
            update={"host_speed_ms": reference_ms, "server_share": server}
        )
        path.write_bytes(header_line(context) + rest)
        ref["sha256"] = sha256_bytes(path.read_bytes())
    sheet["headline"] = headline(Factsheet.model_validate(sheet)).model_dump(mode="json")
    (to / "factsheet.json").write_text(json.dumps(sheet))
    return to / "factsheet.json"
