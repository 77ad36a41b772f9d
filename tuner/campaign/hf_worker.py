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


class _Worker:
    """The model(s), the tokenizer and one `generate` request at a time (torch, transformers imported here)."""

    def __init__(self, model_dir: str, threads: int | None):
        # deferred: after stdout is handed to the protocol, so an import-time print cannot corrupt it
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

        self.torch, self.transformers, self.model_dir = torch, transformers, model_dir
        self.auto_model, self.generation_config, self.step_clock = (
            AutoModelForCausalLM,
            GenerationConfig,
            StepClock,
        )
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        self.loaded = {}  # json of model options -> model (most recent last)

    def ready(self) -> dict:
        versions = {"transformers": self.transformers.__version__, "torch": self.torch.__version__}
        return {
            "ready": True,
            "versions": versions,
            "threads": self.torch.get_num_threads(),
            "pid": os.getpid(),
        }

    def model_for(self, opts):
        key = json.dumps(opts, sort_keys=True)
        if key in self.loaded:
            self.loaded[key] = self.loaded.pop(key)
            return self.loaded[key], 0.0
        t0 = time.perf_counter()
        dtype = opts.get("dtype", "float32")
        model = self.auto_model.from_pretrained(self.model_dir, dtype=getattr(self.torch, dtype))
        model.eval()
        with self.torch.inference_mode():  # warm-up: first-call allocations are not the configuration's cost
            ids = self.tokenizer("Hello", return_tensors="pt")
            model.generate(**ids, max_new_tokens=2, do_sample=False, pad_token_id=self.tokenizer.eos_token_id)
        self.loaded[key] = model
        while len(self.loaded) > 2:
            self.loaded.pop(next(iter(self.loaded)))
        return model, time.perf_counter() - t0

    def encode(self, prompt):
        if isinstance(prompt, list):
            text = self.tokenizer.apply_chat_template(prompt, tokenize=False, add_generation_prompt=True)
            return self.tokenizer(text, return_tensors="pt", add_special_tokens=False)
        return self.tokenizer(prompt, return_tensors="pt")

    def generate(self, req):
        kw = dict(req.get("generation", {}))
        try:
            # what the feature model's derived constraints promise
            self.generation_config(**kw).validate(strict=True)
        except Exception as exc:
            return {"ok": False, "kind": "invalid_config", "error": " ".join(str(exc).split())[:400]}
        if req.get("fixed_length") and "max_new_tokens" in kw:
            kw["min_new_tokens"] = kw["max_new_tokens"]
        try:
            model, load_s = self.model_for(req.get("model", {}))
        except Exception as exc:
            return {"ok": False, "kind": "load_failed", "error": f"{type(exc).__name__}: {exc}"[:400]}
        config = self.generation_config(**kw)
        cpu0, wall0 = time.process_time(), time.perf_counter()
        try:
            results = [
                self.timed(model, config, req, i, prompt) for i, prompt in enumerate(req.get("prompts", []))
            ]
        except Exception as exc:  # the library's own failure for this configuration, whatever its class
            return {"ok": False, "kind": "generation_failed", "error": f"{type(exc).__name__}: {exc}"[:400]}
        return {
            "ok": True,
            "results": results,
            "cpu_s": time.process_time() - cpu0,
            "wall_s": time.perf_counter() - wall0,
            "load_s": load_s,
        }

    def timed(self, model, config, req, i: int, prompt) -> dict:
        """One prompt's generation, timed: TTFT by the step clock, E2EL when `generate` returns."""
        self.torch.manual_seed(int(req.get("seed", 0)) + i)
        clock = self.step_clock()
        t0 = time.perf_counter()
        ids = self.encode(prompt)
        with self.torch.inference_mode():
            out = model.generate(
                **ids,
                generation_config=config,
                stopping_criteria=[clock],
                pad_token_id=self.tokenizer.eos_token_id,
            )
        new = out[0, ids["input_ids"].shape[1] :]
        text = self.tokenizer.decode(new, skip_special_tokens=True) if req.get("texts") else None
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
        return row


def _answer(worker: _Worker, line: str) -> dict | None:
    """The reply to one protocol line; None: quit."""
    try:
        req = json.loads(line)
    except json.JSONDecodeError:
        return {"ok": False, "kind": "protocol", "error": "not JSON"}
    if req.get("op") == "quit":
        return None
    if req.get("op") != "generate":
        return {"ok": False, "kind": "protocol", "error": f"unknown op {req.get('op')}"}
    return worker.generate(req)


def main(argv):
    proto = _protocol_stdout()
    worker = _Worker(argv[0], int(argv[1]) if len(argv) > 1 and argv[1] else None)
    proto.write(json.dumps(worker.ready()) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        answer = _answer(worker, line)
        if answer is None:
            break
        proto.write(json.dumps(answer) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
