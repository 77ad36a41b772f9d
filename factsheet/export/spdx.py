"""An SPDX 3.0.1 document (JSON-LD) with the model as an `ai_AIPackage`, built with spdx-python-model:
measured figures as `ai_metric`, inference energy as `ai_energyConsumption` only when measured, and
the factsheet itself as a File (with its sha256) that is evidence for the package."""

from __future__ import annotations

import io
from datetime import datetime
from pathlib import Path

from spdx_python_model import v3_0_1 as spdx

from factsheet.export.readout import (
    Source,
    accuracy_figures,
    headline_figures,
    inference_energy,
    serving_figures,
)
from factsheet.export.text import json_for_html
from probes.core.files import write_atomic


def _ids(src: Source) -> str:
    return f"urn:llm-factsheet:{src.sha256.split(':', 1)[1][:32]}:"  # stable: same factsheet, same ids


def document(src: Source):
    """The SHACLObjectSet holding the document and its elements."""
    sheet, ident, base = src.sheet, src.sheet.identity, _ids(src)
    agent = spdx.SoftwareAgent(_id=base + "tool", name=f"llm-factsheet {sheet.provenance.tool_version}")
    info = spdx.CreationInfo(
        specVersion="3.0.1",
        created=datetime.fromisoformat(sheet.provenance.finished_at),
        createdBy=[agent._id],
    )
    agent.creationInfo = info
    package = spdx.ai_AIPackage(
        _id=base + "model",
        creationInfo=info,
        name=ident.name,
        software_primaryPurpose=spdx.software_SoftwarePurpose.model,
        comment=f"measured by llm-factsheet; factsheet sha256 {src.sha256}",
    )
    if ident.version:
        package.software_packageVersion = ident.version
    if ident.intended_use:
        package.ai_informationAboutApplication = ident.intended_use
    gov = sheet.governance
    limits = [ident.out_of_scope] if ident.out_of_scope else []
    limits += gov.known_limitations if gov is not None else []
    if limits:  # the author's words (declared), one SPDX text field
        package.ai_limitation = "; ".join(limits)
    if gov is not None:
        package.ai_standardCompliance = list(gov.standards)
        package.ai_metricDecisionThreshold = [
            spdx.DictionaryEntry(key=t.figure, value=t.threshold) for t in gov.decision_thresholds
        ]
    for f in headline_figures(sheet) + accuracy_figures(sheet) + serving_figures(sheet):
        # ai_metric is a key and a value: what the samples support (and a lower bound) goes in the key.
        key = f"{f.label} ({f.unit}), {f.slice}" + (f" [{f.qualifier()}]" if f.qualifier() else "")
        package.ai_metric.append(spdx.DictionaryEntry(key=key, value=repr(f.value)))
    energy = inference_energy(sheet)
    if energy is not None:  # absent, not zero, when energy was not measured
        package.ai_energyConsumption = spdx.ai_EnergyConsumption(
            ai_inferenceEnergyConsumption=[
                spdx.ai_EnergyConsumptionDescription(
                    ai_energyQuantity=energy.kwh, ai_energyUnit=spdx.ai_EnergyUnitType.kilowattHour
                )
            ]
        )
    record = spdx.software_File(
        _id=base + "factsheet",
        creationInfo=info,
        name=src.path.name,
        software_primaryPurpose=spdx.software_SoftwarePurpose.evidence,
        verifiedUsing=[spdx.Hash(algorithm=spdx.HashAlgorithm.sha256, hashValue=src.sha256.split(":", 1)[1])],
    )
    evidence = spdx.Relationship(
        _id=base + "evidence",
        creationInfo=info,
        from_=package,
        relationshipType=spdx.RelationshipType.hasEvidence,
        to=[record],
    )
    doc = spdx.SpdxDocument(
        _id=base + "document",
        creationInfo=info,
        name=f"llm-factsheet export: {sheet.name}",
        profileConformance=[
            spdx.ProfileIdentifierType.core,
            spdx.ProfileIdentifierType.software,
            spdx.ProfileIdentifierType.ai,
        ],
        rootElement=[package],
        element=[agent, package, record, evidence],
    )
    objects = spdx.SHACLObjectSet()
    for obj in (doc, agent, package, record, evidence):
        objects.add(obj)
    return objects


def to_jsonld(objects) -> bytes:
    buf = io.BytesIO()
    spdx.JSONLDSerializer().write(objects, buf, indent=2)  # json.dump: strings escaped as JSON
    # JSON-LD is often embedded in an HTML <script> element: nothing from the factsheet may close it.
    return json_for_html(buf.getvalue().decode()).encode()


def from_jsonld(data: bytes):
    objects = spdx.SHACLObjectSet()
    spdx.JSONLDDeserializer().read(io.BytesIO(data), objects)
    return objects


def write(src: Source, out_dir: Path) -> Path:
    path = Path(out_dir) / "factsheet.spdx.jsonld"
    write_atomic(path, to_jsonld(document(src)))
    return path
