"""Measure one configuration of the vLLM feature model on a live vLLM server.

Engine arguments (max_num_seqs, max_num_batched_tokens, chunked prefill, prefix caching, dtype, n-gram
speculation) need a restart: the server is (re)started when they change, and the start-up time is reported
as `restart_s`. Sampling parameters go with each request. Per measurement: `requests` streamed completions as
one load point of the load probe (closed loop, concurrency 1, so latency is the configuration's, not the
queue's; its synthetic workload at the tokenizer's exact prompt length, `output_len` tokens with EOS ignored);
figures from the records through the load probe's metrics (`tuner.campaign.latency`): TTFT and E2EL p50/p90,
E2EL max, TPOT p50 from the server's usage token counts (ms, with n; CIs in the measurement's file) and the
resource proxy `cpu_s` = CPU-seconds (user + system) of the server's process group read from /proc over the
measurement. Energy is not measured here: a host without counters offers only this proxy, labelled so.

With `accuracy: {tasks: N, max_tokens: M, mode: chat|completion}` each measurement also generates one program
per task of a stated HumanEval+ subset (the first N tasks, or a list of task ids) with the configuration's
sampling parameters, every one of them, through the same server, and judges them in the sandbox
(`tuner.campaign.accuracy`): pass_at_1, pass_at_1_base, graded_base_share, graded_plus_share. These requests
come after the latency requests and after `cpu_s` is read: the latency figures and the proxy never include them.

    measurer: tuner.campaign.vllm_measurer:from_options
    options: {spec: models/smollm2-cpu.yaml, requests: 4, input_len: 64, output_len: 32,
              accuracy: {tasks: 10, max_tokens: 256, mode: chat}}
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import time
from pathlib import Path

import httpx
import yaml

from probes.accuracy.generate import request_for
from probes.load.point import SLO, LoadPoint
from probes.load.runner import run_point
from probes.load.workloads.workload import synthetic_prompts
from probes.targets.model_source import prepare
from probes.targets.vllm import VllmServer, VllmTarget
from tuner.campaign.accuracy import AccuracyOptions, AccuracySubset, judge_subset, load_subset
from tuner.campaign.latency import measured

CLK_TCK = os.sysconf("SC_CLK_TCK")
SOURCE = "vLLM server, /v1/completions streamed through the load probe (probes.load.runner.run_point)"


def group_cpu_seconds(pgid: int) -> float:
    """user + system CPU-seconds of every live process in process group `pgid` (Linux /proc)."""
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[2]) == pgid:  # field 5 of stat: process group
            total += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
    return total / CLK_TCK


def engine_flags(engine: dict) -> list[str]:
    flags = []
    for key in ("max_num_batched_tokens",):
        if key in engine:
            flags += [f"--{key.replace('_', '-')}", str(engine[key])]
    if engine.get("enable_chunked_prefill") is False:
        flags.append("--no-enable-chunked-prefill")
    if engine.get("enable_prefix_caching") is False:
        flags.append("--no-enable-prefix-caching")
    if engine.get("speculative_method"):
        spec = {
            "method": engine["speculative_method"],
            "num_speculative_tokens": engine["num_speculative_tokens"],
            "prompt_lookup_max": 4,
            "prompt_lookup_min": 2,
        }
        flags += ["--speculative-config", json.dumps(spec, separators=(",", ":"))]
    return flags


class VllmMeasurer:
    def __init__(
        self,
        target: VllmTarget,
        *,
        requests: int = 4,
        input_len: int = 64,
        output_len: int = 32,
        accuracy: AccuracyOptions | None = None,
        subset: AccuracySubset | None = None,
    ):
        self.target, self.requests, self.input_len, self.output_len = target, requests, input_len, output_len
        self.accuracy = accuracy
        if accuracy is not None and subset is None:
            subset = load_subset(accuracy.tasks, dataset=accuracy.dataset)
        self.subset = subset
        self._stack: contextlib.ExitStack | None = None
        self._server: VllmServer | None = None
        self._engine: dict | None = None
        self._prepared = None

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack, self._server, self._engine = None, None, None

    def _ensure(self, engine: dict) -> float:
        if self._server is not None and engine == self._engine:
            return 0.0
        self.close()
        t0 = time.perf_counter()
        if self._prepared is None:
            self._prepared = prepare(self.target.model, self.target.serving_python())
        update = {
            "max_num_seqs": engine.get("max_num_seqs", self.target.max_num_seqs),
            "dtype": engine.get("dtype", self.target.dtype),
        }
        cfg = self.target.model_copy(update=update)
        stack = contextlib.ExitStack()
        self._server = stack.enter_context(VllmServer(cfg, self._prepared, flags=engine_flags(engine)))
        self._stack, self._engine = stack, dict(engine)
        return time.perf_counter() - t0

    def measure(self, kwargs: dict, *, seed: int) -> dict:
        restart_s = self._ensure(kwargs.get("engine", {}))
        params = dict(kwargs.get("request", {}))
        cpu0 = group_cpu_seconds(self._server.pid)
        figures = self._latency(params, seed)
        figures.update(cpu_s=group_cpu_seconds(self._server.pid) - cpu0, restart_s=restart_s)
        if self.accuracy is not None:
            figures.update(self._accuracy(params, seed))
        return figures

    def _latency(self, params: dict, seed: int) -> dict:
        return latency_requests(
            self._server.base_url,
            self.target.served_model_name,
            requests=self.requests,
            input_len=self.input_len,
            output_len=self.output_len,
            seed=seed,
            sampling=params,
            tokenizer_path=self._prepared.tokenizer_path if self._prepared else None,
        )

    def _accuracy(self, params: dict, seed: int) -> dict:
        """The subset's programs, generated with every sampling parameter of the configuration, judged."""
        opts = self.accuracy
        with httpx.Client(base_url=f"{self._server.base_url}/v1", timeout=opts.request_timeout_s) as client:

            def generate(task, _prompt, task_seed: int) -> str:
                path, part = request_for(task, opts.mode)  # the probe's request
                body = {
                    "model": self.target.served_model_name,
                    "seed": task_seed,
                    **params,
                    "max_tokens": opts.max_tokens,
                    **part,
                }
                r = client.post(path, json=body)
                r.raise_for_status()
                choice = r.json()["choices"][0]
                return choice["message"]["content"] if opts.mode == "chat" else choice["text"]

            return judge_subset(self.subset, opts, seed, generate)


