"""Accuracy of one configuration on a stated HumanEval+ subset, for any measurer.

The probe's pieces, not copies of them: the dataset (`probes.accuracy.dataset`), the prompt and the program
taken from a reply (`probes.accuracy.generate`), and the sandboxed judge in its graded mode, which also
counts the inputs each program passes. A measurer brings only its way of generating:

    subset = load_subset(tasks=5)                      # the first 5 tasks in dataset order
    figures = measure_accuracy(subset, generate, mode="chat")
    figures = measure_with_records(subset, generate, options)   # a measurer's way: figures + raw records

`generate(task_id, prompt)` gets a chat message list (mode chat) or a completion prompt (mode completion)
and returns the reply text. Figures (greedy or sampled, one sample per task):

    pass_at_1          share of tasks whose program passes base and plus tests (HumanEval+ pass@1)
    pass_at_1_base     the same on base tests only
    graded_base_share  base inputs passed / base inputs, over all tasks of the subset
    graded_plus_share  base+plus inputs passed / base+plus inputs (None: the dataset has no plus tests)
    accuracy_tasks     tasks in the subset
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, ValidationError, field_validator

from probes.accuracy.dataset import Dataset, HumanEvalTask, load_dataset, local_dataset
from probes.accuracy.errors import AccuracyError
from probes.accuracy.generate import PROMPTING, program_from_reply, request_for
from probes.accuracy.harness import Expected, Job, SampleVerdict, expected_outputs, judge_many
from probes.accuracy.run import select_tasks
from probes.accuracy.sandbox import SandboxLimits
from probes.accuracy.spec import SubsetSpec
from probes.core.errors import describe_validation_error
from probes.core.measurement import Model

# The figures `measure_accuracy` returns and what each means (higher is better for all).
FIGURES = {
    "pass_at_1": "share of tasks whose one program passes base and plus tests (HumanEval+ pass@1)",
    "pass_at_1_base": "share of tasks whose one program passes the base tests",
    "graded_base_share": "base test inputs passed / base test inputs, over the subset's tasks",
    "graded_plus_share": "base and plus test inputs passed / all of them, over the subset's tasks",
}
# Shares of tasks (k of `accuracy_tasks`): their sampling error over the subset's tasks is binomial.
TASK_SHARES = ("pass_at_1", "pass_at_1_base")
N_TASKS = "accuracy_tasks"
Prompt = str | list[dict]
Generate = Callable[[str, Prompt], str]


class AccuracyOptions(Model):
    """A measurer's `accuracy:` option: which HumanEval+ tasks, how long a generation, which endpoint."""

    tasks: int | list[str] = Field(description="the first N tasks in dataset order, or a list of task ids")
    max_tokens: int = Field(256, ge=1, description="generation cap per task, in tokens")
    mode: Literal["chat", "completion"] = Field("chat", description="as the accuracy probe's mode")
    dataset: str | None = Field(None, description="HumanEval+ path; else as the accuracy probe finds it")
    concurrency: int = Field(1, ge=1, le=64, description="generation requests in flight")
    request_timeout_s: float = Field(600.0, gt=0, description="HTTP timeout of one generation request")

    @field_validator("tasks")
    @classmethod
    def _some_tasks(cls, tasks: int | list[str]) -> int | list[str]:
        if (tasks < 1) if isinstance(tasks, int) else not tasks:
            raise ValueError("needs at least one task")
        return tasks

    @classmethod
    def from_option(cls, value: dict | None) -> AccuracyOptions | None:
        """A measurer factory's `accuracy` option (None: off); bad values are a ValueError naming it."""
        if value is None:
            return None
        try:
            return cls.model_validate(value)
        except ValidationError as exc:
            raise ValueError(f"options.accuracy: {describe_validation_error(exc)}") from None

    def check_local_dataset(self) -> None:
        """Pick the subset from the dataset when it is on this machine (the `dataset` option, env
        FACTSHEET_HUMANEVAL_PATH or the cache: a fraction of a second), so that a missing dataset or an unknown
        task id is refused with the spec; a dataset still to download is checked when the measurer loads it."""
        path = local_dataset(self.dataset)
        if path is None:
            return
        data = load_dataset(path)
        try:
            pick_tasks(data, self.tasks)
        except AccuracyError as exc:
            raise AccuracyError(f"tasks: {exc}") from None

    def statement(self) -> dict:
        """What the accuracy figures rest on, stated without loading anything (the report's view)."""
        subset = (
            f"the first {self.tasks} tasks of HumanEval+ in dataset order"
            if isinstance(self.tasks, int)
            else f"HumanEval+ tasks {', '.join(self.tasks)}"
        )
        return {
            "subset": subset,
            "mode": self.mode,
            "prompting": PROMPTING[self.mode],
            "max_tokens": self.max_tokens,
            "samples_per_task": 1,
            "figures": FIGURES,
        }


