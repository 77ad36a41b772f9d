"""The Hub's newer evaluation format beside the model card: `.eval_results/*.yaml` in the model repo.

Fields as documented by Hugging Face (https://huggingface.co/docs/hub/eval-results; specification
https://github.com/huggingface/hub-docs/blob/main/eval_results.yaml), written through huggingface_hub's own
`EvalResultEntry` / `eval_result_entries_to_yaml`: per result `dataset` (`id`, `task_id`), `value`, `date`,
`source` (`url`, `name`) and `notes`. The format has no field for a unit, an interval or a sample size, so
those go into `notes` with the figure's name; the factsheet is the source, named by its digest.

One file per benchmark variant (the Hub's convention: a variant of a benchmark is a file of its own), each
result one metric of it. File names are derived from factsheet text and therefore reduced to [a-z0-9-]."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import yaml
from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

from factsheet.export.readout import (
    HEADLINE,
    Figure,
    Source,
    accuracy_figures,
    headline_figures,
    serving_figures,
)
from probes.core.files import write_atomic
from probes.load.stats import proportion_ci

FOLDER = ".eval_results"  # huggingface_hub.constants.EVAL_RESULTS_FOLDER
HUMANEVAL_PLUS = "evalplus/humanevalplus"
HUMANEVAL = "openai/openai_humaneval"  # the fallback dataset: HumanEval's base tests only
LOAD_DATASET = "llm-factsheet/synthetic-load"  # as the model card's model-index (hf.LOAD_DATASET)
MAX_NAME = 80


def source_url(sha256: str) -> str:
    """The factsheet named by its digest as a URI (RFC 6920 'Naming Things with Hashes': ni:///sha-256;
    base64url without padding): a source that holds wherever the factsheet is later stored."""
    raw = bytes.fromhex(sha256.removeprefix("sha256:"))
    return "ni:///sha-256;" + base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _pass_at_1_ci(f: Figure, src: Source) -> tuple[float, float] | None:
    """pass@1 with one sample a task: the exact interval over tasks *At a glance* states (the factsheet's
    pass rates carry none of their own)."""
    rates = src.sheet.accuracy.result.pass_rates
    if f.key != "pass@1" or rates.n_samples_per_task != 1 or not rates.n_tasks:
        return None
    ci = proportion_ci(round(f.value * rates.n_tasks), rates.n_tasks)
    return None if ci.lower is None or ci.upper is None else (ci.lower, ci.upper)


def _notes(f: Figure, src: Source) -> str:
    parts = [f"{f.label} ({f.unit})", f.slice]
    if f.ci:
        conf = f"{f.ci_confidence:.0%} " if f.ci_confidence else ""
        parts.append(f"{conf}CI [{f.ci[0]!r}, {f.ci[1]!r}]")
    elif f.unit == "fraction of tasks" and (ci := _pass_at_1_ci(f, src)):
        parts.append(f"95% CI [{ci[0]!r}, {ci[1]!r}] (Clopper-Pearson over tasks)")
    if f.n is not None:
        parts.append(f"n {f.n}")
    if f.qualifier():  # what the samples support (a p99 on too few is said to be), and a lower bound
        parts.append(f.qualifier())
    parts.append(f"factsheet {src.sha256}")
    return _one_line("; ".join(parts))


def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:MAX_NAME].strip("-")
    return slug or "results"


def entries(src: Source) -> dict[str, list]:
    """File name -> its results (huggingface_hub EvalResultEntry), one file per benchmark variant."""
    sheet = src.sheet
    url, name = source_url(src.sha256), f"llm-factsheet factsheet {src.sha256}"
    groups: list[tuple[str, str, list[Figure]]] = []  # (dataset id, variant, figures)
    accuracy_dataset = None
    if acc := accuracy_figures(sheet):
        accuracy_dataset = HUMANEVAL_PLUS if "+" in sheet.accuracy.result.benchmark else HUMANEVAL
    # Page 1's figures first, from the headline: pass@1 on its benchmark, the others on the load.
    head = headline_figures(sheet)
    if accuracy_dataset is not None:
        pass_at_1 = [f for f in head if f.key == f"{HEADLINE}.pass_at_1"]
        if pass_at_1:
            groups.append((accuracy_dataset, f"{accuracy_dataset.split('/')[1]}-{HEADLINE}", pass_at_1))
    load = [f for f in head if f.key != f"{HEADLINE}.pass_at_1"]
    if load:
        groups.append((LOAD_DATASET, f"load-{HEADLINE}", load))
    if acc:
        dataset = accuracy_dataset
        for variant in dict.fromkeys(f.config for f in acc):
            groups.append(
                (dataset, f"{dataset.split('/')[1]}-{variant}", [f for f in acc if f.config == variant])
            )
    serving = serving_figures(sheet)
    for variant in dict.fromkeys(f.config for f in serving):
        groups.append((LOAD_DATASET, f"load-{variant}", [f for f in serving if f.config == variant]))
    files: dict[str, list] = {}
    for dataset, variant, figures in groups:
        stem, i = _slug(variant), 1
        while f"{stem}{'-' + str(i) if i > 1 else ''}.yaml" in files:  # labels that slug alike stay apart
            i += 1
        files[f"{stem}{'-' + str(i) if i > 1 else ''}.yaml"] = [
            EvalResultEntry(
                dataset_id=dataset,
                task_id=f.key,
                value=f.value,
                date=sheet.provenance.finished_at,
                source_url=url,
                source_name=name,
                notes=_notes(f, src),
            )
            for f in figures
        ]
    return files


def write(src: Source, out_dir: Path) -> list[Path]:
    """Write `.eval_results/*.yaml` under `out_dir`; nothing when nothing was measured."""
    paths = []
    for file_name, results in entries(src).items():
        # Safe dumper, non-ASCII escaped: factsheet text cannot add a key, an anchor or a tag.
        text = yaml.safe_dump(eval_result_entries_to_yaml(results), sort_keys=False, allow_unicode=False)
        paths.append(write_atomic(Path(out_dir) / FOLDER / file_name, text.encode()))
    return paths
