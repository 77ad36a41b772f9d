"""A campaign measurement's latency figures come from the load probe's request records, the same way for the
vLLM measurer (its requests a load point of the load probe) and the transformers measurer (its worker's
timings as records): TPOT from the output token count, not from the chunks that carried them."""

import sys

import pytest

from probes.load.records import RequestRecord
from probes.targets.mock_server import MockServerConfig, running
from tuner.campaign.hf_measurer import worker_records
from tuner.campaign.latency import LATENCY, measured
from tuner.campaign.vllm_measurer import latency_requests

TTFT_MS, ITL_MS, TOKENS, PER_CHUNK = 60.0, 20.0, 9, 4  # chunks at 60, 140, 220 ms carrying 4, 4, 1 tokens


@pytest.fixture(scope="module")
def through_the_probe():
    """Four requests at concurrency 1 against a server streaming 4 tokens a chunk (as n-gram speculation)."""
    cfg = MockServerConfig(ttft_ms=TTFT_MS, itl_ms=ITL_MS, tokens_per_chunk=PER_CHUNK)
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0002)  # server thread and client share the GIL (see tests/load/loadharness.py)
    try:
        with running(cfg) as url:
            return latency_requests(
                url,
                cfg.model,
                requests=4,
                input_len=16,
                output_len=TOKENS,
                seed=3,
                sampling={"temperature": 0.0},
                tokenizer_path=None,
            )
    finally:
        sys.setswitchinterval(interval)


def test_tpot_counts_tokens_not_chunks(through_the_probe):
    figures = through_the_probe
    records = [RequestRecord.model_validate(r) for r in figures[LATENCY]["records"]]
    assert len(records) == 4 and all(len(r.chunk_s) == 3 and r.output_tokens == TOKENS for r in records)
    assert {r.output_tokens_source for r in records} == {"usage"}
    # (e2el − ttft) / (tokens − 1) = 160 ms / 8 = 20 ms; counting chunks would say 160 / 2 = 80 ms
    assert figures["tpot_p50_ms"] == pytest.approx(ITL_MS, rel=0.25)
    by_chunks = sorted((r.end_s - r.first_chunk_s) * 1000 / (len(r.chunk_s) - 1) for r in records)
    assert by_chunks[1] == pytest.approx(PER_CHUNK * ITL_MS, rel=0.25)  # what the old measurer reported
    assert figures["ttft_p50_ms"] == pytest.approx(TTFT_MS, abs=40)
    assert figures["n_requests"] == 4 and figures["tokens_mean"] == TOKENS
    evidence = figures[LATENCY]
    assert evidence["point"]["concurrency"] == 1 and evidence["point"]["num_requests"] == 4
    assert evidence["workload"]["source"] == "synthetic"
    # the load probe's percentiles and order-statistic CIs, kept with the measurement
    assert evidence["metrics"]["tpot_ms"]["n"] == 4
    assert "e2el_ms.p50" in evidence["metrics"]["percentile_ci"]


def test_same_records_same_figures_through_both_measurers(through_the_probe):
    records = [RequestRecord.model_validate(r) for r in through_the_probe[LATENCY]["records"]]
    # what the transformers worker reports for the same requests: per prompt its TTFT, E2EL and tokens
    worker = [
        {
            "ttft_ms": (r.first_chunk_s - r.sent_s) * 1000,
            "e2el_ms": (r.end_s - r.sent_s) * 1000,
            "tokens": r.output_tokens,
        }
        for r in records
    ]
    via_worker = measured(worker_records(worker), source="transformers")
    via_probe = measured(records, source="vllm")
    names = [k for k in via_probe if k != LATENCY]
    assert {k: via_worker[k] for k in names} == pytest.approx({k: via_probe[k] for k in names}, rel=1e-9)
    assert set(names) >= {"ttft_p50_ms", "tpot_p50_ms", "e2el_p50_ms", "e2el_max_ms", "n_requests"}
    # and the records the worker path keeps have the load probe's shape, its requests back to back
    kept = [RequestRecord.model_validate(r) for r in via_worker[LATENCY]["records"]]
    assert [r.sent_s for r in kept[1:]] == [r.end_s for r in kept[:-1]]


def test_a_measurement_keeps_its_records_with_their_sha256(tmp_path, through_the_probe):
    from probes.core.digests import sha256_file
    from tuner.campaign.measure import measure_one
    from tuner.campaign.store import CampaignError, CampaignStore

    class Replay:  # the records measured above, as a measurer returns them
        def measure(self, kwargs, *, seed):
            return dict(through_the_probe)

    store = CampaignStore(tmp_path)
    config = {"id": "c0", "features": ["A"], "kwargs": {}, "sampled_by": "uniform"}
    store.create([config], 1, 0, {})
    store.record("c0-r0", measure_one(Replay(), config, 0, 0))
    row = store.rows()[0]
    kept = row[LATENCY]["records_file"]
    assert kept["path"] == "latency/c0-r0.jsonl" and kept["records"] == 4
    assert kept["sha256"] == sha256_file(tmp_path / kept["path"])
    assert "records" not in row[LATENCY] and LATENCY not in store.table().columns
    assert store.evidence()[0][LATENCY]["records"] == through_the_probe[LATENCY]["records"]
    (tmp_path / kept["path"]).write_text("")  # a record removed by hand
    with pytest.raises(CampaignError, match="sha256 differs"):
        store.evidence()
