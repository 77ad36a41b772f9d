"""Reading the raw records a factsheet names (their digests are checked before, by `check_records`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import ValidationError

from factsheet.rederive.compare import Discrepancy
from factsheet.schema import RecordsFile
from factsheet.untrusted.reading import read_records_file
from probes.errors import InputError

T = TypeVar("T")


def read_records(
    folder: Path, rec: RecordsFile, parse: Callable[[dict], T], figure: str
) -> tuple[list[T] | None, list[Discrepancy]]:
    """The records of `rec`, one per JSON line; or none and why they cannot back any figure."""
    try:
        data = read_records_file(folder, rec.path)  # confined, bounded, depth-checked (factsheet.untrusted)
        records = [parse(json.loads(line)) for line in data.splitlines() if line.strip()]
    except OSError as exc:
        return None, [Discrepancy(figure=figure, stated=rec.path, recomputed=f"unreadable: {exc.strerror}")]
    except InputError:  # refused before parsing (outside the folder, too big, too deep): exit 2, not a figure
        raise
    except (ValueError, ValidationError) as exc:
        first = str(exc).splitlines()[0]
        return None, [Discrepancy(figure=figure, stated=rec.path, recomputed=f"malformed records: {first}")]
    problems = []
    if len(records) != rec.records:
        problems.append(
            Discrepancy(
                figure=f"{figure}.records", stated=rec.records, recomputed=len(records), source=rec.path
            )
        )
    return records, problems
