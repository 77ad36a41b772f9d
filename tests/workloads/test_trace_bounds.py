"""The trace reader trusts no size (issue 30): streamed, size before read, each line through the bounded
parser; a hostile line is one line naming the line and the field, exit 2, quickly and in bounded memory."""

import json
import time
import tracemalloc

import pytest
from typer.testing import CliRunner

from factsheet.cli.probe import probe_app
from probes.core.errors import InputError
from probes.core.untrusted import limits
from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import TraceProfile
from probes.load.workloads.registry import build_plan, parse_profile
from probes.load.workloads.trace import read_trace

GOOD = '{"timestamp": 0, "input_length": 4, "output_length": 2}'

CASES = {
    "nested": ("[" * 30_000 + "]" * 30_000, "line 2: nested more than 64 deep"),
    "digits": ('{"timestamp": 1' + "0" * 4000 + ', "input_length": 4, "output_length": 2}', "line 2: an integer of 4,001 digits"),
    "huge_input": ('{"timestamp": 1, "input_length": 1000000000000, "output_length": 2}', "line 2: 'input_length' is 1,000,000,000,000 tokens, over the limit of 1,048,576"),
    "huge_output": ('{"timestamp": 1, "input_length": 4, "output_length": 1000000000000}', "line 2: 'output_length' is 1,000,000,000,000 tokens, over the limit"),
    "many_ids": ('{"timestamp": 1, "input_length": 4, "output_length": 2, "hash_ids": [' + ",".join(["1"] * 6000) + "]}", "line 2: 'hash_ids' holds 6,000 ids, over the limit of 4,096"),
    "inf_time": ('{"timestamp": 1e400, "input_length": 4, "output_length": 2}', "line 2: "),
    "nan_time": ('{"timestamp": NaN, "input_length": 4, "output_length": 2}', "line 2: "),
    "long_line": ('{"timestamp": 1, "input_length": 4, "output_length": 2, "x": "' + "a" * 70_000 + '"}', "line 2: longer than 65,536 bytes"),
}  # fmt: skip


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_hostile_trace_line_is_refused_quickly_naming_its_line(tmp_path, case):
    line, needle = CASES[case]
    path = tmp_path / f"{case}.jsonl"
    path.write_text(GOOD + "\n" + line + "\n" + GOOD + "\n")
    t = time.perf_counter()
    with pytest.raises(InputError) as err:
        build_plan(TraceProfile(path=str(path)), BuildContext(10, 0, 8, 8))
    assert time.perf_counter() - t < 2.0
    assert f"{case}.jsonl {needle}" in str(err.value)
    assert "\n" not in str(err.value) and len(str(err.value)) < 300


def test_450000_hash_ids_in_one_line_are_refused_fast_and_small(tmp_path):
    path = tmp_path / "ids.jsonl"
    ids = ",".join(str(i) for i in range(450_000))
    path.write_text('{"timestamp": 0, "input_length": 4, "output_length": 2, "hash_ids": [' + ids + "]}\n")
    tracemalloc.start()
    t = time.perf_counter()
    with pytest.raises(InputError, match="ids.jsonl line 1: longer than 65,536 bytes"):
        read_trace(str(path), 10)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert time.perf_counter() - t < 1.0 and peak < 2 * 1024 * 1024


def test_a_huge_file_is_refused_before_a_byte_is_read(tmp_path):
    path = tmp_path / "sparse.jsonl"
    with path.open("wb") as f:
        f.truncate(limits.MAX_TRACE_BYTES + 1)  # sparse: no disk used
    with pytest.raises(
        InputError, match=r"sparse.jsonl: 1,073,741,825 bytes, over the limit of 1,073,741,824"
    ):
        read_trace(str(path), 10)


