"""Factsheets for the export-injection and signal tests: the render fixture's (real load runs against the
mock server, hand-made accuracy and energy), with hostile text put into its free-text fields, or with its
load points repeated to make a render that takes seconds."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from tests.support import sheet_fixture as fx


@cache
def honest_sheet():
    """The render fixture's factsheet (three load points, one of which completed nothing)."""
    return fx.build_sheet(fx.load_points())


def write(folder: Path, sheet) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "factsheet.json"
    path.write_bytes(sheet.model_dump_json(indent=2).encode())
    return path


def many_points(n: int):
    """The honest factsheet with its two completed load points repeated to `n` points (concurrency and
    label made distinct): every point renders a table, chart points and definitions like a real one."""
    sheet = honest_sheet()
    done = sheet.load.points[:2]
    points = []
    for i in range(n):
        entry = done[i % 2]
        result = entry.result.model_copy(
            update={
                "point": entry.result.point.model_copy(update={"concurrency": i + 1}),
                "label": f"c={i + 1}",
            }
        )
        points.append(entry.model_copy(update={"result": result}))
    return sheet.model_copy(update={"load": sheet.load.model_copy(update={"points": points})})


def empty_sheet():
    """Nothing measured: every section gives its reason (free text the model card prints)."""
    return fx.empty_sheet()


def with_text(sheet, values: dict[tuple[str | int, ...], str]):
    """`sheet` with the text at each path (keys and indexes into its JSON) replaced, checked by the schema
    as a factsheet read from disk would be."""
    data = sheet.model_dump(mode="json")
    for path, value in values.items():
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return type(sheet).model_validate(data)
