"""`export --format hf` also writes the Hub's `.eval_results/*.yaml`: every file valid against the documented
fields (hf_eval_results.schema.json, written from Hugging Face's documentation and specification), read back
by huggingface_hub's own parser, each value the factsheet's figure, its CI and digest in the result."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from factsheet.export import hf, hf_eval_results
from factsheet.export.readout import accuracy_figures, headline_figures, serving_figures, source
from probes.load.stats import proportion_ci
from tests.support import sheet_fixture as fx

SCHEMA = json.loads((Path(__file__).parent / "hf_eval_results.schema.json").read_text())


def _write(folder: Path, sheet) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "factsheet.json"
    path.write_bytes(sheet.model_dump_json(indent=2).encode())
    return path


@pytest.fixture(scope="module")
def full(tmp_path_factory):
    sheet = fx.build_sheet(fx.load_points())
    return source(_write(tmp_path_factory.mktemp("full"), sheet), sheet)


def _files(out: Path) -> dict[str, list]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted((out / ".eval_results").glob("*.yaml"))}


def test_export_hf_writes_eval_results_valid_against_the_documented_fields(full, tmp_path):
    from huggingface_hub import parse_eval_result_entries

    # The writer `export --format hf` runs (the CLI re-derives its sheet first: tests/headline/test_outlets.py)
    hf.write_files(full, tmp_path)
    assert (tmp_path / "README.md").is_file()
    files = _files(tmp_path)
    assert files, "no .eval_results/*.yaml written"
    for name, data in files.items():
        jsonschema.Draft202012Validator(SCHEMA).validate(data)  # raises naming the field
        assert parse_eval_result_entries(data), name  # the Hub client reads it
    # One result per measured figure, each with the factsheet's value; nothing else.
    results = [r for data in files.values() for r in data]
    figures = headline_figures(full.sheet) + accuracy_figures(full.sheet) + serving_figures(full.sheet)
    assert len(results) == len(figures)
    by = {(r["dataset"]["id"], r["dataset"]["task_id"], r["notes"].split("; ")[1]): r for r in results}
    for f in figures:
        dataset = (
            hf_eval_results.HUMANEVAL_PLUS if f.unit == "fraction of tasks" else hf_eval_results.LOAD_DATASET
        )
        r = by[(dataset, f.key, f.slice)]
        assert r["value"] == f.value
        if f.ci:
            assert f"CI [{f.ci[0]!r}, {f.ci[1]!r}]" in r["notes"]
        elif f.key == "pass@1":  # 1 of 2 tasks (base+plus), 2 of 2 (base): Clopper-Pearson over tasks
            ci = proportion_ci(round(f.value * 2), 2)
            assert f"95% CI [{ci.lower!r}, {ci.upper!r}] (Clopper-Pearson" in r["notes"]
        assert full.sha256 in r["notes"] and r["date"] == full.sheet.provenance.finished_at
    # The source names the factsheet by its digest (RFC 6920 ni URI), whatever the file is later called.
    digest = hashlib.sha256(full.path.read_bytes()).digest()
    url = results[0]["source"]["url"]
    assert url.startswith("ni:///sha-256;")
    assert base64.urlsafe_b64decode(url.split(";", 1)[1] + "==") == digest
    # pass@1 of base+plus and of base are two variants of the benchmark: two files.
    assert {"humanevalplus-base.yaml", "humanevalplus-base-plus.yaml"} <= set(files)


def test_nothing_measured_writes_no_eval_results(tmp_path):
    sheet = fx.empty_sheet()
    src = source(_write(tmp_path / "in", sheet), sheet)
    assert hf_eval_results.write(src, tmp_path / "out") == []
    assert not (tmp_path / "out" / ".eval_results").exists()


def test_hostile_labels_stay_file_names_and_yaml_scalars(full, tmp_path):
    """A load point label is factsheet text: it names no path outside .eval_results and adds no YAML key."""
    sheet = full.sheet
    entry = sheet.load.points[1]
    # One line (a label with a line break is refused by `source`, exit 2, for every export).
    evil = "../../x: {value: 1e9} --- !!python/object:os.system &a *a # é"
    points = list(sheet.load.points)
    points[1] = entry.model_copy(update={"result": entry.result.model_copy(update={"label": evil})})
    hostile = sheet.model_copy(update={"load": sheet.load.model_copy(update={"points": points})})
    src = source(_write(tmp_path / "in", hostile), hostile)
    paths = hf_eval_results.write(src, tmp_path / "out")
    assert all(p.parent == tmp_path / "out" / ".eval_results" for p in paths)
    notes = []
    for p in paths:
        assert p.read_bytes().isascii()  # non-ASCII written as YAML escapes
        data = yaml.safe_load(p.read_text())
        jsonschema.Draft202012Validator(SCHEMA).validate(data)
        assert all(r["value"] != 1e9 for r in data)
        notes += [r["notes"] for r in data]
    assert any(f"load point {evil};" in n for n in notes)  # the label comes back as text, exactly
