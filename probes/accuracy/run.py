"""`run_humaneval`: generate through the endpoint under test, then judge in the sandbox."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable

import httpx

from probes.accuracy.dataset import Dataset, DatasetInfo, HumanEvalTask, load_dataset
from probes.accuracy.generate import PROMPTING, generate_all
from probes.accuracy.harness import Job, SampleVerdict, expected_outputs, judge_many
from probes.accuracy.parity import EVALPLUS_PARITY, JudgeParity
from probes.accuracy.passk import pass_at_ks
from probes.accuracy.result import AccuracyResult, PassRates, SampleRecord, Timings
from probes.accuracy.spec import HumanEvalSpec, SubsetSpec


async def run_humaneval(
    base_url: str,
    model: str,
    config: HumanEvalSpec,
    *,
    api_key: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> AccuracyResult:
    """HumanEval+ pass@k of `model` served at `base_url` (OpenAI-compatible, e.g. http://host/v1)."""
    dataset = load_dataset(config.dataset)
    tasks, subset = select_tasks(dataset, config.subset)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    start = time.monotonic()
    async with httpx.AsyncClient(
        base_url=base_url.rstrip("/"), headers=headers, timeout=config.request_timeout_s
    ) as client:
        generations = await generate_all(
            client,
            model,
            tasks,
            mode=config.mode,
            n=config.n_samples,
            params=config.sampling_params(),
            max_tokens=config.max_tokens,
            concurrency=config.concurrency,
            progress=progress,
        )
    generation_s = time.monotonic() - start
    start = time.monotonic()
    # Only the chosen tasks' canonical outputs: a fresh host computes (then caches) what it asks for, and
    # the whole dataset's take minutes that a 10-task run (the demo's) has no use for.
    ids = None if len(tasks) == len(dataset.tasks) else [t.task_id for t in tasks]
    expected = await asyncio.to_thread(
        expected_outputs, dataset, config.limits, concurrency=config.eval_concurrency, task_ids=ids
    )
    expected_s = time.monotonic() - start
    jobs = [Job(g.task, g.sample, g.program) for g in generations]
    start = time.monotonic()
    verdicts, isolation = await asyncio.to_thread(
        judge_many, jobs, expected, config.limits, concurrency=config.eval_concurrency
    )
    records = [
        SampleRecord(**v.model_dump(), reply=g.reply, program=g.program, generation_error=g.error)
        for v, g in zip(verdicts, generations, strict=True)
    ]
    return AccuracyResult(
        benchmark=dataset.info.name,
        dataset=dataset.info,
        tests_run=tests_run(dataset),
        mode=config.mode,
        prompting=PROMPTING[config.mode],
        subset=subset,
        temperature=config.temperature,
        sampling=config.sampling_params(),
        max_tokens=config.max_tokens,
        pass_rates=pass_rates(verdicts, dataset.info),
        generation_failures=sum(g.error is not None for g in generations),
        isolation=isolation,
        judge_parity=judge_parity(dataset),
        timings=Timings(
            generation_s=generation_s, expected_outputs_s=expected_s, evaluation_s=time.monotonic() - start
        ),
        per_task=records,
    )


def select_tasks(dataset: Dataset, subset: SubsetSpec) -> tuple[list[HumanEvalTask], str]:
    total = len(dataset.tasks)
    if subset.first is not None:
        start = min(subset.offset, total)
        picked = dataset.tasks[start : start + subset.first]
        if start == 0:
            return picked, f"first {len(picked)} of {total} tasks in dataset order"
        return picked, f"tasks {start + 1}-{start + len(picked)} of {total} in dataset order"
    if subset.sample is not None:
        k = min(subset.sample, total)
        picked = sorted(random.Random(subset.seed).sample(range(total), k))
        return [
            dataset.tasks[i] for i in picked
        ], f"random sample of {k} of {total} tasks (seed {subset.seed})"
    return list(dataset.tasks), f"all {total} tasks"


def judge_parity(dataset: Dataset) -> JudgeParity | None:
    """The measured parity applies to HumanEval+ (base and plus inputs), not to the assert-based fallback."""
    return EVALPLUS_PARITY if dataset.info.tests == "base+plus" else None


def tests_run(dataset: Dataset) -> list[str]:
    return ["base", "plus"] if dataset.info.tests == "base+plus" else ["base"]


def pass_rates(verdicts: list[SampleVerdict], info: DatasetInfo) -> PassRates:
    """pass@k per test set from per-sample verdicts (the run and `factsheet validate` both call this)."""
    by_task: dict[str, list[SampleVerdict]] = {}
    for v in verdicts:
        by_task.setdefault(v.task_id, []).append(v)
    base = [(len(vs), sum(v.base.status == "pass" for v in vs)) for vs in by_task.values()]
    plus = [(len(vs), sum(v.plus.status == "pass" for v in vs)) for vs in by_task.values()]
    return PassRates(
        base=pass_at_ks(base),
        plus=pass_at_ks(plus) if info.tests == "base+plus" else None,
        n_tasks=len(by_task),
        n_samples_per_task=min((n for n, _ in base), default=1),
    )
