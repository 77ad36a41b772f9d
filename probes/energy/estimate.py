"""CodeCarbon-style TDP estimate of CPU power, used only when the spec asks for an estimate."""

from __future__ import annotations

import csv
import re
from pathlib import Path

from rapidfuzz import fuzz, process, utils

from probes.core.measurement import Model, NotMeasured
from probes.energy.codecarbon_data import data_file, describe

_CPU_POWER_CSV = "data/hardware/cpu_power.csv"


class CpuPowerEstimate(Model):
    """Modelled CPU power: a fixed fraction of the CPU model's TDP."""

    cpu_model: str
    matched_name: str
    tdp_w: float
    load_fraction: float
    power_w: float
    source: str
    method: str


def estimate_cpu_power(cpu_model: str | None = None) -> CpuPowerEstimate | NotMeasured:
    """TDP × CodeCarbon's constant load fraction, TDP looked up in CodeCarbon's cpu_power.csv.

    `cpu_model` None reads the model name of this machine from /proc/cpuinfo.
    """
    if cpu_model is None:
        cpu_model = _cpuinfo_model()
        if cpu_model is None:
            return NotMeasured(reason="CPU estimate: no 'model name' in /proc/cpuinfo")
    table = _tdp_table()
    match = _match(cpu_model, list(table))
    if isinstance(match, NotMeasured):
        return match
    tdp = table[match]
    # codecarbon's package __init__ imports its emissions tracker and that tracker's dependencies:
    # deferred: at the top it costs every command that loads the document schema (about 50 ms)
    from codecarbon.external.hardware import CONSUMPTION_PERCENTAGE_CONSTANT

    return CpuPowerEstimate(
        cpu_model=cpu_model,
        matched_name=match,
        tdp_w=tdp,
        load_fraction=CONSUMPTION_PERCENTAGE_CONSTANT,
        power_w=tdp * CONSUMPTION_PERCENTAGE_CONSTANT,
        source=describe(_CPU_POWER_CSV),
        method=(
            f"CodeCarbon constant mode: {CONSUMPTION_PERCENTAGE_CONSTANT:g} × TDP of the matched CPU model,"
            " constant over the window (one TDP, no socket count, as CodeCarbon does)"
        ),
    )


def _tdp_table() -> dict[str, float]:
    with data_file(_CPU_POWER_CSV).open(newline="", encoding="utf-8-sig") as f:
        rows = [(row["Name"], _watts(row["TDP"])) for row in csv.DictReader(f)]
    # The shipped file has a few malformed TDPs (e.g. '27.29.5'); those models are left out, not guessed.
    return {name: tdp for name, tdp in rows if tdp is not None}


def _watts(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _match(cpu_model: str, names: list[str]) -> str | NotMeasured:
    """Exact name after CodeCarbon's clean-up, else the only token-set match (as CodeCarbon matches)."""
    cleaned = _clean(cpu_model)
    by_lower = {n.lower(): n for n in names}
    for candidate in (cpu_model, cleaned):
        if candidate.lower() in by_lower:
            return by_lower[candidate.lower()]
    hits = process.extract(
        cleaned,
        names,
        scorer=fuzz.token_set_ratio,
        processor=utils.default_process,
        score_cutoff=100,
        limit=None,
    )
    if len(hits) == 1:
        return hits[0][0]
    source = f"codecarbon {_CPU_POWER_CSV}"
    if not hits:
        return NotMeasured(reason=f"CPU estimate: model '{cpu_model}' not found in {source}")
    return NotMeasured(
        reason=f"CPU estimate: model '{cpu_model}' matches {len(hits)} entries of {source}, none uniquely"
    )


def _clean(model: str) -> str:
    model = model.replace("(R)", "").replace("(TM)", "")
    model = re.sub(r" CPU @ .*$", "", model)
    model = model.replace(" CPU", "")
    return re.sub(r" @\s*\d+\.\d+GHz", "", model).strip()


def _cpuinfo_model(path: Path = Path("/proc/cpuinfo")) -> str | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    found = re.search(r"^model name\s*:\s*(.+)$", text, re.MULTILINE)
    return found.group(1).strip() if found else None
