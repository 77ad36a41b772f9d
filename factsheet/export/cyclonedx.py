"""A CycloneDX 1.6 BOM: the model as a `machine-learning-model` component with its `modelCard`.

cyclonedx-python-lib builds and serialises the BOM; its model classes have no modelCard yet, so that
part is added as data and the whole document is validated against the 1.6 JSON schema the library
bundles (offline)."""

from __future__ import annotations

import json
from pathlib import Path

from cyclonedx.model import Property
from cyclonedx.model.bom import Bom
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion

from factsheet.document.schema import Factsheet
from factsheet.export.readout import (
    Figure,
    Source,
    accuracy_figures,
    headline_figures,
    inference_energy,
    serving_figures,
)
from factsheet.export.text import json_for_html
from probes.core.errors import InputError
from probes.core.files import write_atomic

DIGEST_PROPERTY = "llm-factsheet:factsheet:sha256"
# The served text that wraps every request (CycloneDX #862 asks for the chat template in an ML-BOM; 1.6 has no
# field for it yet) and the generation defaults, each by the digest the factsheet states, only when measured.
TEMPLATE_PROPERTY = "llm-factsheet:chat_template:sha256"
GENERATION_PROPERTY = "llm-factsheet:generation_config:sha256"
MODEL_REF = "model"


class InvalidExport(InputError):
    """The document we produced does not validate against its format's schema (a bug, reported)."""


def _metric(f: Figure) -> dict:
    # performanceMetric has no field for a verdict or a bound: the slice states them with the figure.
    slice = f"{f.slice} [{f.qualifier()}]" if f.qualifier() else f.slice
    metric = {"type": f"{f.label} ({f.unit})", "value": repr(f.value), "slice": slice}
    if f.ci:
        metric["confidenceInterval"] = {"lowerBound": repr(f.ci[0]), "upperBound": repr(f.ci[1])}
    return metric


def model_card(src: Source) -> dict:
    sheet = src.sheet
    metrics = [_metric(f) for f in headline_figures(sheet) + accuracy_figures(sheet) + serving_figures(sheet)]
    card: dict = {"bom-ref": "model-card"}
    if metrics:
        card["quantitativeAnalysis"] = {"performanceMetrics": metrics}
    considerations: dict = {}
    if sheet.identity.intended_use:
        considerations["useCases"] = [sheet.identity.intended_use]
    gov = sheet.governance
    limits = [sheet.identity.out_of_scope] if sheet.identity.out_of_scope else []
    limits += gov.known_limitations if gov is not None else []
    if limits:  # declared by the author, as written
        considerations["technicalLimitations"] = limits
    if gov is not None and gov.acceptable_use_policy:
        considerations["ethicalConsiderations"] = [
            {"name": "acceptable use", "mitigationStrategy": gov.acceptable_use_policy}
        ]
    energy = inference_energy(sheet)
    if energy is not None:  # only when measured: nothing is invented for an unmeasured run
        kwh = {"value": energy.kwh, "unit": "kWh"}
        considerations["environmentalConsiderations"] = {
            "energyConsumptions": [
                {
                    "activity": "inference",
                    "energyProviders": [
                        {
                            "description": f"measured: {energy.boundary}, gross, {energy.window_s:.3g} s steady "
                            f"window, {energy.requests} requests, {energy.output_tokens} output tokens "
                            "(the electricity supplier is not recorded)",
                            "organization": {},
                            "energySource": "unknown",
                            "energyProvided": kwh,
                        }
                    ],
                    "activityEnergyCost": kwh,
                }
            ]
        }
    if considerations:
        card["considerations"] = considerations
    return card


def deployment_digests(sheet: Factsheet) -> list[tuple[str, str]]:
    """(property, digest) of the chat template and of the generation config file the sheet states."""
    facts = sheet.system.deployment
    if facts is None:
        return []
    stated = [
        (TEMPLATE_PROPERTY, getattr(facts.chat_template, "sha256", None)),
        (GENERATION_PROPERTY, getattr(facts.generation_config, "sha256", None)),
    ]
    return [(name, digest) for name, digest in stated if digest is not None]


def bom(src: Source) -> dict:
    sheet, ident = src.sheet, src.sheet.identity
    component = Component(
        type=ComponentType.MACHINE_LEARNING_MODEL,
        name=ident.name,
        version=ident.version,
        bom_ref=MODEL_REF,
        description=f"served by {sheet.system.target_kind}; measured by llm-factsheet",
        properties=[Property(name=DIGEST_PROPERTY, value=src.sha256)]
        + [Property(name=n, value=d) for n, d in deployment_digests(sheet)],
    )
    document = Bom(components=[component])
    document.metadata.properties.add(Property(name=DIGEST_PROPERTY, value=src.sha256))
    data = json.loads(JsonV1Dot6(document).output_as_string())
    for c in data["components"]:
        if c.get("bom-ref") == MODEL_REF:
            c["modelCard"] = model_card(src)
    validate(data)
    return data


def validate(data: dict) -> None:
    """Raise InvalidExport naming the first schema violation (CycloneDX 1.6, strict, offline)."""
    # deferred: the strict JSON validator (~1.2 s, jsonschema) serves only this export, not `factsheet render`
    from cyclonedx.validation.json import JsonStrictValidator

    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(json.dumps(data))
    if error is not None:
        raise InvalidExport(f"CycloneDX 1.6 schema: {error}")


def write(src: Source, out_dir: Path) -> Path:
    path = Path(out_dir) / "bom.cdx.json"
    # json.dumps escapes quotes, backslashes and control characters in every string from the factsheet;
    # json_for_html also those an HTML page embedding the BOM would read as markup.
    write_atomic(path, json_for_html(json.dumps(bom(src), indent=2)).encode())
    return path