def test_only_the_lines_asked_for_are_held(tmp_path):
    # The reader streams: the lines past `limit` are not parsed (a broken one there is never seen), and
    # the file digest is still that of the whole file, as before.
    path = tmp_path / "t.jsonl"
    path.write_text(GOOD + "\n" + GOOD.replace("0", "5", 1) + "\n" + "{broken\n")
    digest, reqs = read_trace(str(path), 2)
    assert [r.timestamp_ms for r in reqs] == [0.0, 5.0]
    import hashlib

    assert digest == "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_run_may_ask_for_any_total_of_prompt_tokens_each_line_stays_bounded(tmp_path):
    # Prompts are made one at a time when due (issue 41 item 6): 200 lines of the longest prompt (2.1e8
    # tokens, over the 2^27 a run was once held to) read; one token more in a line is still refused.
    path = tmp_path / "big.jsonl"
    line = '{"timestamp": 0, "input_length": 1048576, "output_length": 2}'
    path.write_text("\n".join([line] * 200) + "\n")
    _, reqs = read_trace(str(path), 200)
    assert sum(r.input_length for r in reqs) == 200 * 2**20 > 2**27
    path.write_text(line + "\n" + line.replace("1048576", "1048577") + "\n")
    with pytest.raises(
        InputError, match=r"big.jsonl line 2: 'input_length' is 1,048,577 tokens, over the limit"
    ):
        read_trace(str(path), 2)


def test_a_trace_spanning_ages_is_refused_at_time_scale_or_span(tmp_path):
    with pytest.raises(InputError, match="time_scale: Input should be less than or equal to 1000"):
        parse_profile("trace", {"path": "x.jsonl", "time_scale": "1e9"})


@pytest.mark.parametrize(
    ("key", "value"), [("prefix_len", "1000000000000"), ("user_turn_len", "1000000000000"), ("block_size", "1000000000000")]
)  # fmt: skip
def test_a_profile_size_of_10_12_is_refused_with_its_maximum(key, value):
    profile = {"prefix_len": "shared-prefix", "user_turn_len": "chat-sessions", "block_size": "trace"}[key]
    params = {key: value, **({"path": "t.jsonl"} if profile == "trace" else {})}
    with pytest.raises(InputError, match=rf"{key}: Input should be less than or equal to 1048576"):
        parse_profile(profile, params)


def test_the_cli_refuses_a_profile_size_in_one_line(tmp_path):
    res = CliRunner().invoke(
        probe_app,
        ["load", "--base-url", "http://127.0.0.1:9", "--model", "m", "--concurrency", "1",
         "--workload", "shared-prefix", "--workload-option", "prefix_len=1000000000000", "-o", str(tmp_path / "o")],
    )  # fmt: skip
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert "prefix_len: Input should be less than or equal to 1048576" in res.output
    assert not (tmp_path / "o").exists()


def test_an_honest_trace_still_reads(tmp_path):
    path = tmp_path / "ok.jsonl"
    rows = [
        {"timestamp": 100 * i, "input_length": 600, "output_length": 3, "hash_ids": [1, 2, 3]}
        for i in range(4)
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    plan = build_plan(TraceProfile(path=str(path), block_size=512), BuildContext(4, 0, 8, 8))
    assert plan.offsets == [0.0, 0.1, 0.2, 0.3]
    assert (
        len(plan.prompts[0].split()) == 600 and plan.prompts[0].split()[:512] == plan.prompts[1].split()[:512]
    )


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("[" * 1000 + "]" * 1000 + "\n", "w.jsonl line 1: nested more than 64 deep"),
        ('{"prompt": "x", "output_len": 1' + "0" * 5000 + "}\n", "w.jsonl line 1: an integer of 5,001 digits (at most 4,300)"),
        ('{"prompt": "x", "output_len": 1000000000000}\n', "output_len must be an integer from 1 to 1,048,576"),
        ('{"prompt": "x", "output_len": 1e400}\n', "w.jsonl line 1: "),
    ],
)  # fmt: skip
def test_a_hostile_user_jsonl_line_is_one_line(tmp_path, text, needle):
    from probes.load.workloads.workload import WorkloadConfig, build_workload

    path = tmp_path / "w.jsonl"
    path.write_text(text)
    with pytest.raises(InputError) as err:
        build_workload(WorkloadConfig(source="jsonl", path=str(path)), 2)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_gzip_bomb_is_refused_at_the_size_limit(tmp_path, monkeypatch):
    import gzip

    from probes.load.workloads import workload

    monkeypatch.setattr(workload, "MAX_TRACE_BYTES", 1 << 20)  # the rule, at a size a test can afford
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(b"\n" * (4 << 20)))  # 4 MB of newlines in ~4 KB
    with pytest.raises(InputError, match="expands past the limit of 1,048,576 bytes"):
        workload.build_workload(workload.WorkloadConfig(source="humaneval", path=str(path)), 2)
