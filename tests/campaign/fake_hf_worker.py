"""A stand-in for tuner/campaign/hf_worker.py with known timing (stdlib only; tests of the protocol).

    python fake_hf_worker.py [MODE]

Per prompt it sleeps TTFT_S before the first token, then STEP_S per further token, so TTFT ≈ 30 ms and
TPOT ≈ 10 ms by construction (never earlier: sleeping only makes it later). Generated tokens =
max_new_tokens (default 4). CPU-seconds are burned on purpose for `burn` requests. Modes:
  normal     answers every request
  die        exits (code 3) on the second generate request
  hang       never answers a generate request
  garbage    answers with a line that is not JSON
  noready    exits before saying ready
"""

import json
import os
import sys
import time

TTFT_S, STEP_S = 0.03, 0.01


def main(mode: str) -> int:
    if mode == "noready":
        print("cannot load model", file=sys.stderr)
        return 4
    out = sys.stdout
    out.write(json.dumps({"ready": True, "versions": {"fake": "1"}, "threads": 1, "pid": os.getpid()}) + "\n")
    out.flush()
    calls, loaded = 0, None
    for line in sys.stdin:
        req = json.loads(line)
        if req.get("op") == "quit":
            return 0
        calls += 1
        if mode == "die" and calls == 2:
            return 3
        if mode == "hang":
            time.sleep(3600)
        if mode == "garbage":
            out.write("this is not json\n")
            out.flush()
            continue
        gen = req.get("generation", {})
        if gen.get("num_beam_groups"):
            out.write(
                json.dumps({"ok": False, "kind": "generation_failed", "error": "no groups here"}) + "\n"
            )
            out.flush()
            continue
        load_s = 0.0
        if req.get("model") != loaded:
            loaded, load_s = req.get("model"), 0.5
        n = int(gen.get("max_new_tokens", 4))
        cpu0 = time.process_time()
        results = []
        for i, prompt in enumerate(req["prompts"]):
            t0 = time.perf_counter()
            time.sleep(TTFT_S)
            first = time.perf_counter()
            time.sleep(STEP_S * (n - 1))
            if gen.get("burn"):  # CPU seconds, not wall: a loaded host stretches the loop, never shortens it
                end = time.process_time() + gen["burn"]
                while time.process_time() < end:
                    pass
            end = time.perf_counter()
            row = {
                "ttft_ms": (first - t0) * 1000,
                "e2el_ms": (end - t0) * 1000,
                "tpot_ms": (end - first) * 1000 / (n - 1) if n > 1 else None,
                "tokens": n,
                "steps": n,
            }
            if req.get("texts"):
                row["text"] = f"reply to {prompt!r} seed {req['seed'] + i}"
            results.append(row)
        answer = {"ok": True, "results": results, "cpu_s": time.process_time() - cpu0, "load_s": load_s}
        out.write(json.dumps(answer) + "\n")
        out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "normal"))
