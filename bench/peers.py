"""Each real serving engine installable here, measured by a factsheet build beside the server's own log.

Peers: vLLM's CPU build (`.venv-vllm`, `python -m vllm.entrypoints.openai.api_server`) and transformers serve
(installed with it), both serving the demo's SmolLM2-135M-Instruct (the GGUF converted once to safetensors, as
the demo does). Each is started on 127.0.0.1 with its log kept, then `factsheet build` measures it as an
`endpoint` target (the engine found from its answers, the conformance preflight, one closed-loop point), then
it is stopped. The agreement stated for each:

- requests: the server's access log counts every `POST /v1/completions` answered 200; the build sent the
  preflight's 3, the warm-up and the measured ones (the records): the two counts must be equal;
- reply lengths: each record's output tokens against the `max_tokens` it asked (completed replies);
- timing: where the server keeps its own (vLLM's TTFT and E2EL histograms on /metrics, read by the build's
  server view), the client's p50 against the server's bucket; transformers serve keeps none (stated).

Usage (from a fresh clone, after `make` has built .venv and .venv-vllm; one real server at a time):
    flock /tmp/vllm.lock .venv/bin/python bench/peers.py [--peer vllm --peer transformers-serve] [--requests 12]
Writes bench/peers_results.txt (with the command that produced it); the builds go to out/bench/peers/.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factsheet.spec.build import load_spec  # noqa: E402
from probes.core.files import write_atomic  # noqa: E402
from probes.load.records import load_records  # noqa: E402
from probes.targets.model_source import prepare  # noqa: E402
from probes.targets.ports import free_port  # noqa: E402
from probes.targets.vllm import CPU_ENV  # noqa: E402

EMBEDDED_SPEC = ROOT / "models/smollm2-cpu.yaml"
RESULTS = ROOT / "bench/peers_results.txt"
OUT = ROOT / "out/bench/peers"
PREFLIGHT_REQUESTS = 3  # probes/targets/conformance.py: one alone, two overlapping
WARMUP = 1
# The access log is the server's stdout: unbuffered, or its last lines are lost when the server is stopped.
UNBUFFERED = {"PYTHONUNBUFFERED": "1"}
ACCESS = re.compile(r'"POST /v1/completions HTTP/1\.[01]" 200')


def _server(peer: str, python: Path, folder: str, port: int) -> tuple[list[str], dict[str, str], str, bool]:
    """(command, environment, model id to send, ignore_eos supported) of a peer."""
    if peer == "vllm":
        cmd = [str(python), "-m", "vllm.entrypoints.openai.api_server", "--model", folder, "--served-model-name",
               "smollm2", "--host", "127.0.0.1", "--port", str(port), "--dtype", "float32", "--max-model-len",
               "2048", "--max-num-seqs", "16"]  # fmt: skip
        return cmd, {**os.environ, **CPU_ENV, **UNBUFFERED}, "smollm2", True
    cmd = [str(python.parent / "transformers"), "serve", "--host", "127.0.0.1", "--port", str(port), "--log-level",
           "info", "--dtype", "float32"]  # fmt: skip
    return cmd, {**os.environ, **UNBUFFERED}, folder, False


def _wait(url: str, proc: subprocess.Popen, timeout_s: float) -> float:
    began = time.monotonic()
    while time.monotonic() - began < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"the server exited with {proc.returncode} before answering")
        try:
            if httpx.get(url + "/health", timeout=2).status_code == 200:
                return time.monotonic() - began
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise SystemExit(f"the server did not answer within {timeout_s:g} s")


def _spec(peer: str, url: str, model: str, tokenizer: str | None, ignore_eos: bool, requests: int) -> dict:
    return {
        "spec_version": 1,
        "name": f"peer-{peer}",
        "model": {"name": "SmolLM2-135M-Instruct"},
        "target": {"kind": "endpoint", "base_url": url, "model": model, "tokenizer_path": tokenizer,
                   "supports_ignore_eos": ignore_eos, "check_model": peer == "vllm"},
        "load": {"endpoint": "completions", "input_len": 32, "output_len": 16, "warmup_requests": WARMUP,
                 "slo": {"ttft_ms": 10000, "e2el_ms": 30000},
                 "points": [{"concurrency": 2, "num_requests": requests}]},
    }  # fmt: skip


def measure(peer: str, python: Path, requests: int) -> list[str]:
    spec, _ = load_spec(EMBEDDED_SPEC)
    prepared = prepare(spec.target.model, str(python))
    out = OUT / peer
    out.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    cmd, env, model, ignore_eos = _server(peer, python, prepared.served_path, port)
    log = out / "server.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        started = _wait(url, proc, 900)
        spec_file = out / "model.yaml"
        spec_file.write_text(
            yaml.safe_dump(_spec(peer, url, model, prepared.tokenizer_path, ignore_eos, requests))
        )
        began = time.monotonic()
        build = subprocess.run([str(ROOT / ".venv/bin/factsheet"), "build", str(spec_file), "-o", str(out / "build"),
                                "--overwrite"], capture_output=True, text=True)  # fmt: skip
        took = time.monotonic() - began
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
    shown = " ".join(shlex.quote(c) for c in cmd).replace(prepared.served_path, "<SmolLM2 folder>")
    run = {"server": shown.replace(str(python.parent), ".venv-vllm/bin"), "started_s": round(started),
           "build_exit": build.returncode, "build_s": round(took), "requests": requests,
           "build_tail": [*build.stdout.splitlines()[-5:], *build.stderr.splitlines()[-3:]]}  # fmt: skip
    (out / "run.json").write_text(json.dumps(run, indent=1))
    return report(peer)


def report(peer: str) -> list[str]:
    """The agreement of a peer's kept build and server log (out/bench/peers/<peer>/)."""
    out = OUT / peer
    run = json.loads((out / "run.json").read_text())
    served = sum(
        1 for line in (out / "server.log").read_text(errors="replace").splitlines() if ACCESS.search(line)
    )
    lines = [f"## {peer}", f"server: {run['server']}",
             f"started in {run['started_s']} s; build exit {run['build_exit']} in {run['build_s']} s"]  # fmt: skip
    if run["build_exit"] != 0:
        return [*lines, "build output (last lines):", *run["build_tail"]]
    return lines + _agreement(out / "build", served, run["requests"])


