"""Convert a GGUF checkpoint to a safetensors folder vLLM's CPU build can serve.

Runs inside the *serving* environment (it needs torch, transformers, gguf, accelerate),
as a script: `python gguf_convert.py MODEL.gguf OUT_DIR`. It writes OUT_DIR atomically
(a sibling temporary folder renamed into place) and a `conversion.json` describing what
was done, which the factsheet copies into its provenance.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path


def convert(gguf_path: Path, out_dir: Path) -> dict:
    # deferred: torch and transformers exist only in the serving environment, whose python runs this script
    import torch
    import transformers
    from transformers import AutoConfig, AutoModelForCausalLM, AutoTokenizer

    folder, name = str(gguf_path.parent), gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, torch_dtype=torch.float32)
    config = AutoConfig.from_pretrained(folder, gguf_file=name)
    # save_pretrained refuses a GGUF-loaded model: rebuild a plain one from the same config.
    fresh = AutoModelForCausalLM.from_config(config, torch_dtype=torch.float32)
    missing, unexpected = fresh.load_state_dict(loaded.state_dict(), strict=False)
    if unexpected or [k for k in missing if "lm_head" not in k]:
        raise RuntimeError(f"state dict mismatch: missing={missing} unexpected={unexpected}")
    if missing:  # tied embeddings: lm_head shares the input embedding
        fresh.tie_weights()

    tmp = Path(tempfile.mkdtemp(prefix=out_dir.name + ".", dir=out_dir.parent))
    try:
        fresh.save_pretrained(tmp, safe_serialization=True)
        tokenizer.save_pretrained(tmp)
        record = {
            "method": "transformers GGUF dequantization to float32, state dict copied into a model "
            "built from the GGUF's config, saved as safetensors",
            "source_file": name,
            "dtype": "float32",
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "parameters": sum(p.numel() for p in fresh.parameters()),
            "architecture": config.architectures[0] if config.architectures else type(fresh).__name__,
        }
        (tmp / "conversion.json").write_text(json.dumps(record, indent=2))
        if out_dir.exists():
            shutil.rmtree(out_dir)
        os.replace(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return record


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: gguf_convert.py MODEL.gguf OUT_DIR")
    print(json.dumps(convert(Path(sys.argv[1]), Path(sys.argv[2]))))
