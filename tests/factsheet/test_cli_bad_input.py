"""Every CLI command answers bad input with one line and exit 2: never a traceback, never exit 1 or 3.

The table below must name every command the CLI registers (a new command without a bad-input case fails
`test_every_command_has_a_case`), so the rule holds for commands added later too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main

from factsheet.cli.commands import app

pytestmark = pytest.mark.system


def _command_paths(group: typer.Typer, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    click_group = typer.main.get_group(group)
    paths: set[tuple[str, ...]] = set()

    def walk(cmd, path):
        subs = getattr(cmd, "commands", None)
        if subs:
            for name, sub in subs.items():
                walk(sub, (*path, name))
        else:
            paths.add(path)

    walk(click_group, prefix)
    return paths


def _files(tmp: Path) -> dict[str, Path]:
    binary = tmp / "binary.yaml"
    binary.write_bytes(bytes(range(256)) * 4)
    empty = tmp / "empty.yaml"
    empty.write_bytes(b"")
    notjson = tmp / "bad.json"
    notjson.write_text("not json\n")
    traces = {
        "backwards": '{"timestamp": 5, "input_length": 4, "output_length": 2}\n{"timestamp": 1, "input_length": 4, '
        '"output_length": 2}\n',
        "negative": '{"timestamp": 0, "input_length": -4, "output_length": 2}\n',
        "nolength": '{"timestamp": 0, "output_length": 2}\n',
    }
    for name, text in traces.items():
        (tmp / f"{name}.jsonl").write_text(text)
    return {"binary": binary, "empty": empty, "notjson": notjson, "missing": tmp / "nope.yaml"} | {
        f"trace_{name}": tmp / f"{name}.jsonl" for name in traces
    }


# command path -> argument lists (with {binary}, {empty}, {notjson}, {missing}, {out} placeholders)
CASES: dict[tuple[str, ...], list[list[str]]] = {
    ("build",): [["{binary}", "-o", "{out}"], ["{empty}", "-o", "{out}"], ["{missing}", "-o", "{out}"]],
    ("validate",): [["{binary}"], ["{empty}"], ["{notjson}"], ["{missing}"]],
    ("render",): [["{notjson}", "-o", "{out}"], ["{binary}", "-o", "{out}"], ["{missing}", "-o", "{out}"]],
    ("schema",): [["-o", "{binary}"]],  # a file where a folder is needed
    ("probe", "load"): [
        ["--base-url", "not-a-url", "--model", "x", "--concurrency", "1", "-o", "{out}"],
        ["--base-url", "http://127.0.0.1:9", "--model", "x", "-o", "{out}"],  # neither loop given
        ["--base-url", "http://127.0.0.1:9", "--model", "x", "--concurrency", "0", "-o", "{out}"],
        [
            "--base-url",
            "http://127.0.0.1:9",
            "--model",
            "x",
            "--concurrency",
            "1",
            "--workload",
            "nope",
            "-o",
            "{out}",
        ],
        *(
            [
                "--base-url",
                "http://127.0.0.1:9",
                "--model",
                "x",
                "--workload",
                "trace",
                "--dataset-path",
                f"{{{f}}}",
                "-o",
                "{out}",
            ]
            for f in ("binary", "trace_backwards", "trace_negative", "trace_nolength", "missing")
        ),
    ],
    ("eval", "humaneval"): [
        ["--samples", "{notjson}", "-o", "{out}"],
        ["--samples", "{missing}", "-o", "{out}"],
        ["--samples", "{binary}", "-o", "{out}"],
    ],
    ("mock-server",): [["--port", "-5"], ["--ttft-ms", "-1"]],
    ("keygen",): [["-o", "{binary}"]],  # a file where a folder is needed
    ("sign",): [
        ["{notjson}", "--key", "{binary}"],
        ["{missing}", "--key", "{missing}"],
        ["{binary}", "--key", "{empty}"],
    ],
    ("export",): [
        ["{notjson}", "--format", "hf", "-o", "{out}"],
        ["{missing}", "--format", "spdx", "-o", "{out}"],
        ["{binary}", "--format", "cyclonedx", "-o", "{out}"],
        ["{notjson}", "--format", "nope", "-o", "{out}"],
    ],
    ("verify",): [
        ["{notjson}", "--pubkey", "{binary}"],
        ["{missing}", "--pubkey", "{missing}"],
        ["{binary}", "--pubkey", "{empty}"],
    ],
    ("check",): [
        ["{notjson}", "-p", "release-gate", "-o", "{out}"],
        ["{missing}", "-p", "release-gate", "-o", "{out}"],
        ["{binary}", "-p", "release-gate", "-o", "{out}"],
        ["{notjson}", "-p", "{binary}", "-o", "{out}"],
        ["{notjson}", "-o", "{out}"],  # no --policy
    ],
    ("diff",): [
        ["{notjson}", "{notjson}", "-o", "{out}"],
        ["{missing}", "{missing}", "-o", "{out}"],
        ["{binary}", "{binary}", "-o", "{out}"],
        ["{notjson}", "{notjson}", "-p", "{empty}", "-o", "{out}"],
        ["{notjson}", "{notjson}", "--max-regression", "e2el_ms.p99", "-o", "{out}"],
    ],
    ("policies",): [["no-such-profile"]],
    ("catalogue",): [
        ["{notjson}", "-o", "{out}"],  # a file where a folder of factsheets is needed
        ["{missing}", "-o", "{out}"],
        ["{out}", "-o", "{out}"],  # (does not exist either)
    ],
    ("features", "count"): [["{binary}"], ["{empty}"], ["{missing}"]],
    ("features", "sample"): [
        ["{binary}"],
        ["{missing}"],
        ["vllm_serving", "-t", "5"],
        ["vllm_serving", "--method", "x"],
    ],
    ("campaign",): [["{binary}", "-o", "{out}"], ["{empty}", "-o", "{out}"], ["{missing}", "-o", "{out}"]],
    ("predict",): [["{missing}"], ["{binary}"], ["{out}", "--constraint", "x>y"]],
    ("publish",): [
        ["{notjson}", "--mlflow-uri", "http://127.0.0.1:9"],
        ["{missing}", "--mlflow-uri", "http://127.0.0.1:9"],
        ["{binary}", "--mlflow-uri", "http://127.0.0.1:9"],
        ["{notjson}", "--mlflow-uri", "http://127.0.0.1:9", "--model-version", "1"],  # no --registered-model
        ["{notjson}"],  # no --mlflow-uri
    ],
}


def test_every_command_has_a_case():
    assert _command_paths(app) == set(CASES), "add a bad-input case for each new command"


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "factsheet", *args], capture_output=True, text=True, timeout=120, env=env
    )


@dataclass
class Ran:
    returncode: int | str
    stdout: str
    stderr: str


def _run_batch(cases: list[list[str]]) -> list[Ran]:
    """Every case through the real entry point in ONE process (tests/factsheet/cli_batch.py: the CLI's
    imports cost seconds a start; a per-case alarm turns a hang into a failed case)."""
    root = str(Path(__file__).resolve().parents[2])  # this checkout's packages, as pytest's pythonpath
    env = {
        **os.environ,
        "COLUMNS": "200",
        "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("cli_batch.py"))],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=120 + 20 * len(cases),
        env=env,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return [Ran(r["code"], r["stdout"], r["stderr"]) for r in json.loads(done.stdout)]


def _listing(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*"))


BAD_INPUT = [(path, args) for path, cases in CASES.items() for args in cases]


@pytest.fixture(scope="module")
def bad_input_runs(tmp_path_factory) -> list[tuple[list[str], Ran, Path]]:
    """Each case of CASES in a folder of its own, all run in one batch."""
    cases = []
    for path, args in BAD_INPUT:
        tmp = tmp_path_factory.mktemp("case")
        files = _files(tmp)
        cases.append(([*path, *(a.format(**files, out=tmp / "out") for a in args)], tmp / "out"))
    results = _run_batch([argv for argv, _ in cases])
    return [(argv, ran, out) for (argv, out), ran in zip(cases, results, strict=True)]


@pytest.mark.parametrize("case", range(len(BAD_INPUT)), ids=[str(c) for c in BAD_INPUT])
def test_bad_input_is_one_line_and_exit_2(bad_input_runs, case):
    argv, result, out = bad_input_runs[case]
    text = result.stdout + result.stderr
    assert result.returncode == 2, f"{argv}: exit {result.returncode}\n{text}"
    assert "Traceback" not in text
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, f"{argv}: expected one line on stderr, got {lines}"
    assert not out.exists(), f"{argv}: bad input must write nothing"


# -o that cannot be written (a file where a folder is needed, a folder where a file is): refused by name before
# any work, where otherwise the work would run and the write fail as an internal error (or, here, the other
# bad input would be named instead).
BAD_OUTPUT: dict[tuple[str, ...], list[list[str]]] = {
    ("probe", "load"): [
        ["--base-url", "http://127.0.0.1:9", "--model", "x", "--concurrency", "1", "-o", "{notjson}"]
    ],
    ("eval", "humaneval"): [["--samples", "{notjson}", "-o", "{notjson}"]],
    ("features", "sample"): [
        ["vllm_serving", "--method", "uniform", "-n", "2", "-o", "{folder}"],
        ["vllm_serving", "--method", "uniform", "-n", "2", "-o", "{notjson}/samples.jsonl"],
    ],
    ("campaign",): [["{spec}", "-o", "{notjson}"]],
}


@pytest.mark.parametrize(
    ("path", "args"), [(path, args) for path, cases in BAD_OUTPUT.items() for args in cases], ids=str
)
def test_unusable_output_is_refused_first(tmp_path, path, args):
    files = _files(tmp_path)
    folder = tmp_path / "folder"
    folder.mkdir()
    spec = (
        tmp_path / "c.yaml"
    )  # valid, with a measurer that cannot be built: named if -o were not checked first
    spec.write_text(
        "feature_model: vllm_serving\nsample: {method: uniform, n: 2, seed: 1}\nmeasurer: nowhere:none\n"
    )
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    result = _run([*path, *(a.format(**files, folder=folder, spec=spec) for a in args)])
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2 and len(lines) == 1, result.stdout + result.stderr
    assert lines[0].startswith("error: output ") and "Traceback" not in result.stderr, lines
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before, (
        "bad input must write nothing"
    )


# Every parameter that names a path, with the rest of a command line around it ({p} is where the path goes)
# and what it must be: an input file, an input folder, an output folder or an output file. Each is given a
# binary file, a folder, a missing path and a FIFO where these are wrong for it. Every other parameter is
# listed in NOT_A_PATH, so a new option has to be placed in one of the two.
_URL = "http://127.0.0.1:9"
_LOAD = ["--base-url", _URL, "--model", "x", "--concurrency", "1", "--num-prompts", "1"]
PATH_PARAMS: dict[tuple[tuple[str, ...], str], tuple[str, list[str]]] = {
    (("build",), "spec"): ("in-file", ["{p}", "-o", "{out}"]),
    (("build",), "--sign-key"): ("in-file", ["{notjson}", "--sign-key", "{p}", "-o", "{out}"]),
    (("build",), "-o"): ("out-folder", ["{notjson}", "-o", "{p}"]),
    (("validate",), "file"): ("in-file", ["{p}"]),
    (("render",), "factsheet_json"): ("in-file", ["{p}", "-o", "{out}"]),
    (("render",), "-o"): ("out-folder", ["{notjson}", "-o", "{p}"]),
    (("schema",), "-o"): ("out-folder", ["-o", "{p}"]),
    (("keygen",), "-o"): ("out-folder", ["-o", "{p}"]),
    (("sign",), "factsheet_json"): ("in-file", ["{p}", "--key", "{empty}"]),
    (("sign",), "--key"): ("in-file", ["{notjson}", "--key", "{p}"]),
    (("sign",), "--compliance"): ("in-file", ["{notjson}", "--key", "{empty}", "--compliance", "{p}"]),
    (("sign",), "--model-folder"): (
        "in-folder",
        ["{notjson}", "--key", "{empty}", "--model-folder", "{p}", "--oms-key", "{empty}"],
    ),
    (("sign",), "--oms-key"): (
        "in-file",
        ["{notjson}", "--key", "{empty}", "--model-folder", "{folder}", "--oms-key", "{p}"],
    ),
    (("verify",), "factsheet_json"): ("in-file", ["{p}", "--pubkey", "{empty}"]),
    (("verify",), "--pubkey"): ("in-file", ["{notjson}", "--pubkey", "{p}"]),
    (("verify",), "--attestation"): ("in-file", ["{notjson}", "--pubkey", "{empty}", "--attestation", "{p}"]),
    (("verify",), "--model-folder"): (
        "in-folder",
        ["{notjson}", "--pubkey", "{empty}", "--model-folder", "{p}", "--oms-pubkey", "{empty}"],
    ),
    (("verify",), "--oms-pubkey"): (
        "in-file",
        ["{notjson}", "--pubkey", "{empty}", "--model-folder", "{folder}", "--oms-pubkey", "{p}"],
    ),
    (("export",), "factsheet_json"): ("in-file", ["{p}", "--format", "hf", "-o", "{out}"]),
    (("export",), "-o"): ("out-folder", ["{notjson}", "--format", "hf", "-o", "{p}"]),
    (("check",), "factsheet_json"): ("in-file", ["{p}", "-p", "release-gate", "-o", "{out}"]),
    (("check",), "--policy"): ("in-file", ["{notjson}", "-p", "{p}", "-o", "{out}"]),
    (("check",), "-o"): ("out-folder", ["{notjson}", "-p", "release-gate", "-o", "{p}"]),
    (("check",), "--junit"): (
        "out-file",
        ["{notjson}", "-p", "release-gate", "-o", "{out}", "--junit", "{p}"],
    ),
    (("diff",), "old"): ("in-file", ["{p}", "{notjson}", "-o", "{out}"]),
    (("diff",), "new"): ("in-file", ["{notjson}", "{p}", "-o", "{out}"]),
    (("diff",), "--policy"): ("in-file", ["{notjson}", "{notjson}", "-p", "{p}", "-o", "{out}"]),
    (("diff",), "-o"): ("out-folder", ["{notjson}", "{notjson}", "-o", "{p}"]),
    (("campaign",), "spec_path"): ("in-file", ["{p}", "-o", "{out}"]),
    (("campaign",), "-o"): ("out-folder", ["{notjson}", "-o", "{p}"]),
    (("predict",), "campaign_dir"): ("in-folder", ["{p}"]),
    (("publish",), "factsheet_json"): ("in-file", ["{p}", "--mlflow-uri", _URL]),
    (("catalogue",), "folders"): ("in-folder", ["{p}", "-o", "{out}"]),
    (("catalogue",), "-o"): ("out-folder", ["{notjson}", "-o", "{p}"]),
    (("catalogue",), "--pubkey"): ("in-file", ["{out}", "-o", "{out}", "--pubkey", "{p}"]),
    (("probe", "load"), "-o"): ("out-folder", [*_LOAD, "-o", "{p}"]),
    (("probe", "load"), "--dataset-path"): (
        "in-file",
        [*_LOAD, "--dataset", "jsonl", "--dataset-path", "{p}", "-o", "{out}"],
    ),
    (("probe", "load"), "--tokenizer"): ("in-file", [*_LOAD, "--tokenizer", "{p}", "-o", "{out}"]),
    (("eval", "humaneval"), "--samples"): ("in-file", ["--samples", "{p}", "-o", "{out}"]),
    (("eval", "humaneval"), "-o"): ("out-folder", ["--samples", "{notjson}", "-o", "{p}"]),
    (("eval", "humaneval"), "--dataset"): (
        "in-file",
        ["--samples", "{notjson}", "--dataset", "{p}", "-o", "{out}"],
    ),
    (("features", "count"), "model"): ("in-file", ["{p}"]),
    (("features", "sample"), "model"): ("in-file", ["{p}"]),
    (("features", "sample"), "-o"): (
        "out-file",
        ["vllm_serving", "--method", "uniform", "-n", "2", "-o", "{p}"],
    ),
}
# What each kind is given: a wrong thing for it, never a thing it accepts.
_WRONG: dict[str, tuple[str, ...]] = {
    "in-file": ("binary", "folder", "missing", "fifo"),
    "in-folder": ("binary", "missing", "fifo"),
    "out-folder": ("binary", "fifo"),
    "out-file": ("folder", "fifo"),
}
NOT_A_PATH = {
    (): {"--debug", "--version"},
    ("build",): {"--resume", "--overwrite", "--budget"},
    ("validate",): {"--explain"},
    ("export",): {"--format"},
    ("check",): {"--allow-insufficient"},
    ("diff",): {"--max-regression"},
    ("policies",): {"name"},
    ("campaign",): {"--executor", "--ray-address"},
    ("predict",): {"--targets", "--objective", "--constraint", "--verify-reps", "--confident"},
    ("publish",): {"--mlflow-uri", "--experiment", "--registered-model", "--model-version"},
    ("mock-server",): {
        "--port",
        "--ttft-ms",
        "--itl-ms",
        "--slots",
        "--fail-every",
        "--drop-every",
        "--model",
        "--serving",
    },
    ("probe", "load"): {
        "--base-url",
        "--workers",
        "--executor",
        "--ray-address",
        "--model",
        "--endpoint",
        "--concurrency",
        "--request-rate",
        "--burstiness",
        "--max-concurrency",
        "--num-prompts",
        "--duration",
        "--input-len",
        "--output-len",
        "--ignore-eos",
        "--goodput",
        "--slo-p99-metric",
        "--metric-percentiles",
        "--warmup",
        "--cooldown",
        "--dataset",
        "--seed",
        "--timeout",
        "--api-key",
        "--workload",
        "--workload-option",
        "--scrape",
        "--scrape-interval",
        "--stop-when-saturated",
    },
    ("eval", "humaneval"): {"--concurrency"},
    ("features", "sample"): {"--method", "-t", "-n", "--seed"},
}


def _params(group: typer.Typer) -> set[tuple[tuple[str, ...], str]]:
    found: set[tuple[tuple[str, ...], str]] = set()

    def walk(cmd, path):
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, (*path, name))
        for param in getattr(cmd, "params", []):
            if param.name != "help":
                found.add((path, param.opts[0] if param.opts[0].startswith("-") else param.name))

    walk(typer.main.get_group(group), ())
    return found


def test_every_parameter_is_placed_as_a_path_or_not():
    placed = set(PATH_PARAMS) | {(cmd, name) for cmd, names in NOT_A_PATH.items() for name in names}
    assert _params(app) == placed, "name each new parameter in PATH_PARAMS (with its cases) or NOT_A_PATH"


WRONG_PATHS = [(key, wrong) for key, (kind, _) in PATH_PARAMS.items() for wrong in _WRONG[kind]]


@pytest.fixture(scope="module")
def wrong_path_runs(tmp_path_factory) -> list[tuple[list[str], Ran, list[Path], list[Path]]]:
    """Each (path parameter, wrong thing) in a folder of its own, all run in one batch."""
    cases = []
    for key, wrong in WRONG_PATHS:
        tmp = tmp_path_factory.mktemp("path")
        files = _files(tmp)
        folder = tmp / "folder"
        folder.mkdir()
        (folder / "x.txt").write_text("x\n")
        fifo = tmp / "fifo"
        os.mkfifo(fifo)  # reading it would block for ever: it must be refused, not opened
        given = {"binary": files["binary"], "folder": folder, "missing": files["missing"], "fifo": fifo}[
            wrong
        ]
        command, (_, template) = key[0], PATH_PARAMS[key]
        argv = [*command, *(a.format(**files, out=tmp / "out", p=given, folder=folder) for a in template)]
        cases.append((argv, tmp, _listing(tmp)))
    results = _run_batch([argv for argv, _, _ in cases])
    return [
        (argv, ran, before, _listing(tmp)) for (argv, tmp, before), ran in zip(cases, results, strict=True)
    ]


@pytest.mark.parametrize("case", range(len(WRONG_PATHS)), ids=[str(c) for c in WRONG_PATHS])
def test_a_wrong_path_is_one_line_and_exit_2(wrong_path_runs, case):
    argv, result, before, after = wrong_path_runs[case]
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode == 2, f"{argv}: exit {result.returncode}\n{result.stdout}{result.stderr}"
    assert len(lines) == 1 and "Traceback" not in result.stderr, f"{argv}: {lines}"
    assert after == before, f"{argv}: wrote something"
