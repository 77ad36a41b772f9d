"""Client fidelity: the highest open-loop rate a load client sustains against a server with known timing.

The mock server (TTFT 100 ms, ITL 10 ms) runs pinned to one core, each client run pinned to the
other, in its own process. A rate is *sustained* when the achieved rate is ≥ 98 % of the target and
the TTFT p50 error is ≤ 2 ms. Both our probe and vLLM's own benchmark client (`vllm.benchmarks.serve`
from .venv-vllm, called as a module function since its console script does not start there) climb
the same rate ladder against the same server in the same run; the figures and the ratio are printed.

Achieved rate, both clients alike: completed / (run duration − median e2el), i.e. the request
throughput with the last requests' tail removed (vLLM reports completed / run duration, which
undercounts short runs by e2el / duration). Ours also reports the exact send rate from its records, and
by the last byte (written_s: when each request's bytes had all left) its achieved rate and write lag.

Other jobs on the shared cores add latency; each client gets the same number of tries per rate and
the best counts. The load average before and after is printed with the figures.

Measured (bench/load_fidelity_results.txt, load average ≈ 2 on the 2 shared cores): ours sustains
2400 req/s (TTFT p50 101.65 ms vs true 100), vLLM's client 1200 req/s (101.52 ms; at 1600 its
TTFT p50 reads 204 ms): ratio 2.0. Client CPU per request: ours 0.48–0.65 ms, vLLM's 1.42–1.54 ms.

Usage: .venv/bin/python bench/load_fidelity.py [--rates 100,200,...] [--seconds 4] [--tries 2] [--skip-vllm]
       [--tokenizer DIR]
vLLM's client needs a Hugging Face tokenizer folder: --tokenizer, else the embedded spec's model
(models/smollm2-cpu.yaml) resolved as the build does: the converted-model cache, converted once if absent.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
VLLM_PY = ROOT / ".venv-vllm/bin/python"
EMBEDDED_SPEC = ROOT / "models/smollm2-cpu.yaml"
TTFT_MS, ITL_MS, OUT_TOKENS, IN_TOKENS = 100.0, 10.0, 16, 32
SERVER_CORE, CLIENT_CORE = 0, 1

_VLLM_MAIN = (
    "import sys\n"
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "p = FlexibleArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))\n"
)


def _start_server(port: int) -> subprocess.Popen:
    code = (
        "from probes.targets.mock_server import MockServerConfig, serve_forever; "
        f"serve_forever(MockServerConfig(ttft_ms={TTFT_MS}, itl_ms={ITL_MS}), port={port})"
    )
    proc = subprocess.Popen(
        ["taskset", "-c", str(SERVER_CORE), sys.executable, "-c", code],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("mock server did not start")


def _ours_once(url: str, rate: float, n: int) -> dict:
    """Runs inside the pinned client process: one constant-rate point with our probe."""
    import math

    from probes.load.point import SLO, LoadPoint
    from probes.load.runner import run_point

    point = LoadPoint.at(
        rate=rate,
        burstiness=math.inf,
        num_requests=n,
        input_len=IN_TOKENS,
        output_len=OUT_TOKENS,
    )
    r = asyncio.run(run_point(url, "mock-model", point, SLO()))
    m, a = r.metrics, r.arrivals
    return {
        "completed": m.completed,
        "failed": m.failed,
        "duration_s": m.duration_s,
        "median_e2el_ms": m.e2el_ms.p(50),
        "ttft_p50_ms": m.ttft_ms.p(50),
        "ttft_p99_ms": m.ttft_ms.p(99),
        "itl_p50_ms": m.itl_ms.p(50),
        "send_rate": a.achieved_rate,
        "send_lag_p99_ms": a.send_lag_ms.p(99),
        # by when each request's last byte left (written_s): what the server can see
        "send_rate_written": a.achieved_rate_written,
        "fraction_written": a.achieved_fraction_written,
        "write_lag_p99_ms": a.write_lag_ms.p(99) if a.write_lag_ms else None,
        "client_bound": a.client_bound,
    }


def _run_ours(url: str, rate: float, n: int) -> dict:
    out = subprocess.run(
        ["taskset", "-c", str(CLIENT_CORE), sys.executable, __file__, "--as-client", url, str(rate), str(n)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if out.returncode != 0:
        raise RuntimeError(f"our client failed: {out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def embedded_tokenizer_dir(serving_python: str = str(VLLM_PY)) -> str:
    """The embedded model's folder (tokenizer.json + config) from the converted-model cache, as a build
    of models/smollm2-cpu.yaml resolves it (converting the GGUF once with the serving environment's python,
    .venv-vllm by default, when not cached). Nothing is fetched."""
    from factsheet.spec.build import load_spec  # deferred: only the vLLM client needs the spec machinery
    from probes.targets.model_source import prepare

    spec, _ = load_spec(EMBEDDED_SPEC)
    return prepare(spec.target.model, serving_python).served_path


def _run_vllm(url: str, rate: float, n: int, tokenizer: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "--base-url", url, "--model", "mock-model", "--tokenizer", tokenizer,
            "--dataset-name", "random", "--random-input-len", str(IN_TOKENS),
            "--random-output-len", str(OUT_TOKENS), "--num-prompts", str(n), "--request-rate", str(rate),
            "--burstiness", "1e9", "--ignore-eos", "--disable-tqdm", "--save-result", "--result-dir", tmp,
            "--result-filename", "r.json", "--percentile-metrics", "ttft,tpot,itl,e2el",
            "--metric-percentiles", "50,99", "--ready-check-timeout-sec", "0",
        ]  # fmt: skip
        out = subprocess.run(
            ["taskset", "-c", str(CLIENT_CORE), str(VLLM_PY), "-c", _VLLM_MAIN, *args],
            capture_output=True,
            text=True,
            timeout=900,
        )
        path = Path(tmp) / "r.json"
        if not path.is_file():
            raise RuntimeError(f"vLLM client failed: {out.stdout[-1500:]} {out.stderr[-1500:]}")
        res = json.loads(path.read_text())
    return {
        "completed": res["completed"],
        "failed": res.get("failed", n - res["completed"]),
        "duration_s": res["duration"],
        "median_e2el_ms": res["median_e2el_ms"],
        "ttft_p50_ms": res["median_ttft_ms"],
        "ttft_p99_ms": res["p99_ttft_ms"],
        "itl_p50_ms": res["median_itl_ms"],
    }


def _judge(row: dict, rate: float) -> dict:
    busy = row["duration_s"] - row["median_e2el_ms"] / 1000 if row["duration_s"] else None
    achieved = row["completed"] / busy if busy and busy > 0 else 0.0
    err = abs(row["ttft_p50_ms"] - TTFT_MS) if row["ttft_p50_ms"] is not None else float("inf")
    return {
        **row,
        "target": rate,
        "achieved": achieved,
        "ttft_p50_err_ms": err,
        "sustained": achieved >= 0.98 * rate and err <= 2.0 and row["failed"] == 0,
    }


def _maybe(x: float | None, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _print(name: str, row: dict) -> None:
    extra = (
        f"  send {row['send_rate']:.1f}/s lag p99 {row['send_lag_p99_ms']:.2f} ms, by the last byte "
        f"{_maybe(row['send_rate_written'], '.1f')}/s ({_maybe(row['fraction_written'], '.1%')}) write lag p99 "
        f"{_maybe(row['write_lag_p99_ms'], '.2f')} ms"
        if "send_rate" in row
        else ""
    )
    print(
        f"{name:5s} target {row['target']:7.1f}/s achieved {row['achieved']:7.1f}/s  TTFT p50 "
        f"{row['ttft_p50_ms']:8.2f} p99 {row['ttft_p99_ms']:8.2f} ms  ITL p50 {row['itl_p50_ms']:6.2f}{extra}  "
        f"{'SUSTAINED' if row['sustained'] else 'not sustained'}",
        flush=True,
    )


def _attempt(name, run, url, rate, seconds, tries) -> dict:
    # Other jobs on the shared cores only ever add latency, never remove it: the best of a few
    # tries is the fair estimate of what each client can do, and both get the same number.
    best = None
    for _ in range(tries):
        row = _judge(run(url, rate, max(50, int(rate * seconds))), rate)
        _print(name, row)
        if best is None or (row["sustained"], -row["ttft_p50_err_ms"]) > (
            best["sustained"],
            -best["ttft_p50_err_ms"],
        ):
            best = row
        if row["sustained"]:
            break
    return best


def _ladder(
    clients: dict, url: str, rates: list[float], seconds: float, tries: int
) -> dict[str, float | None]:
    """Both clients at each rate in turn (same machine conditions); a client leaves the ladder
    after two misses in a row."""
    best: dict[str, float | None] = dict.fromkeys(clients)
    misses = dict.fromkeys(clients, 0)
    for rate in rates:
        for name, run in clients.items():
            if misses[name] >= 2:
                continue
            row = _attempt(name, run, url, rate, seconds, tries)
            if row["sustained"]:
                best[name], misses[name] = rate, 0
            else:
                misses[name] += 1
        if all(m >= 2 for m in misses.values()):
            break
    return best


def _child_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def _cpu_per_request(run, url: str, rate: float = 200.0) -> float:
    """Client CPU per request (ms), start-up excluded: the CPU of a long run minus a short one,
    over the extra requests. Load-independent, unlike the rates: other jobs delay, not bill, us."""
    spent = []
    for n in (100, 1100):
        before = _child_cpu_s()
        run(url, rate, n)
        spent.append(_child_cpu_s() - before)
    return 1000 * (spent[1] - spent[0]) / 1000


def _load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min) / {five:.2f} (5 min) on {os.cpu_count()} cores"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rates", default="100,200,300,400,500,600,800,1000,1200,1600")
    ap.add_argument("--seconds", type=float, default=4.0, help="length of each rate step")
    ap.add_argument("--skip-vllm", action="store_true")
    ap.add_argument("--tries", type=int, default=2, help="attempts per client and rate; the best counts")
    ap.add_argument("--tokenizer", help="tokenizer folder for vLLM's client (default: the embedded model's)")
    args = ap.parse_args()
    from probes.targets.ports import free_port

    rates = [float(x) for x in args.rates.split(",")]
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    server = _start_server(port)
    print(f"mock server TTFT {TTFT_MS} ms ITL {ITL_MS} ms, {OUT_TOKENS} tokens; {_load()}", flush=True)
    clients = {"ours": _run_ours}
    if not args.skip_vllm and VLLM_PY.is_file():
        tokenizer = args.tokenizer or embedded_tokenizer_dir()
        clients["vllm"] = lambda url, rate, n: _run_vllm(url, rate, n, tokenizer)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the server below is stopped too
    try:
        cpu = {name: _cpu_per_request(run, url) for name, run in clients.items()}
        print("client CPU per request (ms, 200 req/s, start-up excluded): "
              + ", ".join(f"{k} {v:.3f}" for k, v in cpu.items()), flush=True)  # fmt: skip
        best = _ladder(clients, url, rates, args.seconds, args.tries)
    finally:
        server.kill()
    ours, theirs = best["ours"], best.get("vllm")
    print(f"highest sustained rate (achieved ≥ 98 %, TTFT p50 error ≤ 2 ms): ours {ours}, vLLM {theirs}")
    if ours and theirs:
        print(f"ratio ours / vLLM: {ours / theirs:.2f}")
    if len(cpu) == 2:
        print(f"CPU per request, vLLM / ours: {cpu['vllm'] / cpu['ours']:.2f}")
    print(f"after: {_load()}")


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--as-client":
        sys.path.insert(0, str(ROOT))
        print(json.dumps(_ours_once(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))))
    else:
        main()
