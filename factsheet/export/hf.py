"""A Hugging Face model card (README.md): `model-index` eval results written with huggingface_hub's
ModelCardData/EvalResult (offline; `ModelCard.validate()` would call the Hub and is not used).

The front matter is PyYAML's safe dump of the card data, the body Markdown in which every piece of text
from the factsheet is escaped (text.py says which fields are refused instead, and why)."""

from __future__ import annotations

from pathlib import Path

import yaml
from huggingface_hub import EvalResult, ModelCardData

from factsheet.export import hf_eval_results
from factsheet.export.readout import (
    HEADLINE,
    Figure,
    Source,
    accuracy_figures,
    headline_figures,
    inference_energy,
    serving_figures,
)
from factsheet.export.text import markdown_code, markdown_text
from probes.core.files import write_atomic
from probes.core.measurement import MISSING, NotMeasured

TASK = "text-generation"
LOAD_DATASET = "llm-factsheet/synthetic-load"  # the workload the serving figures were measured on


def _eval_result(f: Figure, dataset_type: str, dataset_name: str) -> object:
    return EvalResult(
        task_type=TASK,
        dataset_type=dataset_type,
        dataset_name=dataset_name,
        dataset_config=f.config or None,
        metric_type=f.key,
        metric_name=f"{f.label} ({f.unit})",
        metric_value=f.value,
        metric_args=_args(f),
    )


def _args(f: Figure) -> dict:
    """What the figure rests on (model-index has no field for an interval: it goes with the metric)."""
    args: dict = {"unit": f.unit}
    if f.n is not None:
        args["n"] = f.n
    if f.ci:
        args["confidence_interval"] = [f.ci[0], f.ci[1]]
        args["confidence"] = f.ci_confidence
    if f.verdict:  # what its samples support: a p99 on too few samples says so
        args["verdict"] = f.verdict
    if f.lower_bound:
        args["lower_bound"] = True  # the value is a lower bound (≥ value)
    return args


def model_card(src: Source) -> str:
    sheet = src.sheet
    ident = sheet.identity
    results = []
    for f in headline_figures(sheet):  # page 1's figures, from the headline only
        if f.key == f"{HEADLINE}.pass_at_1":
            dataset = sheet.accuracy.result.dataset
            results.append(
                _eval_result(f, "evalplus/humanevalplus", f"{dataset.name} {dataset.version} ({f.slice})")
            )
        else:
            results.append(_eval_result(f, LOAD_DATASET, f.slice))
    for f in accuracy_figures(sheet):
        dataset = sheet.accuracy.result.dataset
        results.append(
            _eval_result(f, "evalplus/humanevalplus", f"{dataset.name} {dataset.version} ({f.slice})")
        )
    for f in serving_figures(sheet):
        results.append(_eval_result(f, LOAD_DATASET, f.slice))
    gov = sheet.governance
    declared = {} if gov is None else {"base_model": gov.base_model} if gov.base_model else {}
    data = ModelCardData(
        model_name=ident.name,
        **declared,
        **_license(ident.license),
        eval_results=results or None,
        tags=["llm-factsheet"],
        pipeline_tag=TASK,
        llm_factsheet={"sha256": src.sha256, "schema_version": sheet.schema_version, "name": sheet.name},
    )
    # Not through ModelCard: its `content` dumps the data again with huggingface_hub's own YAML settings.
    return f"---\n{_front_matter(data.to_dict())}---\n{_body(src)}"


def _front_matter(data: dict) -> str:
    """The card's metadata as YAML, through the safe dumper only (huggingface_hub's `to_yaml` uses the
    full one) with non-ASCII characters escaped: a string from the factsheet is a quoted scalar, its line breaks escaped or indented, so it
    can neither end the front matter (`---`) nor add a key, an anchor or a tag."""
    # Non-ASCII characters as \u escapes: PyYAML writes U+2028, U+2029, NEL and bidirectional controls raw
    # otherwise, which some readers take as line breaks and which reorder what a reader sees.
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=False)


def _license(name: str | None) -> dict:
    """The Hub's licence ids are lower-case SPDX ids; anything else is 'other' with its name."""
    if not name:
        return {}
    return {"license": name.lower()} if " " not in name else {"license": "other", "license_name": name}


