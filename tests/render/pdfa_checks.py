"""What an archival, accessible PDF must show that can be checked offline (veraPDF does the rest):
the facts are read with pypdf, for the factsheet's and the compliance report's tests alike."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass, field

import pypdf
from pypdf.generic import ArrayObject, DictionaryObject


@dataclass
class Associated:
    name: str
    relationship: str | None
    mime_type: str | None
    data: bytes
    in_catalog_af: bool


@dataclass
class PdfFacts:
    pdfa_part: str | None
    pdfa_conformance: str | None
    output_intents: list[dict] = field(default_factory=list)  # subtype, identifier, components, colour space
    associated: list[Associated] = field(default_factory=list)
    catalog_af_entries: int = 0
    marked: bool = False
    lang: str | None = None
    has_structure_tree: bool = False
    figure_alts: list[str | None] = field(default_factory=list)


def _xmp_attr(xmp: str, name: str) -> str | None:
    m = re.search(rf'{name}="([^"]*)"', xmp) or re.search(rf"<{name}>([^<]*)</{name}>", xmp)
    return m.group(1) if m else None


def read_facts(pdf_bytes: bytes) -> PdfFacts:
    reader = pypdf.PdfReader(io.BytesIO(pdf_bytes))
    root = reader.trailer["/Root"]
    xmp = root["/Metadata"].get_object().get_data().decode("utf-8") if "/Metadata" in root else ""
    facts = PdfFacts(_xmp_attr(xmp, "pdfaid:part"), _xmp_attr(xmp, "pdfaid:conformance"))
    for oi in root.get("/OutputIntents", []):
        oi = oi.get_object()
        profile = oi["/DestOutputProfile"].get_object()
        icc = profile.get_data()
        facts.output_intents.append(
            {
                "subtype": oi.get("/S"),
                "identifier": str(oi.get("/OutputConditionIdentifier")),
                "components": profile.get("/N"),
                "colour_space": icc[16:20].decode("ascii", "replace"),  # ICC header: data colour space
                "icc_signature": icc[36:40],
            }
        )
    af_refs = [r.idnum for r in root.get("/AF", []) if hasattr(r, "idnum")]
    facts.catalog_af_entries = len(root.get("/AF", []))
    names = root.get("/Names", {}).get("/EmbeddedFiles", {}).get("/Names", [])
    for i in range(0, len(names), 2):
        ref = names[i + 1]
        spec = ref.get_object()
        stream = spec["/EF"]["/F"].get_object()
        subtype = stream.get("/Subtype")
        facts.associated.append(
            Associated(
                name=str(spec.get("/UF") or spec.get("/F")),
                relationship=spec.get("/AFRelationship"),
                mime_type=subtype[1:].replace("#2F", "/").replace("#2f", "/") if subtype else None,
                data=stream.get_data(),
                in_catalog_af=getattr(ref, "idnum", None) in af_refs,
            )
        )
    facts.marked = bool(root.get("/MarkInfo", {}).get("/Marked"))
    facts.lang = root.get("/Lang")
    tree = root.get("/StructTreeRoot")
    facts.has_structure_tree = tree is not None

    def walk(node) -> None:
        node = node.get_object()
        if isinstance(node, ArrayObject):
            for kid in node:
                walk(kid)
        elif isinstance(node, DictionaryObject):
            if node.get("/S") == "/Figure":
                alt = node.get("/Alt")
                facts.figure_alts.append(str(alt) if alt is not None else None)
            if "/K" in node:
                walk(node["/K"])

    if tree is not None:
        walk(tree)
    return facts
