"""The mock server's serving model keeps the law it states (probes/targets/serving_model.py): TPOT = base_ms +
per_seq_ms · batch while the batch fits max_num_seqs, a queue (TTFT, vllm:num_requests_waiting) past it, and
hundreds of streams served from one event loop (issue 41 item 5)."""

import asyncio
import statistics

import aiohttp
import numpy as np
import pytest

from probes.load.metrics import request_latencies
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.targets.mock_server import MockServerConfig, running
from probes.targets.serving_model import PROFILES, Engine, Seq, ServingModelConfig

# Known truth: a step of B sequences takes 20 + 2·B ms (prompts of 32 tokens add 0.32 ms when admitted).
LAW = ServingModelConfig(
    max_num_seqs=8, max_num_batched_tokens=4096, base_ms=20, per_seq_ms=2, per_prefill_token_ms=0.01
)
OUT = 20


def _medians(url: str, concurrency: int, requests: int, output_len: int = OUT, input_len: int = 32):
    point = LoadPoint.at(
        concurrency=concurrency, num_requests=requests, input_len=input_len, output_len=output_len, seed=0
    )
    res = asyncio.run(run_point(url, "mock-model", point, SLO()))
    lats = [request_latencies(r) for r in res.records if r.ok]
    assert len(lats) == requests
    return statistics.median(x["tpot_ms"] for x in lats), statistics.median(x["ttft_ms"] for x in lats)


@pytest.mark.system
def test_tpot_grows_with_the_batch_as_stated_and_queueing_appears_past_max_num_seqs():
    with running(MockServerConfig(serving=LAW, metrics=True)) as url:
        below = {c: _medians(url, c, 6 * c) for c in (1, 2, 4, 8)}
        tpot_above, ttft_above = _medians(url, 16, 64)
    # The law fitted from the client's own TPOTs below capacity recovers the configured a and b.
    b, a = np.polyfit(list(below), [tpot for tpot, _ in below.values()], 1)
    assert a == pytest.approx(LAW.base_ms, rel=0.1) and b == pytest.approx(LAW.per_seq_ms, rel=0.15)
    # Past max_num_seqs the batch stops growing (TPOT that of 8) and requests wait a whole service time
    # (~20 steps of 36 ms) for a slot: TTFT far above its value at capacity.
    assert tpot_above == pytest.approx(LAW.step_ms(LAW.max_num_seqs, 0), rel=0.1)
    assert ttft_above > below[8][1] + 0.5 * OUT * LAW.step_ms(8, 0)


@pytest.mark.system
def test_metrics_report_the_batch_running_and_the_queue_waiting():
    async def scrape_during_run(url: str) -> str:
        point = LoadPoint.at(concurrency=16, num_requests=32, input_len=8, output_len=OUT, seed=0)
        run = asyncio.create_task(run_point(url, "mock-model", point, SLO()))
        await asyncio.sleep(0.3)  # the first 8 are decoding (a step is 36 ms), 8 are queued
        async with aiohttp.ClientSession() as session, session.get(url + "/metrics") as resp:
            page = await resp.text()
        await run
        return page

    with running(MockServerConfig(serving=LAW, metrics=True)) as url:
        page = asyncio.run(scrape_during_run(url))
    gauges = {
        line.split("{")[0]: float(line.rsplit(" ", 1)[1])
        for line in page.splitlines()
        if line.startswith("vllm:")
    }
    assert gauges["vllm:num_requests_running"] == 8
    assert gauges["vllm:num_requests_waiting"] == 8
    assert gauges["vllm:kv_cache_usage_perc"] == 1.0


@pytest.mark.system
def test_three_hundred_streams_are_served_from_one_loop_at_the_stated_tpot():
    profile = PROFILES["gpu-scale"]
    with running(MockServerConfig(serving=profile)) as url:
        tpot, _ = _medians(url, 300, 600, output_len=64, input_len=128)
    # A step of 300 decodes: 8 + 0.06·300 = 26 ms; admissions add their prefill to a few steps.
    assert tpot == pytest.approx(profile.step_ms(300, 0), rel=0.15)


def test_admission_takes_prompts_while_they_fit_the_batch_and_the_token_budget():
    engine = Engine(
        ServingModelConfig(
            max_num_seqs=3, max_num_batched_tokens=100, base_ms=1, per_seq_ms=0, per_prefill_token_ms=0
        )
    )
    engine.waiting.extend(Seq(tokens, 4) for tokens in (40, 50, 30, 5))
    assert engine._admit() == 90  # 40 + 50; 30 more would pass the budget of 100 tokens
    assert len(engine.running) == 2 and len(engine.waiting) == 2
    assert engine._admit() == 30  # budget now 100 − 2 decodes; max_num_seqs 3 stops the 5-token prompt
    assert len(engine.running) == 3 and len(engine.waiting) == 1


def test_an_idle_engine_takes_a_prompt_longer_than_its_budget_a_busy_one_does_not():
    engine = Engine(
        ServingModelConfig(
            max_num_seqs=4, max_num_batched_tokens=16, base_ms=1, per_seq_ms=0, per_prefill_token_ms=0
        )
    )
    engine.waiting.extend([Seq(500, 2), Seq(4, 2), Seq(300, 2)])
    assert engine._admit() == 500 and len(engine.running) == 1  # idle: no prompt waits for ever
    assert engine._admit() == 4  # the next step: 16 − 1 decode leaves room for 4 tokens
    assert engine._admit() == 0 and len(engine.waiting) == 1  # 300 waits until the engine is idle


def test_tokens_come_per_step_for_the_whole_batch_on_the_loop_clock():
    """Four requests of 3 tokens submitted together: three steps of 10 + 1·4 ms, every sequence a token each."""

    async def go():
        engine = Engine(ServingModelConfig(max_num_seqs=8, base_ms=10, per_seq_ms=1, per_prefill_token_ms=0))
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        seqs = [engine.submit(1, 3) for _ in range(4)]
        done = []
        for seq in seqs:
            await seq.until(3)
            done.append(loop.time() - t0)
        return engine, done

    engine, done = asyncio.run(go())
    assert engine.steps == 3 and not engine.running and not engine.waiting
    assert min(done) >= 3 * 0.014  # absolute deadlines: never early
