"""What shared prefixes do to serving figures: the embedded vLLM with prefix caching on and off.

For shared fractions 0 %, 50 % and 90 % (the `shared-prefix` profile: 4 prefixes, P + S = `--total-len`
tokens, 1024 by default, exact under the model's tokenizer, 8 output tokens), each server measures a closed-loop point
(concurrency 4) for TTFT p50/p99, and capacity at SLO (the build's search: largest concurrency whose TTFT
p99 meets the SLO, doubling from 2 up to 8, short probes). Then `chat-sessions` (a 192-token system prompt,
3 turns of 32-token user text, 16-token replies, 2 users): TTFT by turn index. The server's prefix-cache
hit rate over each run comes from its /metrics counters (Δhits / Δqueries, tokens), so "on" and "off"
are seen, not assumed.

vLLM caches whole KV blocks, 128 tokens on its CPU backend (vllm/platforms/cpu.py): with P + S = 1024 the
50 % prefix (512 tokens) covers 4 whole blocks and the 90 % one (922 tokens) 7, so their hit rates separate
(at most 0.5 and 0.875, less the first prompt of each group); with 256 tokens (an earlier run, under heavy
contention) both covered one block and their hit rates were alike.

The ratios that matter are within one run (same host, same load): TTFT p50 caching off / on at 90 %
shared, and turn 3 / turn 1 TTFT with caching on vs off. The absolute figures move with the host: the
results file states the load average before and after. Sized for a few minutes on 2 cores.

Usage (from a fresh clone, after `make` has built .venv and .venv-vllm; one real server at a time):
    flock /tmp/vllm.lock .venv/bin/python bench/prefix_effect.py [--requests 16] [--slo-ttft-ms 1500]
Writes bench/prefix_effect_results.txt (with the command that produced it).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from factsheet.spec.build import load_spec  # noqa: E402
from probes.core.files import write_atomic  # noqa: E402
from probes.load.capacity import CapacitySearch, find_capacity, point_runner  # noqa: E402
from probes.load.point import SLO, LoadPoint  # noqa: E402
from probes.load.runner import run_point  # noqa: E402
from probes.load.workloads.profiles import ChatSessionsProfile, SharedPrefixProfile  # noqa: E402
from probes.targets import open_target  # noqa: E402

EMBEDDED_SPEC = ROOT / "models/smollm2-cpu.yaml"
RESULTS = ROOT / "bench/prefix_effect_results.txt"
OUT = 8
FRACTIONS = (0.0, 0.5, 0.9)


def _hits(base_url: str) -> tuple[float, float]:
    """(prefix-cache hits, queries) so far, tokens, from the server's Prometheus counters."""
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    got = {"vllm:prefix_cache_hits": 0.0, "vllm:prefix_cache_queries": 0.0}
    for family in text_string_to_metric_families(text):
        if family.name in got:
            got[family.name] += sum(s.value for s in family.samples if s.name.endswith("_total"))
    return got["vllm:prefix_cache_hits"], got["vllm:prefix_cache_queries"]


def _hit_rate(before: tuple[float, float], after: tuple[float, float]) -> str:
    dq = after[1] - before[1]
    return "n/a" if dq <= 0 else f"{(after[0] - before[0]) / dq:.2f}"


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{x:.0f}"


def _shared(fraction: float, total: int) -> SharedPrefixProfile:
    prefix = round(total * fraction)
    return SharedPrefixProfile(num_prefixes=4, prefix_len=prefix, suffix_len=total - prefix, output_len=OUT)


