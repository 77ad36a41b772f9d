"""Bad workload input: one line naming the file and line (or the field), exit 2, nothing written."""

import json

import pytest
from typer.testing import CliRunner

from factsheet.cli.probe import probe_app
from probes.core.errors import InputError
from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import TraceProfile
from probes.load.workloads.registry import build_plan, parse_profile

runner = CliRunner()

LINES = {
    "backwards": (['{"timestamp": 5, "input_length": 4, "output_length": 2}', '{"timestamp": 1, "input_length": 4, "output_length": 2}'], "line 2: timestamp 1 is before"),
    "negative": (['{"timestamp": 0, "input_length": 4, "output_length": 2}', '{"timestamp": 3, "input_length": -4, "output_length": 2}'], "line 2: 'input_length' must be an integer ≥ 1"),
    "missing": (['{"timestamp": 0, "input_length": 4}'], "line 1: missing 'output_length'"),
    "no_time": (['', '{"input_length": 4, "output_length": 2}'], "line 2: missing 'timestamp'"),
    "bad_ids": (['{"timestamp": 0, "input_length": 4, "output_length": 2, "hash_ids": [1, "a"]}'], "line 1: 'hash_ids'"),
    "not_json": (['{"timestamp": 0, "input_length": 4, "output_length": 2}', "{oops"], "line 2: not JSON"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(LINES))
def test_a_bad_trace_line_is_named(tmp_path, case):
    lines, needle = LINES[case]
    path = tmp_path / f"{case}.jsonl"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as err:
        build_plan(TraceProfile(path=str(path)), BuildContext(10, 0, 8, 8))
    assert f"{case}.jsonl {needle}" in str(err.value)


def test_a_binary_trace_is_named_with_its_line(tmp_path):
    path = tmp_path / "blob.jsonl"
    path.write_bytes(b'{"timestamp": 0, "input_length": 4, "output_length": 2}\n' + bytes(range(256)))
    with pytest.raises(InputError, match=r"blob.jsonl line 2: not a JSONL text line"):
        build_plan(TraceProfile(path=str(path)), BuildContext(10, 0, 8, 8))


def test_unknown_profile_and_parameter_are_named():
    with pytest.raises(InputError, match="unknown workload profile 'chat'"):
        parse_profile("chat", {})
    with pytest.raises(
        InputError, match="--workload shared-prefix: prefix_len: Input should be greater than or equal to 0"
    ):
        parse_profile("shared-prefix", {"prefix_len": "-3"})
    with pytest.raises(InputError, match="num_groups"):
        parse_profile("shared-prefix", {"num_groups": "3"})


def _probe(args, tmp_path):
    return runner.invoke(
        probe_app,
        ["load", "--base-url", "http://127.0.0.1:9", "--model", "x", "-o", str(tmp_path / "o"), *args],
    )


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--concurrency", "1", "--workload", "nope"], "unknown workload profile 'nope'"),
        (["--concurrency", "1", "--workload-option", "a=b"], "--workload-option: needs --workload"),
        (
            ["--concurrency", "1", "--workload", "shared-prefix", "--workload-option", "prefix_len"],
            "not KEY=VALUE",
        ),
        (["--concurrency", "1", "--workload", "trace", "--dataset-path", "x.jsonl"], "neither --concurrency"),
        (["--workload", "trace", "--dataset-path", "/no/such.jsonl"], "no such file"),
        (["--workload", "trace"], "path: Field required"),
    ],
)
def test_probe_load_refuses_bad_workload_flags(tmp_path, args, needle):
    res = _probe(args, tmp_path)
    assert res.exit_code == 2, res.output
    assert needle in res.output and "Traceback" not in res.output
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("workload", "points", "needle"),
    [
        ({"profile": "no-such"}, [{"concurrency": 1}], "tag 'no-such'"),
        ({"profile": "trace", "path": "t.jsonl"}, [{"rate": 1}], "a trace point gives neither"),
        ({"profile": "synthetic"}, [{"num_requests": 3}], "exactly one of concurrency"),
        ({"profile": "chat-sessions"}, [{"concurrency": 1}], "needs endpoint 'chat'"),
        ({"profile": "chat-sessions", "turns_min": 3, "turns_max": 2}, [{"concurrency": 1}], "turns_max"),
    ],
)
def test_spec_workload_errors_name_the_field(workload, points, needle):
    from pydantic import ValidationError

    from factsheet.spec.build import LoadSpec

    with pytest.raises(ValidationError) as err:
        LoadSpec.model_validate({"workload": workload, "points": points})
    assert needle in str(err.value)


def test_spec_trace_points_take_the_traces_rate(tmp_path):
    from factsheet.spec.build import LoadSpec

    path = tmp_path / "t.jsonl"
    path.write_text(
        "".join(
            json.dumps({"timestamp": 1000 + 500 * i, "input_length": 8, "output_length": 4}) + "\n"
            for i in range(5)
        )
    )
    spec = LoadSpec.model_validate(
        {
            "workload": {"profile": "trace", "path": str(path), "time_scale": 2.0},
            "points": [{"num_requests": 4}],
        }
    )
    (point,) = spec.load_points(True)
    # 4 requests, 500 ms apart, slowed 2×: 3 gaps of 1 s → 1 req/s.
    assert point.mode == "open" and point.rate == pytest.approx(1.0) and point.num_requests == 4
