"""Load from one worker, N workers and `vllm bench serve` against the multi-process mock server, whose own log
is the truth.

The mock server (TTFT 100 ms, ITL 20 ms) runs as `--server-processes` processes on one port
(probes.targets.mock_fleet); each logs the send time of every chunk and says when it fell behind its
schedule. The server's TTFT of a request (first chunk sent − arrival, on the same host clock) is what each
client's TTFT is compared with, over the requests of that run (the last that arrived: a test request a
client sends first is left out).

- Closed loop at `--concurrency` streams (64 / 256 / 1,024), `--rounds` × C requests of 16 → 64 tokens, for
  each worker count (`--workers`) and for `vllm bench serve` (random dataset, the same lengths,
  `--max-concurrency C`): TTFT p50/p99 against the server's, the workers' event-loop lag and write delay,
  and the client-bound verdict (`result.client`, one worker too).
- Open loop at rising `--rates` (constant spacing, `--seconds` of schedule each, 16 → 8 tokens), for each
  worker count: achieved vs requested rate by when each request began to leave (sent_s) and by when its
  last byte left (written_s), send lag and write lag, TTFT p50 against the server's, and the client-bound
  rule's verdict with its reasons. A worker count leaves the ladder after two client-bound rates in a row.

Each case states how long it took and the load average (1 min) before and after it: the server and the
clients share the host's cores, so on a 2-core host this measures what holds there, not what a 16-core host
gives. `--rounds` and `--seconds` size the run to the host.

vLLM's client: `--vllm PATH` (a `vllm` executable), else .venv-vllm/bin/vllm beside this checkout when
present, else skipped with a line saying why (`--no-vllm`: skipped). It needs a tokenizer folder:
`--tokenizer DIR`, else the embedded model's, found as bench/load_fidelity.py finds it. It runs offline
(HF_HUB_OFFLINE=1): nothing is fetched. Where its console script does not start, its own entry point
(vllm.benchmarks.serve.main, the code `vllm bench serve` runs) is called in the same environment, and the
output says so.

Usage: PYTHONPATH=. .venv/bin/python bench/load_scale.py [--concurrency 64,256,1024] [--workers 1,2]
       [--rounds 3] [--rates 250,500,1000,2000,4000] [--seconds 2] [--loops closed,open]
       [--server-processes 2] [--vllm PATH | --no-vllm] [--tokenizer DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from bench.load_fidelity import embedded_tokenizer_dir
from probes.core.errors import InputError
from probes.core.measurement import Distribution, summarize
from probes.load.point import SLO, LoadPoint
from probes.load.runner import CLIENT_BOUND_RULE, PointResult, run_point
from probes.load.workers import LOOP_RULE, resolve_workers
from probes.targets.mock_fleet import LATE_TOLERANCE_MS, read_timing, running_fleet
from probes.targets.mock_server import MockServerConfig

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VLLM = ROOT / ".venv-vllm/bin/vllm"
TTFT_MS, ITL_MS, TOKENS, OPEN_TOKENS, INPUT_LEN = 100.0, 20.0, 64, 8, 16
MODEL = "mock-model"
LOOPS = ("closed", "open")
# vLLM's benchmark client, called through its own entry point where the console script does not start.
_VLLM_MAIN = (
    "import sys\n"
    "from vllm.utils.argparse_utils import FlexibleArgumentParser\n"
    "from vllm.benchmarks.serve import add_cli_args, main\n"
    "p = FlexibleArgumentParser(); add_cli_args(p); main(p.parse_args(sys.argv[1:]))\n"
)
# Offline: the tokenizer is a local folder, and nothing may be fetched from a hub or reported anywhere.
_OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "VLLM_NO_USAGE_STATS": "1",
    "DO_NOT_TRACK": "1",
}


class BenchArgsError(InputError):
    """An argument the bench cannot run with (one line, exit 2)."""


class Options(NamedTuple):
    concurrency: list[int]
    workers: list[int]
    rounds: int
    rates: list[float]
    seconds: float
    loops: tuple[str, ...]
    server_processes: int
    vllm: Path | None = None
    no_vllm: bool = False
    tokenizer: Path | None = None


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage and the message; the bench's rule is one line
        raise BenchArgsError(message)


def _numbers(text: str, what: str, kind=int) -> list:
    try:
        values = [kind(x) for x in text.split(",")]
    except ValueError:
        raise BenchArgsError(f"--{what}: {text!r} is not a comma-separated list of numbers") from None
    if not all(math.isfinite(v) and v > 0 for v in values):
        raise BenchArgsError(f"--{what}: {text!r}: every value must be > 0")
    return values


def parse_args(argv: list[str]) -> Options:
    """The bench's options, each checked before anything starts (BenchArgsError names the bad one)."""
    ap = _Parser(prog="bench/load_scale.py", description=__doc__.splitlines()[0])
    ap.add_argument("--concurrency", default="64,256,1024", help="closed-loop streams, comma-separated")
    ap.add_argument("--workers", default="1,2", help="worker counts, comma-separated (each ≤ cores)")
    ap.add_argument("--rounds", type=int, default=3, help="closed loop: requests per stream (rounds × C)")
    ap.add_argument("--rates", default="250,500,1000,2000,4000", help="open-loop rates, req/s")
    ap.add_argument("--seconds", type=float, default=2.0, help="open loop: schedule length per rate, s")
    ap.add_argument("--loops", default="closed,open", help="which loops to run: closed, open or both")
    ap.add_argument("--server-processes", type=int, default=2)
    ap.add_argument("--vllm", type=Path, help="the `vllm` executable whose `bench serve` to run beside ours")
    ap.add_argument("--no-vllm", action="store_true", help="run our client only")
    ap.add_argument("--tokenizer", type=Path, help="tokenizer folder for vLLM's client (default: embedded)")
    a = ap.parse_args(argv)
    loops = tuple(x for x in a.loops.split(",") if x)
    if not loops or any(x not in LOOPS for x in loops):
        raise BenchArgsError(f"--loops: {a.loops!r}: give closed, open or closed,open")
    if a.rounds < 1 or a.server_processes < 1 or not (math.isfinite(a.seconds) and a.seconds > 0):
        raise BenchArgsError("--rounds and --server-processes must be ≥ 1, --seconds > 0")
    if a.vllm is not None and not (a.vllm.is_file() and os.access(a.vllm, os.X_OK)):
        raise BenchArgsError(f"--vllm: {a.vllm} is not an executable file")
    if a.tokenizer is not None and not (a.tokenizer / "tokenizer.json").is_file():
        raise BenchArgsError(f"--tokenizer: {a.tokenizer} holds no tokenizer.json")
    try:
        workers = [resolve_workers(w, "--workers") for w in _numbers(a.workers, "workers")]
    except InputError as e:
        raise BenchArgsError(str(e)) from None
    return Options(
        concurrency=_numbers(a.concurrency, "concurrency"),
        workers=workers,
        rounds=a.rounds,
        rates=_numbers(a.rates, "rates", float),
        seconds=a.seconds,
        loops=loops,
        server_processes=a.server_processes,
        vllm=a.vllm,
        no_vllm=a.no_vllm,
        tokenizer=a.tokenizer,
    )