def _measure(live, args, out: list[str], caching: str) -> None:
    slo = SLO(ttft_ms=args.slo_ttft_ms, p99_metric="ttft_ms")
    base = dict(input_len=args.total_len, output_len=OUT, ignore_eos=live.supports_ignore_eos, seed=args.seed)
    kw = dict(api_key=live.api_key, tokenizer_path=live.tokenizer_path)
    for fraction in FRACTIONS:
        profile = _shared(fraction, args.total_len)
        point = LoadPoint.at(concurrency=4, num_requests=args.requests, warmup_requests=1, **base)
        before = _hits(live.base_url)
        r = asyncio.run(run_point(live.base_url, live.model, point, slo, profile=profile, **kw))
        rate = _hit_rate(before, _hits(live.base_url))
        template = LoadPoint.at(concurrency=2, num_requests=args.probe_requests, warmup_requests=1, **base)
        run = point_runner(
            live.base_url, live.model, template, slo, knob="concurrency", profile=profile, **kw
        )
        search = CapacitySearch.for_knob("concurrency", start=2, max_value=8, max_points=args.max_points)
        cap = find_capacity(run, slo, search, knob="concurrency")
        m = r.metrics
        out.append(
            f"caching {caching:3} shared {fraction:4.0%}: TTFT p50 {_ms(m.ttft_ms.p(50))} ms, p99 "
            f"{_ms(m.ttft_ms.p(99))} ms (n={m.ttft_ms.n}), {m.request_throughput or 0:.2f} req/s at concurrency "
            f"4, hit rate {rate}; capacity at SLO (TTFT p99 ≤ {args.slo_ttft_ms:g} ms): "
            f"{cap.capacity if cap.capacity is not None else 'none passed'} users (bracket {cap.bracket}, "
            f"{len(cap.points)} probes of {args.probe_requests})"
        )
        print(out[-1], flush=True)
    chat = ChatSessionsProfile(
        system_prompt_len=192, turns_min=3, turns_max=3, user_turn_len=32, output_len=16
    )
    point = LoadPoint.at(concurrency=2, num_requests=args.chat_requests, endpoint="chat",
                         input_len=32, output_len=16, ignore_eos=live.supports_ignore_eos, seed=args.seed)  # fmt: skip
    before = _hits(live.base_url)
    r = asyncio.run(run_point(live.base_url, live.model, point, slo, profile=chat, **kw))
    by_turn = "; ".join(
        f"turn {t.turn} TTFT p50 {_ms(t.ttft_ms.p(50))} ms p99 {_ms(t.ttft_ms.p(99))} ms "
        f"(n={t.ttft_ms.n}, prompt {t.prompt_tokens.mean or 0:.0f} tok)"
        for t in r.turns or []
    )
    out.append(
        f"caching {caching:3} chat-sessions: {by_turn}; hit rate {_hit_rate(before, _hits(live.base_url))}"
    )
    print(out[-1], flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=16, help="requests of each fixed point")
    ap.add_argument("--probe-requests", type=int, default=10, help="requests of each capacity probe")
    ap.add_argument("--max-points", type=int, default=3, help="capacity probes at most")
    ap.add_argument("--chat-requests", type=int, default=12, help="chat turns in all (3 per session)")
    ap.add_argument("--total-len", type=int, default=1024, help="prompt tokens, prefix + suffix")
    ap.add_argument("--slo-ttft-ms", type=float, default=3000.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--startup-timeout-s", type=float, default=900.0)
    args = ap.parse_args()
    spec, _ = load_spec(EMBEDDED_SPEC)
    lines = [f"command: .venv/bin/python bench/prefix_effect.py {' '.join(sys.argv[1:])}".rstrip(),
             f"load average before: {os.getloadavg()[0]:.1f} (2-core host)"]  # fmt: skip
    t0 = time.monotonic()
    for caching, flags in (("on", []), ("off", ["--no-enable-prefix-caching"])):
        # A busy shared host can take minutes to start the engine: wait longer than a build does.
        update = {
            "extra_args": [*spec.target.extra_args, *flags],
            "startup_timeout_s": args.startup_timeout_s,
        }
        target = spec.target.model_copy(update=update)
        with open_target(target) as live:
            _measure(live, args, lines, caching)
    lines.append(f"load average after: {os.getloadavg()[0]:.1f}; wall {time.monotonic() - t0:.0f} s")
    write_atomic(RESULTS, ("\n".join(lines) + "\n").encode())
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