def _agreement(folder: Path, served: int, requests: int) -> list[str]:
    sheet = json.loads((folder / "factsheet.json").read_text())
    conf = sheet["conformance"]
    e = conf["engine"]
    point = sheet["load"]["points"][0]
    records = load_records((folder / point["records"]["path"]).read_bytes())
    answered = [r for r in records if r.answered]  # a reply came: the server's access log has them
    unanswered = len(records) - len(answered)
    sent = PREFLIGHT_REQUESTS + len(answered)
    m = point["result"]["metrics"]
    lengths = sorted({(r.output_tokens, getattr(r, "max_tokens", None)) for r in records if r.error is None})
    lines = [
        f"engine found: {e['label']} {e['version'] or '(no version stated)'} from {'; '.join(e['detected_from']) or 'nothing'}",
        "conformance: " + ", ".join(f"{c['name']} {c['verdict']}" for c in conf["checks"]),
        f"requests: server log {served} POST /v1/completions answered 200; build got {sent} replies "
        f"({PREFLIGHT_REQUESTS} preflight + {len(answered)} records): "
        + ("equal" if served == sent else "DIFFERENT")
        + (f"; {unanswered} record(s) failed before any reply (not in the server's log): "
           + "; ".join(sorted({str(r.error) for r in records if not r.answered})) if unanswered else ""),
        f"records {len(records)} of {requests} asked; completed {m['completed']}, failed {m['failed']}"
        + (f", truncated {m['truncated']}" if "truncated" in m else ""),
        f"reply lengths (output tokens, max_tokens asked): {lengths}",
        f"client TTFT p50 {_p(m['ttft_ms'])} ms, E2EL p50 {_p(m['e2el_ms'])} ms",
    ]  # fmt: skip
    view = point["result"].get("server_view") or {}
    if view.get("status") == "not_measured" or "ttft_ms" not in view:
        return [*lines, f"server timing: not measured ({view.get('reason', 'no server view')})"]
    for key in ("ttft_ms", "e2el_ms"):
        fig = view[key]
        if "quantiles" not in fig:
            lines.append(f"server {key}: {fig.get('reason')}")
            continue
        q = fig["quantiles"]["p50"]
        client = _p(m[key])
        inside = client is not None and q["bucket_lower_ms"] <= client <= (
            q["bucket_upper_ms"] or float("inf")
        )
        lines.append(f"server {key} p50 in ({q['bucket_lower_ms']:g}, {q['bucket_upper_ms']:g}] ms over n "
                     f"{fig['n']} requests; client p50 {client} ms: {'inside' if inside else 'outside'} the "
                     "server's bucket")  # fmt: skip
    return lines


def _p(dist: dict) -> float | None:
    for key in ("p50", "median"):
        if isinstance(dist.get(key), int | float):
            return round(float(dist[key]), 1)
    pcts = dist.get("percentiles") or {}
    value = pcts.get("p50") or pcts.get("50") or pcts.get("50.0")
    return round(float(value), 1) if value is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--peer", action="append", choices=["vllm", "transformers-serve"])
    parser.add_argument("--requests", type=int, default=12)
    parser.add_argument("--python", default=str(ROOT / ".venv-vllm/bin/python"))
    parser.add_argument("--from-builds", action="store_true", help="report the kept builds and logs again")
    args = parser.parse_args()
    python = Path(args.python)
    if not python.exists():
        raise SystemExit(f"--python: {python.name} not found (make builds .venv-vllm)")
    load = os.getloadavg()
    measured = (
        "the builds and logs kept in out/bench/peers/ by an earlier run, reported again: "
        if args.from_builds
        else ""
    )
    lines = [f"# bench/peers.py: {measured}{' '.join(sys.argv[1:]) or '(defaults)'}",
             f"command: .venv/bin/python bench/peers.py {' '.join(shlex.quote(a) for a in sys.argv[1:])}",
             f"host: {os.cpu_count()} CPUs, load average {load[0]:.1f} at the start", ""]  # fmt: skip
    for peer in args.peer or ["transformers-serve", "vllm"]:
        lines += [*(report(peer) if args.from_builds else measure(peer, python, args.requests)), ""]
        print("\n".join(lines[-8:]), flush=True)
    write_atomic(RESULTS, ("\n".join(lines) + "\n").encode())
    print(f"written: {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
