"""bench/load_scale.py: its arguments are checked before anything starts (one line, exit 2), and the
server's log is read back over exactly one run's requests."""

import json
from pathlib import Path

import pytest

from bench.load_scale import BenchArgsError, main, parse_args, server_run
from probes.load.workers import host_cores


def test_defaults_are_the_issue_cases():
    opt = parse_args(["--workers", "1"])
    assert opt.concurrency == [64, 256, 1024]
    assert opt.rounds == 3
    assert opt.rates == [250.0, 500.0, 1000.0, 2000.0, 4000.0]
    assert opt.loops == ("closed", "open")
    assert opt.vllm is None and not opt.no_vllm


def test_sizes_and_loops_are_taken_as_given():
    opt = parse_args(["--workers", "1", "--concurrency", "8", "--rounds", "1", "--rates", "50,75.5",
                      "--seconds", "0.5", "--loops", "open", "--no-vllm"])  # fmt: skip
    assert (opt.concurrency, opt.rounds, opt.rates, opt.seconds) == ([8], 1, [50.0, 75.5], 0.5)
    assert opt.loops == ("open",) and opt.no_vllm


@pytest.mark.parametrize(
    "argv, names",
    [
        (["--concurrency", "64,x"], "--concurrency"),
        (["--concurrency", "0"], "--concurrency"),
        (["--rates", "100,-5"], "--rates"),
        (["--rates", "inf"], "--rates"),
        (["--workers", str(host_cores() + 1)], "--workers"),
        (["--workers", "0"], "--workers"),
        (["--loops", "sideways"], "--loops"),
        (["--rounds", "0"], "--rounds"),
        (["--seconds", "nan"], "--seconds"),
        (["--vllm", "/nonexistent/vllm"], "--vllm"),
        (["--bogus"], "--bogus"),
    ],
)
def test_bad_arguments_are_named(argv, names):
    with pytest.raises(BenchArgsError, match=names):
        parse_args(["--workers", "1", *argv])  # a later --workers replaces the first


def test_a_tokenizer_folder_needs_its_tokenizer(tmp_path):
    with pytest.raises(BenchArgsError, match="--tokenizer"):
        parse_args(["--workers", "1", "--tokenizer", str(tmp_path)])
    (tmp_path / "tokenizer.json").write_text("{}")
    assert parse_args(["--workers", "1", "--tokenizer", str(tmp_path)]).tokenizer == tmp_path


def test_bad_arguments_give_one_line_and_exit_2(capsys):
    assert main(["--rounds", "0"]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1 and "--rounds" in err


def _line(pid: int, n: int, arrived: float, ttft_ms: float, late_ms: float = 0.0) -> str:
    first = arrived + ttft_ms / 1000
    return json.dumps({"pid": pid, "n": n, "arrived_s": arrived, "admitted_s": arrived, "first_chunk_s": first,
                       "last_chunk_s": first, "late_ms": late_ms, "chunks": 1})  # fmt: skip


def test_server_run_reads_the_last_requests_of_the_run(tmp_path: Path):
    # Process 0 saw an earlier run's request (before the run) and the client's test request (first of the
    # run); the run's 4 requests are spread over two processes, one of them 5 ms late.
    (tmp_path / "server-0.jsonl").write_text(
        "\n".join([_line(1, 1, 5.0, 900.0), _line(1, 2, 10.0, 500.0), _line(1, 3, 10.2, 100.0)]) + "\n"
    )
    (tmp_path / "server-1.jsonl").write_text(
        "\n".join([_line(2, 1, 10.1, 102.0), _line(2, 2, 10.3, 104.0, late_ms=5.0), _line(2, 3, 10.4, 106.0)])
        + "\n"
    )
    run = server_run(tmp_path, before=9.0, n=4)
    assert run.requests == 4
    assert run.ttft_ms.p(50) == pytest.approx(103.0)
    assert run.ttft_ms.max == pytest.approx(106.0)
    assert (run.late, run.max_late_ms) == (1, 5.0)