def latency_requests(
    base_url: str,
    model: str,
    *,
    requests: int,
    input_len: int,
    output_len: int,
    seed: int,
    sampling: dict,
    tokenizer_path: str | None,
) -> dict:
    """A measurement's latency requests: one closed-loop load point of the load probe at concurrency 1, its
    synthetic workload at the tokenizer's exact prompt length, the configuration's sampling parameters (and
    the measurement's seed) in every request; the figures and evidence of `tuner.campaign.latency.measured`."""
    point = LoadPoint.at(
        concurrency=1, num_requests=requests, input_len=input_len, output_len=output_len, seed=seed
    )
    prompts, workload = synthetic_prompts(requests, input_len, seed, tokenizer_path)
    result = asyncio.run(
        run_point(
            base_url,
            model,
            point,
            SLO(),
            prompts=prompts,
            workload=workload,
            sampling={**sampling, "seed": seed},
        )
    )
    return measured(result.records, source=SOURCE, point=point, workload=workload)


def from_options(
    spec: str,
    requests: int = 4,
    input_len: int = 64,
    output_len: int = 32,
    accuracy: dict | None = None,
) -> VllmMeasurer:
    """Build from a factsheet build spec's vLLM target (its model, environment and max_model_len)."""
    data = yaml.safe_load(Path(spec).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or (data.get("target") or {}).get("kind") != "vllm":
        raise ValueError(f"{spec}: needs a 'target' of kind vllm")
    target = VllmTarget.model_validate(data["target"])
    acc = AccuracyOptions.from_option(accuracy)
    return VllmMeasurer(target, requests=requests, input_len=input_len, output_len=output_len, accuracy=acc)
