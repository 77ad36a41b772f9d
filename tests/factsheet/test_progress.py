"""Progress bars: one per load point, driven to done = total by the probe; none off a terminal."""

from io import StringIO

from rich.console import Console

from factsheet.build import build
from factsheet.progress import bars
from factsheet.spec import load_spec
from probes.core.progress import no_bars


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


def test_bars_draw_on_a_terminal_and_stay_silent_elsewhere():
    tty = Console(file=StringIO(), force_terminal=True, width=100)
    with bars(tty) as bar:
        update = bar("load 1/1")
        update(3, 3)
    assert "load 1/1" in tty.file.getvalue() and "3/3" in tty.file.getvalue()
    pipe = Console(file=StringIO(), force_terminal=False)
    with bars(pipe) as bar:
        assert bar is no_bars and bar("x") is None
    assert pipe.file.getvalue() == ""
