"""Ask the installed library whether configurations are valid. Run with the *serving* environment's python.

Standalone on purpose (the tool never imports torch, transformers or vLLM): reads JSON
`{"library": ..., "configs": [{target: {kw: value}}...], "max_model_len": N}` on stdin and writes one JSON
object: `{"versions": {...}, "results": [{"ok": bool, "strict_only": bool, "error": str}]}`.
`strict_only` marks a configuration rejected only by the strict check (the library would merely warn that
an option has no effect under the chosen strategy).
"""

import json
import logging
import sys
import warnings


def _transformers(configs):
    # deferred: run by the serving environment's python, which may hold transformers without vLLM
    import transformers
    from transformers import GenerationConfig

    transformers.logging.set_verbosity_error()
    out = []
    for c in configs:
        kw = c.get("request", {})
        try:
            GenerationConfig(**kw).validate(strict=False)
        except Exception as exc:  # the library's own verdict, whatever its class
            out.append({"ok": False, "strict_only": False, "error": str(exc).splitlines()[0][:300]})
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                GenerationConfig(**kw).validate(strict=True)
            dtype = c.get("model", {}).get("dtype")
            if dtype is not None:
                # deferred: torch only when a configuration names a dtype (the serving environment holds it)
                import torch

                if not isinstance(getattr(torch, dtype, None), torch.dtype):
                    raise ValueError(f"dtype {dtype} is not a torch dtype")
            out.append({"ok": True, "strict_only": False, "error": ""})
        except Exception as exc:
            out.append({"ok": False, "strict_only": True, "error": " ".join(str(exc).split())[:300]})
    return {"transformers": transformers.__version__}, out


def _vllm(configs, max_model_len):
    # deferred: run by the serving environment's python, which may hold vLLM without transformers
    import vllm
    from vllm import SamplingParams
    from vllm.config import SchedulerConfig

    out = []
    for c in configs:
        req, eng = c.get("request", {}), c.get("engine", {})
        try:
            SamplingParams(**req)
            sched = {
                k: eng[k]
                for k in ("max_num_seqs", "max_num_batched_tokens", "enable_chunked_prefill")
                if k in eng
            }
            SchedulerConfig(max_model_len=max_model_len, is_encoder_decoder=False, **sched)
            if eng.get("dtype") not in (None, "float32", "bfloat16", "float16", "auto"):
                raise ValueError(f"dtype {eng['dtype']} is not one vLLM accepts")
            out.append({"ok": True, "strict_only": False, "error": ""})
        except Exception as exc:
            out.append({"ok": False, "strict_only": False, "error": " ".join(str(exc).split())[:300]})
    return {"vllm": vllm.__version__}, out


def main() -> None:
    logging.disable(logging.WARNING)
    req = json.load(sys.stdin)
    if req["library"] == "transformers":
        versions, results = _transformers(req["configs"])
    elif req["library"] == "vllm":
        versions, results = _vllm(req["configs"], int(req.get("max_model_len", 2048)))
    else:
        raise SystemExit(f"unknown library {req['library']}")
    sys.stdout.write("\n" + json.dumps({"versions": versions, "results": results}) + "\n")


if __name__ == "__main__":
    main()
