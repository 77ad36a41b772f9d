"""`rederive(sheet, folder)`: every figure of a factsheet that its raw records determine, recomputed."""

from __future__ import annotations

from pathlib import Path

from factsheet.rederive.accuracy import accuracy
from factsheet.rederive.compare import Discrepancy
from factsheet.rederive.energy import energy
from factsheet.rederive.load import capacity, load_points
from factsheet.schema import Factsheet
from probes.measurement import NotMeasured

REDERIVED = (
    "load points: every metric (counts, throughputs, TTFT/TPOT/ITL/E2EL distributions and percentiles, their "
    "95 % CIs, p99 sample sufficiency, goodput and its CI, SLO attainment, the p99 check), the steady window "
    "and open-loop arrival fidelity, from each point's per-request records",
    "capacity: each probed run's metrics from its records, then the probe's search replayed on them (schema "
    ">= 1.1.0): every verdict, the order of probing, confirmations, bracket, capacity, range, stop reason",
    "accuracy: pass@k (base and plus) from the per-sample verdicts, the per-sample records the JSON repeats, "
    "generation failures",
    "energy: each component's window energy and the idle power from the counters' samples (schema >= "
    "1.1.0); window, request and token counts against the load point they cover; every derived figure "
    "(average power, J/request, J/token, Wh/1000 requests, tokens/J, net of idle, totals, the TDP estimate); "
    "carbon from that energy, intensity and PUE",
)


def rederive(sheet: Factsheet, folder: Path) -> list[Discrepancy]:
    """Discrepancies between what `sheet` states and what the raw records in `folder` give; empty when
    every re-derivable figure matches (to float precision). Read the records' digests first."""
    folder = Path(folder)
    out: list[Discrepancy] = []
    if not isinstance(sheet.load, NotMeasured):
        out += load_points(sheet.load, folder)
        out += capacity(sheet.load, folder)
    if not isinstance(sheet.accuracy, NotMeasured):
        out += accuracy(sheet.accuracy, folder)
    if not isinstance(sheet.energy, NotMeasured):
        out += energy(sheet.energy, sheet.load, sheet.system.host.cpu_model, folder)
    return out
