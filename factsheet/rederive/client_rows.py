"""A client check's per-worker rows against the records: which workers sent the point and how
many each sent are in the records' `worker` fields; the pooled loop lag is what the rows' own lags pool to.
Only each worker's loop lag is attested (the host's load is not in the records)."""

from __future__ import annotations

import math
from collections import Counter

from factsheet.rederive.compare import Discrepancy, differences
from probes.core.measurement import Distribution
from probes.load.records import RequestRecord
from probes.load.workers.check import ClientCheck


def client_rows(stated: ClientCheck, records: list[RequestRecord], at: str, src: str) -> list[Discrepancy]:
    """Every worker the records name has its row, each row's `sent` is its records' count, and the pooled
    loop lag's count, mean, spread and extremes are its rows' pooled: a row dropped (a client-bound worker
    hidden, `workers` restated) or a count or pooled lag edited alone is named. A single-process run's
    records name no worker: they are worker 0's."""
    rows = stated.per_worker
    counts = Counter(0 if r.worker is None else r.worker for r in records)
    out: list[Discrepancy] = []
    named = [w.worker for w in rows]
    for worker in sorted(set(counts) - set(named)):
        out.append(
            Discrepancy(
                figure=f"{at}.per_worker",
                stated=f"rows for worker(s) {', '.join(map(str, named)) or 'none'}",
                recomputed=f"the records name worker {worker} ({counts[worker]} requests) too",
                source=src,
            )
        )
    for worker in sorted(w for w, n in Counter(named).items() if n > 1):
        out.append(
            Discrepancy(figure=f"{at}.per_worker", stated=f"worker {worker} twice", recomputed="one row each")
        )
    for j, row in enumerate(rows):
        out += differences(row.sent, counts.get(row.worker, 0), f"{at}.per_worker[{j}].sent", src)
    pooled = _pooled([w.loop_lag_ms for w in rows], stated.loop_lag_ms)
    return out + differences(stated.loop_lag_ms, pooled, f"{at}.loop_lag_ms", f"{at}.per_worker")


def _pooled(parts: list[Distribution], stated: Distribution) -> Distribution:
    """The distribution of every part's samples together, as far as the parts' summaries determine it: one
    part is the whole; of several, the count, mean, standard deviation (ddof 1), min and max, the pooled
    percentiles as stated (they are not determined by the parts' own)."""
    if len(parts) == 1:
        return parts[0]
    full = [p for p in parts if p.n > 0 and p.mean is not None]
    n = sum(p.n for p in full)
    if n == 0:
        return stated.model_copy(update={"n": 0, "mean": None, "std": None, "min": None, "max": None})
    mean = sum(p.n * p.mean for p in full) / n
    squares = sum((p.n - 1) * (p.std or 0.0) ** 2 + p.n * (p.mean - mean) ** 2 for p in full)
    return stated.model_copy(
        update={
            "n": n,
            "mean": mean,
            "std": math.sqrt(squares / (n - 1)) if n > 1 else None,
            "min": min(p.min for p in full if p.min is not None),
            "max": max(p.max for p in full if p.max is not None),
        }
    )
