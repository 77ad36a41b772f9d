"""The coverage matrix of the EU GPAI documentation items (package data gpai-documentation.json): each item
of the Code of Practice's Model Documentation Form and of AI Act Annex XI §1, covered (JSON pointers into
the factsheet), partial, or outside a factsheet's scope; and, for one factsheet, what each pointer holds."""

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
    if not found or value is None:
        return PointerState(pointer=pointer, state="absent")
    if isinstance(value, dict) and value.get("status") == "not_measured":
        return PointerState(pointer=pointer, state="not_measured", reason=str(value.get("reason", "")))
    return PointerState(pointer=pointer, state="present")


def coverage(doc: dict, name: str, sha256: str | None = None) -> Coverage:
    """The matrix with what each pointer holds in the factsheet `doc` (its JSON form)."""
    m = matrix()
    items = [CoveredItem(**i.model_dump(), found=[_state(doc, p) for p in i.pointers]) for i in m.items]
    return Coverage(
        matrix_version=m.matrix_version,
        title=m.title,
        disclaimer=m.disclaimer,
        frameworks=m.frameworks,
        factsheet=name,
        factsheet_sha256=sha256,
        items=items,
    )