def _body(src: Source) -> str:
    # Every value from the factsheet goes through markdown_text/markdown_code: on one line, markup escaped.
    sheet, lines = src.sheet, []
    ident = sheet.identity
    md = markdown_text
    lines += [f"# {md(ident.name)}{' ' + md(ident.version) if ident.version else ''}", ""]
    lines += [
        f"Measured by llm-factsheet {md(sheet.provenance.tool_version)} from factsheet "
        f"{markdown_code(src.path.name)} with digest `{src.sha256}` (schema {md(sheet.schema_version)}). "
        "Every figure below is measured; what was not measured is left out and named under *Not measured*.",
        "",
    ]
    head, acc, serving = headline_figures(sheet), accuracy_figures(sheet), serving_figures(sheet)
    for title, figures in (("Headline (page 1 of the factsheet)", head), ("Measured figures", acc + serving)):
        if not figures:
            continue
        lines += [
            f"## {title}",
            "",
            "| figure | value | 95 % CI | n | samples support | measured on |",
            "|---|---|---|---|---|---|",
        ]
        for f in figures:
            ci = f"[{f.ci[0]:.4g}, {f.ci[1]:.4g}]" if f.ci else MISSING
            n = f.n if f.n is not None else MISSING
            value = f"{'≥ ' if f.lower_bound else ''}{f.value:.4g} {md(f.unit)}"
            lines.append(
                f"| {md(f.label)} | {value} | {ci} | {n} | {md(f.verdict) or MISSING} | {md(f.slice)} |"
            )
        lines.append("")
    energy = inference_energy(sheet)
    if energy:
        per_token = f", {energy.j_per_output_token:.4g} J/output token" if energy.j_per_output_token else ""
        lines += [
            "## Inference energy",
            "",
            f"{energy.kwh:.6g} kWh gross over a {energy.window_s:.3g} s steady window ({energy.requests} requests, "
            f"{energy.output_tokens} output tokens{per_token}); boundary: {md(energy.boundary)}.",
            "",
        ]
    lines += _declared(sheet)
    missing = [(name, section.reason) for name, section in _sections(sheet) if section is not None]
    if missing:
        lines += ["## Not measured", ""] + [f"- {name}: {md(reason)}" for name, reason in missing] + [""]
    return "\n".join(lines)


def _declared(sheet) -> list[str]:
    """The author's governance statements, as declared (the tool checks their shape, not their truth)."""
    gov, md = sheet.governance, markdown_text
    if gov is None:
        return []
    items = [
        ("Release date", gov.release_date and str(gov.release_date)),
        ("EU market release date", gov.eu_release_date and str(gov.eu_release_date)),
        ("Base model", gov.base_model),
        ("Adapters", ", ".join(gov.adapters)),
        (
            "Modalities",
            "; ".join(
                f"{m.modality} {m.direction}"
                + (f" up to {m.max_size} {m.unit or ''}".rstrip() if m.max_size else "")
                for m in gov.modalities
            ),
        ),  # fmt: skip
        ("Distribution channels", "; ".join(gov.distribution_channels)),
        ("Acceptable use", gov.acceptable_use_policy),
        ("Known limitations", "; ".join(gov.known_limitations)),
        ("Standards claimed", "; ".join(gov.standards)),
        ("Decision thresholds", "; ".join(f"{t.figure}: {t.threshold}" for t in gov.decision_thresholds)),
    ]
    shown = [f"- {name}: {md(value)}" for name, value in items if value]
    return ["## Declared by the author (not measured)", "", *shown, ""] if shown else []


def _sections(sheet):
    energy = sheet.energy
    if not isinstance(energy, NotMeasured) and isinstance(energy.energy, NotMeasured):
        energy = energy.energy
    for name, section in (("load and latency", sheet.load), ("accuracy", sheet.accuracy), ("energy", energy)):
        yield name, section if isinstance(section, NotMeasured) else None


def write(src: Source, out_dir: Path) -> Path:
    return write_files(src, out_dir)[0]


def write_files(src: Source, out_dir: Path) -> list[Path]:
    """The card, then the files of the Hub's newer format beside it (.eval_results/*.yaml)."""
    path = Path(out_dir) / "README.md"
    write_atomic(path, model_card(src).encode())
    return [path, *hf_eval_results.write(src, out_dir)]