@dataclass(frozen=True)
class AccuracySubset:
    """The tasks every configuration is measured on, their canonical outputs and the statement of them."""

    dataset: Dataset
    tasks: list[HumanEvalTask]
    statement: str
    expected: dict[str, Expected]
    limits: SandboxLimits

    def task(self, task_id: str) -> HumanEvalTask:
        return next(t for t in self.tasks if t.task_id == task_id)

    def describe(self, mode: str) -> dict:
        """What the campaign's plan records about the accuracy measurement."""
        return {
            "benchmark": self.dataset.info.name,
            "dataset_version": self.dataset.info.version,
            "dataset_sha256": self.dataset.info.sha256,
            "subset": self.statement,
            "task_ids": [t.task_id for t in self.tasks],
            "mode": mode,
            "prompting": PROMPTING[mode],
            "figures": FIGURES,
        }


def load_subset(
    tasks: int | list[str],
    *,
    dataset: str | None = None,
    limits: SandboxLimits | None = None,
    concurrency: int = 2,
) -> AccuracySubset:
    """The first `tasks` tasks in dataset order, or the listed task ids (in dataset order); the dataset
    resolves as the probe resolves it (path, env FACTSHEET_HUMANEVAL_PATH, cache, pinned download)."""
    limits = limits or SandboxLimits()
    data = load_dataset(dataset)
    picked, statement = pick_tasks(data, tasks)
    ids = [t.task_id for t in picked]
    expected = expected_outputs(data, limits, concurrency=concurrency, task_ids=ids)
    return AccuracySubset(data, picked, statement, expected, limits)


def pick_tasks(data: Dataset, tasks: int | list[str]) -> tuple[list[HumanEvalTask], str]:
    """The first `tasks` tasks in dataset order, or the listed task ids in dataset order, and the statement of
    them; an id not in the dataset is an AccuracyError naming it."""
    if isinstance(tasks, int):
        return select_tasks(data, SubsetSpec(first=tasks))
    for tid in tasks:
        data.task(tid)  # names an unknown id
    wanted = set(tasks)
    picked = [t for t in data.tasks if t.task_id in wanted]
    return picked, f"{len(picked)} listed tasks of {len(data.tasks)}: {', '.join(t.task_id for t in picked)}"


def prompt_for(task: HumanEvalTask, mode: str) -> Prompt:
    """The chat messages (mode chat) or the completion prompt (mode completion) the probe would send."""
    _, part = request_for(task, mode)
    return part["messages"] if mode == "chat" else part["prompt"]


def judge_replies(
    subset: AccuracySubset, replies: dict[str, str | None], *, mode: str, concurrency: int = 2
) -> tuple[dict, list[SampleVerdict]]:
    """Figures (see the module doc) and per-task verdicts for one reply per task (None: no reply, fails)."""
    jobs = []
    for task in subset.tasks:
        text = replies.get(task.task_id)
        program = task.prompt if text is None else program_from_reply(task, text, mode)
        jobs.append(Job(task, 0, program))
    verdicts, _ = judge_many(jobs, subset.expected, subset.limits, concurrency=concurrency, graded=True)
    return figures_of(verdicts), verdicts


