"""Repetitions are combined by pooling raw records, never by averaging percentiles."""

import numpy as np
import pytest

from probes.load.metrics import pool_metrics
from probes.load.point import SLO
from probes.load.records import RequestRecord


def _run(ttfts_ms, start=0.0):
    recs = []
    for i, t in enumerate(ttfts_ms):
        s = start + i * 0.1
        first = s + t / 1000
        recs.append(
            RequestRecord(
                index=i,
                sent_s=s,
                first_chunk_s=first,
                chunk_s=[first, first + 0.01],
                end_s=first + 0.01,
                output_tokens=2,
            )
        )
    return recs


def test_pooled_percentiles_come_from_all_records():
    a, b = list(np.linspace(10, 20, 50)), list(np.linspace(100, 200, 50))
    pooled = pool_metrics([_run(a), _run(b)], SLO(ttft_ms=150))
    truth = np.percentile(a + b, 99)
    assert pooled.ttft_ms.n == 100 and pooled.repetitions == 2
    assert pooled.ttft_ms.p(99) == pytest.approx(truth)
    # Averaging the two runs' p99s would give a different (wrong) figure.
    assert abs(truth - (np.percentile(a, 99) + np.percentile(b, 99)) / 2) > 50
    # Rates divide pooled counts by the summed windows.
    w = (49 * 0.1 + 0.02 + 0.01) + (49 * 0.1 + 0.2 + 0.01)
    assert pooled.duration_s == pytest.approx(w)
    assert pooled.request_throughput == pytest.approx(100 / w)
    good = sum(t <= 150 for t in a + b)
    assert pooled.good == good and pooled.goodput == pytest.approx(good / w)
    assert pooled.goodput_ci.lower < pooled.goodput < pooled.goodput_ci.upper
