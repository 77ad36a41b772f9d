"""Hugging Face transformers generation worker. Run with the *serving* environment's python (torch, transformers).

Standalone on purpose (stdlib + torch + transformers; the tool never imports them): the tool starts it once
(under the lifeline wrapper, so it dies with the tool) and talks JSON lines over stdin/stdout:

    python hf_worker.py MODEL_DIR [THREADS]

    worker -> {"ready": true, "versions": {...}, "threads": N}
    tool   -> {"op": "generate", "model": {"dtype": ...}, "generation": {GenerationConfig kwargs},
               "prompts": [str | [chat messages]], "fixed_length": bool, "seed": int, "texts": bool}
    worker -> {"ok": true, "results": [{"ttft_ms", "e2el_ms", "tpot_ms", "tokens", "text"?}],
               "cpu_s": float, "load_s": float, "wall_s": float}
           |  {"ok": false, "kind": "invalid_config" | "generation_failed", "error": "..."}
    tool   -> {"op": "quit"}

Timing: the first-token time is taken by a stopping criterion, which `generate` calls once per decoding step
after the step's token is chosen, in every strategy (greedy, sampling, beam search, assisted/prompt lookup);
transformers' streamers refuse beam search. E2EL ends when `generate` returns; TPOT = (E2EL - TTFT) /
(tokens - 1). `cpu_s` is this process's CPU-seconds (user + system, all threads) over the request's prompts.
The model is loaded once per distinct `model` options (dtype) and kept for the next request (two at most).
`fixed_length` sets min_new_tokens = max_new_tokens (the field's ignore-EOS convention for latency).
"""

import json
import os
import sys
import time
import warnings


def _protocol_stdout():
    """A private copy of stdout for the protocol; fd 1 then points at stderr, so a library's print cannot
    corrupt the stream."""
    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def main(argv):
    proto = _protocol_stdout()
    model_dir = argv[0]
    threads = int(argv[1]) if len(argv) > 1 and argv[1] else None

    import torch
    import transformers
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig, StoppingCriteria

    transformers.logging.set_verbosity_error()
    warnings.simplefilter("ignore")
    if threads:
        torch.set_num_threads(threads)

    class StepClock(StoppingCriteria):
        """Records the time of each decoding step; never stops generation."""

        def __init__(self):
            self.times = []

        def __call__(self, input_ids, scores, **kwargs):
            self.times.append(time.perf_counter())
            return torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    loaded = {}  # json of model options -> model (most recent last)

    def model_for(opts):
        key = json.dumps(opts, sort_keys=True)
        if key in loaded:
            loaded[key] = loaded.pop(key)
            return loaded[key], 0.0
        t0 = time.perf_counter()
        dtype = opts.get("dtype", "float32")
        model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=getattr(torch, dtype))
        model.eval()
        with torch.inference_mode():  # warm-up: first-call allocations are not the configuration's cost
            ids = tokenizer("Hello", return_tensors="pt")
            model.generate(**ids, max_new_tokens=2, do_sample=False, pad_token_id=tokenizer.eos_token_id)
        loaded[key] = model
        while len(loaded) > 2:
            loaded.pop(next(iter(loaded)))
        return model, time.perf_counter() - t0

    def encode(prompt):
        if isinstance(prompt, list):
            text = tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
            return tokenizer(text, return_tensors="pt", add_special_tokens=False)
        return tokenizer(prompt, return_tensors="pt")

    def generate(req):
        kw = dict(req.get("generation", {}))
        try:
            GenerationConfig(**kw).validate(
                strict=True
            )  # what the feature model's derived constraints promise
        except Exception as exc:
            return {"ok": False, "kind": "invalid_config", "error": " ".join(str(exc).split())[:400]}
        if req.get("fixed_length") and "max_new_tokens" in kw:
            kw["min_new_tokens"] = kw["max_new_tokens"]
        try:
            model, load_s = model_for(req.get("model", {}))
        except Exception as exc:
            return {"ok": False, "kind": "load_failed", "error": f"{type(exc).__name__}: {exc}"[:400]}
        config = GenerationConfig(**kw)
        results = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        try:
            for i, prompt in enumerate(req.get("prompts", [])):
                torch.manual_seed(int(req.get("seed", 0)) + i)
                clock = StepClock()
                t0 = time.perf_counter()
                ids = encode(prompt)
                with torch.inference_mode():
                    out = model.generate(
                        **ids,
                        generation_config=config,
                        stopping_criteria=[clock],
                        pad_token_id=tokenizer.eos_token_id,
                    )
                new = out[0, ids["input_ids"].shape[1] :]
                text = tokenizer.decode(new, skip_special_tokens=True) if req.get("texts") else None
                end = time.perf_counter()
                n = int(new.shape[0])
                first = clock.times[0] if clock.times else end
                row = {
                    "ttft_ms": (first - t0) * 1000,
                    "e2el_ms": (end - t0) * 1000,
                    "tpot_ms": (end - first) * 1000 / (n - 1) if n > 1 else None,
                    "tokens": n,
                    "steps": len(clock.times),
                }
                if text is not None:
                    row["text"] = text
                results.append(row)
        except Exception as exc:  # the library's own failure for this configuration, whatever its class
            return {"ok": False, "kind": "generation_failed", "error": f"{type(exc).__name__}: {exc}"[:400]}
        return {
            "ok": True,
            "results": results,
            "cpu_s": time.process_time() - cpu0,
            "wall_s": time.perf_counter() - wall0,
            "load_s": load_s,
        }

    versions = {"transformers": transformers.__version__, "torch": torch.__version__}
    ready = {"ready": True, "versions": versions, "threads": torch.get_num_threads(), "pid": os.getpid()}
    proto.write(json.dumps(ready) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError:
            proto.write(json.dumps({"ok": False, "kind": "protocol", "error": "not JSON"}) + "\n")
            continue
        if req.get("op") == "quit":
            break
        if req.get("op") != "generate":
            proto.write(
                json.dumps({"ok": False, "kind": "protocol", "error": f"unknown op {req.get('op')}"}) + "\n"
            )
            continue
        proto.write(json.dumps(generate(req)) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
