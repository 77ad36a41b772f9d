"""Progress: one bar per load point, driven to done = total by the probe; on a terminal a bar shows the
time left, in a log a line a minute says done/total and the time left (fake clock: known truth)."""

from io import StringIO

import pytest
from rich.console import Console

from factsheet.builder.pipeline import build
from factsheet.cli.progress import bars, log_bars
from factsheet.spec.build import load_spec
from probes.core.progress import duration, time_left_s
from tests.support.mock_spec import e2el_slo

pytestmark = pytest.mark.system


def test_build_drives_one_bar_per_load_point_to_completion(tmp_path, mock_url, endpoint_spec):
    spec, raw = load_spec(endpoint_spec(tmp_path, mock_url))
    updates: dict[str, list[tuple[int, int]]] = {}

    def bar(label):
        updates[label] = []
        return lambda done, total: updates[label].append((done, total))

    build(spec, tmp_path / "model.yaml", raw, tmp_path / "out", log=lambda _: None, bar=bar)
    assert list(updates) == ["load 1/2: concurrency=1", "load 2/2: concurrency=4"]
    assert updates["load 1/2: concurrency=1"][-1] == (4, 4)
    assert updates["load 2/2: concurrency=4"][-1] == (12, 12)
    assert all(done <= total for u in updates.values() for done, total in u)


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_time_left_extrapolates_the_rate_so_far():
    assert time_left_s(20, 100, 60.0) == 240.0  # 20 in 60 s: 80 more take 240 s
    assert time_left_s(100, 100, 300.0) == 0.0
    assert time_left_s(0, 100, 60.0) is None  # no rate yet


def test_a_log_gets_a_line_a_minute_with_done_total_and_the_time_left():
    clock, lines = _Clock(), []
    update = log_bars(lines.append, clock=clock)("capacity confirmation: concurrency 3")
    # A bar at a known rate: 1 request every 3 s (20 a minute), 100 in all.
    for done in range(1, 101):
        clock.now = 1000.0 + 3 * done
        update(done, 100)
    assert lines == [
        "  capacity confirmation: concurrency 3: 20/100 done, 1 min 00 s elapsed, about 4 min 00 s left",
        "  capacity confirmation: concurrency 3: 40/100 done, 2 min 00 s elapsed, about 3 min 00 s left",
        "  capacity confirmation: concurrency 3: 60/100 done, 3 min 00 s elapsed, about 2 min 00 s left",
        "  capacity confirmation: concurrency 3: 80/100 done, 4 min 00 s elapsed, about 1 min 00 s left",
        "  capacity confirmation: concurrency 3: 100/100 done, 5 min 00 s elapsed, about 0 s left",
    ]


def test_the_log_estimate_follows_a_changing_rate_and_a_short_step_writes_nothing():
    clock, lines = _Clock(), []
    bar = log_bars(lines.append, clock=clock)
    short = bar("load 1/3: concurrency=1")
    for done in range(1, 13):  # 12 requests in 59 s: under a minute, no line
        clock.now += 59 / 12
        short(done, 12)
    assert lines == []
    slow = bar("HumanEval+ generation")
    clock.now += 90.0  # first task after 90 s (a minute passed: a line, rate 1 per 90 s)
    slow(1, 20)
    clock.now += 10.0  # 10 s later: not yet a minute since the last line
    slow(2, 20)
    clock.now += 50.0  # 150 s in, 3 done: 17 more at 50 s each
    slow(3, 20)
    assert lines == [
        "  HumanEval+ generation: 1/20 done, 1 min 30 s elapsed, about 28 min 30 s left",
        "  HumanEval+ generation: 3/20 done, 2 min 30 s elapsed, about 14 min 10 s left",
    ]


def test_duration_words():
    assert [duration(s) for s in (0, 44.6, 60, 185, 3600, 3725)] == [
        "0 s",
        "45 s",
        "1 min 00 s",
        "3 min 05 s",
        "1 h 00 min",
        "1 h 02 min",
    ]


def test_a_terminal_bar_shows_the_time_left():
    clock = _Clock()
    tty = Console(file=StringIO(), force_terminal=True, width=120)
    with bars(tty, clock=clock) as bar:
        update = bar("load 1/1")
        clock.now += 60.0
        update(20, 100)
    shown = tty.file.getvalue()
    assert "load 1/1" in shown and "20/100" in shown and "left 4 min 00 s" in shown


def test_off_a_terminal_bars_write_log_lines_not_bars():
    clock = _Clock()
    pipe = Console(file=StringIO(), force_terminal=False, width=40)  # narrower than the line: not wrapped
    with bars(pipe, clock=clock) as bar:
        update = bar("capacity [probe]: concurrency 4")
        clock.now += 30.0
        update(1, 3)  # within the first minute: nothing
        assert pipe.file.getvalue() == ""
        clock.now += 30.0
        update(2, 3)
    line = "  capacity [probe]: concurrency 4: 2/3 done, 1 min 00 s elapsed, about 30 s left\n"
    assert pipe.file.getvalue() == line


def test_a_confirmation_is_announced_with_its_expected_length(tmp_path, endpoint_spec):
    """Before the longest step starts, the log says how long it will take at its search probe's rate
    (requests / that probe's completed req/s), so a log reader knows it before the first minute's line."""
    import re

    from probes.targets.mock_server import MockServerConfig, running

    with running(MockServerConfig(model="mock-model", ttft_ms=100, itl_ms=20, slots=4)) as url:
        cap = {"knob": "concurrency", "start": 4, "max_value": 4, "num_requests": 16, "confirm_requests": 200}
        spec_path = endpoint_spec(tmp_path, url, overrides={"load": {"slo": e2el_slo(450), "capacity": cap}})
        spec, raw = load_spec(spec_path)
        lines: list[str] = []
        sheet = build(spec, spec_path, raw, tmp_path / "out", log=lines.append)
    probe, confirmation = sheet.load.capacity.result.points
    rate = probe.metrics.request_throughput  # the probe's completed req/s
    said = [line for line in lines if line.startswith("capacity confirmation: concurrency 4, 200 requests")]
    assert len(said) == 1
    # The step's bound is said when it starts: the search's probes and the confirmations at most.
    assert (
        "capacity at SLO: at most 8 probes of 16 requests, doubling up to the cap 4, then up to 2 confirmation "
        "step(s) of 200 requests" in lines
    )
    match = re.search(r"about (\d+) s at its search probe's ([\d.]+) req/s", said[0])
    assert match and float(match[2]) == float(f"{rate:.3g}")
    assert int(match[1]) == round(200 / rate)
    assert not any(line.startswith("capacity probe") and "about" in line for line in lines)  # no rate yet
