"""The coverage map of governance documentation (package data gpai-documentation.json): each item of the EU
GPAI Model Documentation Form, AI Act Annex XI §1, SPDX 3 AIPackage, CycloneDX 1.6 modelCard, NIST AI 600-1's
twelve risk categories and ISO/IEC 42005 §6, covered (JSON pointers into the factsheet), partial, or outside a
factsheet's scope; and, for one factsheet, what each pointer holds and so whether the item is measured here,
declared by the author, or not claimed."""

from __future__ import annotations

import json
from typing import Literal

from pydantic import Field

from factsheet.resources import data_file
from probes.core.measurement import Model

PACKAGE = "factsheet.coverage"
MATRIX_FILE = "gpai-documentation.json"
COVERAGE_KIND = "llm-factsheet-gpai-coverage"

Status = Literal["covered", "partial", "outside"]
State = Literal["present", "not_measured", "absent"]
Answer = Literal["measured", "declared", "not_claimed"]
# Where the author's own words live (the build spec's model and governance sections, and why the load is shaped as
# it is); every other pointer holds what the tool measured or recorded. The served weights are recorded, not declared.
DECLARED = ("/identity", "/governance", "/load/rationale")
RECORDED_UNDER_DECLARED = ("/identity/served_model",)


class Item(Model):
    framework: str = Field(description="key into the matrix's `frameworks`")
    item: str = Field(description="the item's short name")
    status: Status = Field(description="covered, partial, or outside a factsheet's scope")
    pointers: list[str] = Field(description="JSON pointers (RFC 6901) into the factsheet that document it")
    note: str


class Matrix(Model):
    matrix_version: str
    title: str
    disclaimer: str
    frameworks: dict[str, str]
    items: list[Item]


class PointerState(Model):
    pointer: str
    state: State = Field(description="present, not_measured (its reason beside), or absent in this factsheet")
    reason: str | None = None


class CoveredItem(Item):
    found: list[PointerState] = Field(description="what each pointer holds in this factsheet")
    answer: Answer = Field(
        description="measured (a pointer holds what the tool measured or recorded), declared (only the author's "
        "words are present), or not_claimed (nothing present: for NIST AI 600-1, not assessed by this tool)"
    )


class Coverage(Model):
    """The matrix applied to one factsheet (`factsheet export --format gpai-coverage`)."""

    kind: Literal["llm-factsheet-gpai-coverage"] = COVERAGE_KIND
    matrix_version: str
    title: str
    disclaimer: str
    frameworks: dict[str, str]
    factsheet: str = Field(description="the factsheet's name")
    factsheet_sha256: str | None = Field(
        None, description="'sha256:<hex>' of the factsheet file, when read from one"
    )
    items: list[CoveredItem]


def matrix() -> Matrix:
    """The matrix shipped with the tool."""
    return Matrix.model_validate(json.loads(data_file(PACKAGE, MATRIX_FILE).read_text(encoding="utf-8")))


def resolve(doc: object, pointer: str) -> tuple[bool, object]:
    """(found, value) of an RFC 6901 pointer into a JSON document."""
    node = doc
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False, None
    return True, node


def _state(doc: dict, pointer: str) -> PointerState:
    found, value = resolve(doc, pointer)
    if not found or value is None or value in ([], {}, ""):  # an empty list states nothing
        return PointerState(pointer=pointer, state="absent")
    if isinstance(value, dict) and value.get("status") == "not_measured":
        return PointerState(pointer=pointer, state="not_measured", reason=str(value.get("reason", "")))
    return PointerState(pointer=pointer, state="present")


def declared(pointer: str) -> bool:
    """Whether `pointer` holds the author's words (the spec's), not something the tool measured or recorded."""

    def under(prefixes: tuple[str, ...]) -> bool:
        return any(pointer == p or pointer.startswith(p + "/") for p in prefixes)

    return under(DECLARED) and not under(RECORDED_UNDER_DECLARED)


def answer(found: list[PointerState]) -> Answer:
    present = [f.pointer for f in found if f.state == "present"]
    if not present:
        return "not_claimed"
    return "declared" if all(declared(p) for p in present) else "measured"


def coverage(doc: dict, name: str, sha256: str | None = None) -> Coverage:
    """The matrix with what each pointer holds in the factsheet `doc` (its JSON form)."""
    m = matrix()
    items = []
    for i in m.items:
        found = [_state(doc, p) for p in i.pointers]
        items.append(CoveredItem(**i.model_dump(), found=found, answer=answer(found)))
    return Coverage(
        matrix_version=m.matrix_version,
        title=m.title,
        disclaimer=m.disclaimer,
        frameworks=m.frameworks,
        factsheet=name,
        factsheet_sha256=sha256,
        items=items,
    )