def _fmt(x: float | None) -> str:
    return "   —  " if x is None else f"{x:7.2f}"


def _diff(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _signed(x: float | None) -> str:
    return "    —  " if x is None else f"{x:+7.2f}"


def listen_overflows() -> int | None:
    """The kernel's count of connections it dropped because a listen queue was full (Linux, host-wide;
    None where not readable). The client's connect then waits for a SYN retry (1 s, then more), which its
    TTFT counts (as vLLM's does) and the server's log cannot see: the request arrives only once accepted."""
    try:
        rows = [
            r.split() for r in Path("/proc/net/netstat").read_text().splitlines() if r.startswith("TcpExt:")
        ]
    except OSError:
        return None
    if len(rows) != 2 or "ListenOverflows" not in rows[0]:
        return None
    return int(rows[1][rows[0].index("ListenOverflows")])


class _Case:
    """How long a case took, the host's load average (1 min) before and after it, and the listen-queue
    overflows (host-wide) during it."""

    def __enter__(self) -> _Case:
        self.load, self.t, self.dropped = os.getloadavg()[0], time.perf_counter(), listen_overflows()
        return self

    def __exit__(self, *_) -> None:
        self.took, self.after = time.perf_counter() - self.t, os.getloadavg()[0]
        now = listen_overflows()
        self.dropped = None if now is None or self.dropped is None else now - self.dropped

    def line(self) -> str:
        dropped = "not read" if self.dropped is None else str(self.dropped)
        return (
            f"took {self.took:.1f} s, load average {self.load:.2f} → {self.after:.2f}, connections dropped "
            f"at a full listen queue (host-wide): {dropped}"
        )


class ServerRun(NamedTuple):
    """The server's own log over one run."""

    ttft_ms: Distribution
    requests: int
    late: int
    max_late_ms: float


def server_run(logs: Path, before: float, n: int) -> ServerRun:
    """The last `n` requests that arrived since `before` (a test request a client sent first left out)."""
    time.sleep(0.3)  # a process logs a request after its last write returns: the client may read [DONE] first
    mine = sorted((e for e in read_timing(logs).entries if e.arrived_s >= before), key=lambda e: e.arrived_s)
    mine = mine[-n:]
    ttft = [1000 * (e.first_chunk_s - e.arrived_s) for e in mine if e.first_chunk_s is not None]
    return ServerRun(
        ttft_ms=summarize(ttft, unit="ms", definition="server TTFT: first chunk sent − arrival"),
        requests=len(mine),
        late=sum(1 for e in mine if e.late_ms > LATE_TOLERANCE_MS),
        max_late_ms=max((e.late_ms for e in mine), default=0.0),
    )


class Summary:
    """What the end of the output restates: TTFT p50 error per client and stream count, and where each
    client's open loop turned client-bound."""

    def __init__(self) -> None:
        self.closed: dict[str, dict[int, str]] = {}
        self.open: dict[str, list[tuple[float, bool]]] = {}

    def add_closed(self, who: str, c: int, err50: float | None, bound: bool | None) -> None:
        verdict = {True: " (client-bound)", False: " (valid)", None: ""}[bound]
        self.closed.setdefault(who, {})[c] = f"{_signed(err50).strip()} ms{verdict}"

    def print(self) -> None:
        print("\n## summary")
        for who, row in self.closed.items():
            cells = ", ".join(f"C={c}: {v}" for c, v in row.items())
            print(f"closed loop, TTFT p50 error vs the server's log, {who}: {cells}")
        for who, steps in self.open.items():
            valid = [f"{r:g}/s" for r, bound in steps if not bound] or ["none"]
            bound = [f"{r:g}/s" for r, b in steps if b] or ["none"]
            print(f"open loop, {who}: rates judged valid {', '.join(valid)}; judged client-bound "
                  f"{', '.join(bound)}")  # fmt: skip


def _closed_line(c: int, who: str, ok: int, n: int, p50, p99, server: ServerRun) -> str:
    return (
        f"C={c:5d} {who:12s} ok {ok:5d}/{n}  client TTFT p50 {_fmt(p50)} p99 {_fmt(p99)} | server p50 "
        f"{_fmt(server.ttft_ms.p(50))} p99 {_fmt(server.ttft_ms.p(99))} | error p50 "
        f"{_signed(_diff(p50, server.ttft_ms.p(50)))} p99 {_signed(_diff(p99, server.ttft_ms.p(99)))} ms | "
        f"server late > {LATE_TOLERANCE_MS:g} ms: {server.late}/{server.requests} (max {server.max_late_ms:.1f} ms)"
    )


def _client_verdict(r: PointResult) -> bool | None:
    """Print the client check the result states (every point since schema 1.9.0); its verdict."""
    cl = r.client
    if cl is None:  # a tool older than 1.9.0: a one-worker closed loop had none
        print("    no client check in the result")
        return None
    verdict = "CLIENT-BOUND: " + "; ".join(cl.client_bound_reasons) if cl.client_bound else "valid"
    print(f"    loop lag p50 {_fmt(cl.loop_lag_ms.p(50))} p99 {_fmt(cl.loop_lag_ms.p(99))} ms, "
          f"write delay p50 {_fmt(cl.write_delay_ms.p(50))} p99 {_fmt(cl.write_delay_ms.p(99))} ms, "
          f"{cl.event_loop}; {verdict}")  # fmt: skip
    return cl.client_bound


def closed_case(url: str, logs: Path, c: int, w: int, rounds: int, summary: Summary) -> None:
    n = rounds * c
    point = LoadPoint.at(concurrency=c, num_requests=n, output_len=TOKENS, input_len=INPUT_LEN)
    with _Case() as case:
        before = time.perf_counter()
        r = asyncio.run(run_point(url, MODEL, point, SLO(), workers=w))
        server = server_run(logs, before, n)
    m, who = r.metrics, f"workers={w}"
    print(_closed_line(c, who, m.completed, n, m.ttft_ms.p(50), m.ttft_ms.p(99), server))
    bound = _client_verdict(r)
    print(f"    {case.line()}", flush=True)
    summary.add_closed(f"ours, {who}", c, _diff(m.ttft_ms.p(50), server.ttft_ms.p(50)), bound)


class VllmClient(NamedTuple):
    command: list[str]
    tokenizer: str


def _vllm_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # its own venv, not this checkout
    return {**env, **_OFFLINE}


def find_vllm(opt: Options) -> tuple[VllmClient | None, str]:
    """vLLM's benchmark client as this host can run it, or None and the reason it cannot."""
    if opt.no_vllm:
        return None, "vllm bench serve: skipped (--no-vllm)"
    exe = opt.vllm or (DEFAULT_VLLM if DEFAULT_VLLM.is_file() else None)
    if exe is None:
        return (
            None,
            f"vllm bench serve: skipped: no --vllm given and no {DEFAULT_VLLM.relative_to(ROOT)} here",
        )
    python = exe.parent / "python"
    try:
        tokenizer = str(opt.tokenizer) if opt.tokenizer else embedded_tokenizer_dir(str(python))
    except InputError as e:
        return None, f"vllm bench serve: skipped: no tokenizer folder (give --tokenizer): {e}"
    probe = subprocess.run([str(exe), "bench", "serve", "--help"], capture_output=True, text=True,
                           env=_vllm_env(), timeout=600)  # fmt: skip
    named = f"tokenizer {Path(tokenizer).name}{'' if opt.tokenizer else ' (the embedded model)'}, offline"
    if probe.returncode == 0:
        how = f"vllm bench serve: its console script; {named}"
        return VllmClient([str(exe), "bench", "serve"], tokenizer), how
    last = (probe.stderr.strip().splitlines() or ["(no output)"])[-1]
    how = (f"vllm bench serve: its console script does not start here ({last[:200]}); calling its entry "
           f"point vllm.benchmarks.serve.main (what the subcommand runs) in the same environment; {named}")  # fmt: skip
    return VllmClient([str(python), "-c", _VLLM_MAIN], tokenizer), how


def run_vllm(client: VllmClient, url: str, c: int, n: int) -> dict:
    """One closed-loop run of vLLM's client: n requests, at most c in flight; its saved result."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "--base-url", url, "--model", MODEL, "--tokenizer", client.tokenizer, "--dataset-name", "random",
            "--random-input-len", str(INPUT_LEN), "--random-output-len", str(TOKENS), "--num-prompts", str(n),
            "--max-concurrency", str(c), "--ignore-eos", "--disable-tqdm", "--save-result", "--result-dir", tmp,
            "--result-filename", "r.json", "--percentile-metrics", "ttft,tpot,itl,e2el",
            "--metric-percentiles", "50,99",
        ]  # fmt: skip
        out = subprocess.run([*client.command, *args], capture_output=True, text=True, env=_vllm_env(),
                             timeout=1800)  # fmt: skip
        path = Path(tmp) / "r.json"
        if not path.is_file():
            tail = " | ".join((out.stdout + out.stderr).strip().splitlines()[-3:])
            raise RuntimeError(f"vllm bench serve failed (exit {out.returncode}): {tail[-600:]}")
        return json.loads(path.read_text())


def vllm_case(client: VllmClient, url: str, logs: Path, c: int, rounds: int, summary: Summary) -> None:
    n = rounds * c
    with _Case() as case:
        before = time.perf_counter()
        try:
            res = run_vllm(client, url, c, n)
        except (RuntimeError, subprocess.TimeoutExpired) as e:
            res = None
            failed = str(e)
        server = server_run(logs, before, n)
    if res is None:
        print(f"C={c:5d} vllm bench   {failed}\n    {case.line()}", flush=True)
        return
    p50, p99 = res.get("p50_ttft_ms", res.get("median_ttft_ms")), res.get("p99_ttft_ms")
    print(_closed_line(c, "vllm bench", res["completed"], n, p50, p99, server))
    print(f"    its duration {res['duration']:.2f} s (requests only); {case.line()}", flush=True)
    summary.add_closed("vllm bench serve", c, _diff(p50, server.ttft_ms.p(50)), None)


def open_case(url: str, logs: Path, rate: float, w: int, seconds: float) -> bool:
    """One open-loop step; whether the rule judged the client bound."""
    n = max(100, round(rate * seconds))
    point = LoadPoint.at(rate=rate, burstiness=math.inf, num_requests=n, input_len=INPUT_LEN,
                         output_len=OPEN_TOKENS)  # fmt: skip
    with _Case() as case:
        before = time.perf_counter()
        r = asyncio.run(run_point(url, MODEL, point, SLO(), workers=w))
        server = server_run(logs, before, n)
    a, m, cl = r.arrivals, r.metrics, r.client
    bound, reasons = (
        (cl.client_bound, cl.client_bound_reasons) if cl else (a.client_bound, a.client_bound_reasons)
    )
    wl = a.write_lag_ms
    print(
        f"rate {rate:6g}/s workers={w}  ok {m.completed:5d}/{n}  achieved {_rate(a.achieved_rate, a.achieved_fraction)} "
        f"by sent_s, {_rate(a.achieved_rate_written, a.achieved_fraction_written)} by written_s | send lag p50 "
        f"{_fmt(a.send_lag_ms.p(50))} p99 {_fmt(a.send_lag_ms.p(99))}, write lag p50 "
        f"{_fmt(wl.p(50) if wl else None)} p99 {_fmt(wl.p(99) if wl else None)} ms | TTFT p50 client "
        f"{_fmt(m.ttft_ms.p(50))} server {_fmt(server.ttft_ms.p(50))} error "
        f"{_signed(_diff(m.ttft_ms.p(50), server.ttft_ms.p(50)))} ms | server late {server.late}/{server.requests} (max {server.max_late_ms:.1f} ms)"
    )
    lag = f"loop lag p99 {_fmt(cl.loop_lag_ms.p(99)).strip()} ms; " if cl else ""
    print(
        f"    {lag}{'CLIENT-BOUND: ' + '; '.join(reasons) if bound else 'valid'}; {case.line()}", flush=True
    )
    return bound


def _rate(rate: float | None, fraction: float | None) -> str:
    if rate is None or fraction is None:
        return "   —  "
    return f"{rate:7.1f}/s ({100 * fraction:5.1f} %)"


def open_ladder(url: str, logs: Path, opt: Options, summary: Summary) -> None:
    """Each rate for every worker count in turn (same host conditions); a worker count leaves the ladder
    after two client-bound rates in a row."""
    print(
        f"\n## open loop: {OPEN_TOKENS}-token replies, {opt.seconds:g} s of schedule per rate (≥ 100 requests)"
    )
    print(f"# rule (result.client): {LOOP_RULE}\n# arrivals rule: {CLIENT_BOUND_RULE}")
    streak = dict.fromkeys(opt.workers, 0)
    for rate in opt.rates:
        for w in opt.workers:
            if streak[w] >= 2:
                continue
            bound = open_case(url, logs, rate, w, opt.seconds)
            summary.open.setdefault(f"ours, workers={w}", []).append((rate, bound))
            streak[w] = streak[w] + 1 if bound else 0
        if all(s >= 2 for s in streak.values()):
            print("# every worker count client-bound at two rates in a row: the ladder stops here")
            break


def run(opt: Options) -> None:
    cfg = MockServerConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS, slots=100_000)
    print(f"# mock server TTFT {TTFT_MS:g} ms ITL {ITL_MS:g} ms, {opt.server_processes} processes; host "
          f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f} before", flush=True)  # fmt: skip
    vllm, how = find_vllm(opt) if "closed" in opt.loops else (None, "")
    summary = Summary()
    with tempfile.TemporaryDirectory() as d, running_fleet(cfg, opt.server_processes, Path(d)) as url:
        logs = Path(d)
        if "closed" in opt.loops:
            print(f"\n## closed loop: {opt.rounds} × C requests, {INPUT_LEN} → {TOKENS} tokens\n# {how}")
            for c in opt.concurrency:
                for w in opt.workers:
                    closed_case(url, logs, c, w, opt.rounds, summary)
                if vllm is not None:
                    vllm_case(vllm, url, logs, c, opt.rounds, summary)
        if "open" in opt.loops:
            open_ladder(url, logs, opt, summary)
    summary.print()
    print(f"# load average {os.getloadavg()[0]:.2f} after")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        opt = parse_args(args)
    except BenchArgsError as e:
        print(f"bench/load_scale.py: {e}", file=sys.stderr)
        return 2
    print(f"# {' '.join(['bench/load_scale.py', *args])}", flush=True)
    started = time.perf_counter()
    run(opt)
    print(f"# whole run {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