def figures_of(verdicts: list[SampleVerdict]) -> dict:
    n = len(verdicts)
    if n == 0:
        raise ValueError("no verdicts to summarise")
    base_in = sum(v.base.n_inputs for v in verdicts)
    plus_in = sum(v.plus.n_inputs for v in verdicts)
    base_ok = sum(v.base.n_passed or 0 for v in verdicts)
    plus_ok = sum(v.plus.n_passed or 0 for v in verdicts)
    has_plus = all(v.plus.status != "not_run" for v in verdicts)
    return {
        "pass_at_1": sum(v.plus.status == "pass" for v in verdicts) / n if has_plus else None,
        "pass_at_1_base": sum(v.base.status == "pass" for v in verdicts) / n,
        "graded_base_share": base_ok / base_in if base_in else None,
        "graded_plus_share": (base_ok + plus_ok) / (base_in + plus_in) if has_plus and plus_in else None,
        "accuracy_tasks": n,
    }


def measure_accuracy(
    subset: AccuracySubset,
    generate: Generate,
    *,
    mode: str,
    concurrency: int = 1,
    judge_concurrency: int = 2,
    records: list | None = None,
) -> dict:
    """Generate one program per task with `generate(task_id, prompt)`, judge them; the figures plus the
    seconds spent generating and judging (`accuracy_generation_s`, `accuracy_judge_s`) and the count of
    generation failures (`accuracy_generation_failures`: no reply, counted as failing, as in the probe).
    Raises AccuracyError when no request at all succeeded (no figure is better than a zero made up).
    `records`: a list that gets one raw record per task (its verdicts with inputs passed, and the reply)."""
    t0 = time.perf_counter()
    errors: list[str] = []

    def _one(task: HumanEvalTask) -> str | None:
        try:
            return generate(task.task_id, prompt_for(task, mode))
        except Exception as exc:  # noqa: BLE001 - one failed request fails its task, as in the probe
            errors.append(f"{task.task_id}: {type(exc).__name__}: {exc}"[:300])
            return None

    with ThreadPoolExecutor(max(1, concurrency)) as pool:
        replies = dict(zip([t.task_id for t in subset.tasks], pool.map(_one, subset.tasks), strict=True))
    if len(errors) == len(subset.tasks):
        # Nothing was generated: that is no accuracy of the configuration, and not a zero.
        raise AccuracyError(f"accuracy: every generation request failed (first: {errors[0]})")
    generation_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    figures, verdicts = judge_replies(subset, replies, mode=mode, concurrency=judge_concurrency)
    if records is not None:
        records.extend({**v.model_dump(exclude={"sample"}), "reply": replies[v.task_id]} for v in verdicts)
    return {
        **figures,
        "accuracy_generation_failures": len(errors),
        "accuracy_generation_s": round(generation_s, 3),
        "accuracy_judge_s": round(time.perf_counter() - t0, 3),
    }


RECORDS = "accuracy"  # a measurement's raw per-task records, under its "records" key (tuner.campaign.measure)


def measure_with_records(subset: AccuracySubset, generate: Generate, options: AccuracyOptions) -> dict:
    """What a measurer returns for its `accuracy` option: `measure_accuracy` with the option's mode and
    concurrency, and under "records" the raw per-task records the figures rest on ({"accuracy": [...]}),
    which the runner keeps in the measurement's file, out of the table."""
    records: list = []
    figures = measure_accuracy(
        subset, generate, mode=options.mode, concurrency=options.concurrency, records=records
    )
    return {**figures, "records": {RECORDS: records}}


def judge_subset(
    subset: AccuracySubset,
    options: AccuracyOptions,
    seed: int,
    generate: Callable[[HumanEvalTask, Prompt, int], str],
) -> dict:
    """Every measurer's accuracy step: `generate(task, prompt, task_seed)` is the measurer's transport only;
    each task's seed is the measurement's seed + the task's index in the subset, so a sampled configuration
    stays reproducible per repetition and task."""
    index = {t.task_id: i for i, t in enumerate(subset.tasks)}

    def one(task_id: str, prompt: Prompt) -> str:
        return generate(subset.task(task_id), prompt, seed + index[task_id])

    return measure_with_records(subset, one, options)
