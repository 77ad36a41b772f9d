"""TPOT of an n-gram speculation configuration on the embedded vLLM: from the server's usage token counts
(what the campaign measures now, through the load probe) against counting streamed chunks (what the campaign
measurer did before: one chunk taken for one token). With speculation a chunk can carry several accepted
tokens, so counting chunks overstates TPOT by the mean tokens per chunk.

    flock /tmp/vllm.lock python bench/speculation_tpot.py [--spec models/smollm2-cpu.yaml] [--requests 8]
        [--output-len 64] [--tokens 4] [--result FILE]

Starts the spec's vLLM target with `--speculative-config` as the campaign does for the vLLM feature model's
`Speculation` feature (tuner.campaign.vllm_measurer.engine_flags), sends one closed-loop load point at
concurrency 1 (tuner.campaign.vllm_measurer.latency_requests), and prints, per request and pooled, the
output tokens, chunks, TPOT by usage tokens and by chunk count. The result file says the command.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from probes.core.files import write_atomic  # noqa: E402
from probes.core.measurement import MS_PER_S, summarize  # noqa: E402
from probes.load.records import RequestRecord  # noqa: E402
from probes.targets.model_source import prepare  # noqa: E402
from probes.targets.vllm import VllmServer, VllmTarget  # noqa: E402
from tuner.campaign.latency import LATENCY  # noqa: E402
from tuner.campaign.vllm_measurer import engine_flags, latency_requests  # noqa: E402

CHUNK_TPOT = "(last chunk − first chunk) / (chunks − 1): one chunk taken for one token"


def chunk_tpot_ms(r: RequestRecord) -> float | None:
    """The old measurer's TPOT: (end − first chunk) / (chunks − 1)."""
    return (r.end_s - r.first_chunk_s) * MS_PER_S / (len(r.chunk_s) - 1) if len(r.chunk_s) > 1 else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spec", default="models/smollm2-cpu.yaml")
    ap.add_argument("--requests", type=int, default=8)
    ap.add_argument("--input-len", type=int, default=64)
    ap.add_argument("--output-len", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=4, help="num_speculative_tokens")
    ap.add_argument("--result", default=None, help="write the figures as JSON here")
    ap.add_argument("--startup-timeout-s", type=float, default=900.0, help="n-gram start-up compiles kernels")
    args = ap.parse_args()

    import yaml

    target = VllmTarget.model_validate(yaml.safe_load(Path(args.spec).read_text())["target"])
    target = target.model_copy(update={"startup_timeout_s": args.startup_timeout_s})
    prepared = prepare(target.model, target.serving_python())
    engine = {"speculative_method": "ngram", "num_speculative_tokens": args.tokens}
    with VllmServer(target, prepared, flags=engine_flags(engine)) as server:
        figures = latency_requests(
            server.base_url,
            target.served_model_name,
            requests=args.requests,
            input_len=args.input_len,
            output_len=args.output_len,
            seed=0,
            sampling={"temperature": 0.0},
            tokenizer_path=prepared.tokenizer_path,
        )
    records = [RequestRecord.model_validate(r) for r in figures[LATENCY]["records"]]
    ok = [r for r in records if r.ok]
    by_chunks = [t for t in (chunk_tpot_ms(r) for r in ok) if t is not None]
    out = {
        "command": " ".join(["python", *sys.argv]),
        "engine": engine,
        "requests": len(records),
        "completed": len(ok),
        "output_tokens_mean": float(np.mean([r.output_tokens for r in ok])),
        "chunks_mean": float(np.mean([len(r.chunk_s) for r in ok])),
        "tpot_p50_ms_usage_tokens": figures["tpot_p50_ms"],
        "tpot_p50_ms_chunk_count": summarize(by_chunks, unit="ms", definition=CHUNK_TPOT).p(50),
        "e2el_p50_ms": figures["e2el_p50_ms"],
        "ttft_p50_ms": figures["ttft_p50_ms"],
    }
    print(json.dumps(out, indent=1))
    if args.result:
        write_atomic(args.result, json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
