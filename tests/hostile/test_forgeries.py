"""A hostile author without the signing key edits a real build: every figure must still follow from records
bound to its context, or `validate` exits 1 naming it. Each forgery below gave exit 0 ("valid factsheet")
before records were bound (schema 1.1.0), unless marked as guarding the 1.2.0 layout itself.

One honest build against the mock server (binding_builds) with every section measured; each test edits a
copy of it: the JSON, and where the forgery needs it a records file with its sha256 restated.
"""

from __future__ import annotations

import copy
import json
import shutil

import pytest

from tests.hostile.binding_builds import Forgery
from tests.support.trees import drop_keys

pytestmark = pytest.mark.system

NOT_MEASURED = {"status": "not_measured", "reason": "not requested in the build spec"}


def _energy_samples_removed(f: Forgery) -> None:
    # The counter samples gone: the component energies would be taken as stated (made-up joules).
    del f.doc["energy"]["records"]


def _capacity_search_deleted(f: Forgery) -> None:
    cap = f.doc["load"]["capacity"]["result"]
    del cap["search"]
    cap["stop_reason"] = "bracket narrowed to the tolerance"
    cap["confirmed"] = not cap["confirmed"]


def _concurrency_raised(f: Forgery) -> None:
    res = f.doc["load"]["points"][0]["result"]
    res["point"]["concurrency"], res["label"] = 64, "concurrency=64"


def _lengths_changed(f: Forgery) -> None:
    point = f.doc["load"]["points"][1]["result"]["point"]
    point["input_len"], point["output_len"] = 1024, 512


def _point_reusing_records(f: Forgery) -> None:
    new = copy.deepcopy(f.doc["load"]["points"][1])
    new["result"]["point"]["concurrency"], new["result"]["label"] = 2, "concurrency=2"
    f.doc["load"]["points"].append(new)


def _point_reusing_a_copy(f: Forgery) -> None:
    """The same records under another file name (a path check alone would not see it)."""
    new = copy.deepcopy(f.doc["load"]["points"][1])
    shutil.copy(f.root / new["records"]["path"], f.root / "records" / "load-03.jsonl")
    new["records"]["path"] = "records/load-03.jsonl"
    new["result"]["point"]["concurrency"], new["result"]["label"] = 2, "concurrency=2"
    f.doc["load"]["points"].append(new)


def _label_renamed(f: Forgery) -> None:
    f.doc["load"]["points"][1]["result"]["label"] = "concurrency=64"


def _start_moved(f: Forgery) -> None:
    # Another day's run (its window shifted with it, so the window itself still recomputes).
    res, shift = f.doc["load"]["points"][1]["result"], 86400.0
    res["started_at"] += shift
    res["window_epoch"] = [t + shift for t in res["window_epoch"]]


def _capacity_without_load_points(f: Forgery) -> None:
    f.doc["load"]["points"] = []
    f.doc["energy"] = NOT_MEASURED  # so only the capacity is left without its template point
    f.doc["load"]["capacity"]["result"]["capacity"] = 64.0


def _downgraded_search_deleted(f: Forgery) -> None:
    """schema_version lowered to 1.0.0 (which kept no search): the records' headers still say 1.2.0."""
    f.doc["schema_version"] = "1.0.0"
    f.doc.pop("rules")  # as an older tool wrote it
    _capacity_search_deleted(f)


def _downgraded_concurrency(f: Forgery) -> None:
    f.doc["schema_version"] = "1.1.0"
    f.doc.pop("rules")  # as an older tool wrote it
    _concurrency_raised(f)


def _accuracy_sampling(f: Forgery) -> None:
    f.doc["accuracy"]["result"]["temperature"] = 0.8


def _accuracy_subset(f: Forgery) -> None:
    f.doc["accuracy"]["result"]["subset"] = "all 164 tasks"


def _energy_point_removed(f: Forgery) -> None:
    f.doc["load"] = NOT_MEASURED  # energy then rests on nothing but its own statement of counts


def _carbon_without_energy(f: Forgery) -> None:
    f.doc["energy"]["energy"] = {"status": "not_measured", "reason": "no counters"}
    del f.doc["energy"]["records"]


def _energy_downgraded_samples_removed(f: Forgery) -> None:
    """schema_version lowered to 1.0.0 (which kept no counter samples) to have component energies taken
    as stated: the other records' headers still say 1.2.0."""
    f.doc["schema_version"] = "1.0.0"
    f.doc.pop("rules")  # as an older tool wrote it
    _energy_samples_removed(f)


def _edit_first_record(f: Forgery, change) -> None:
    """Edit the first request record of load point 0 (its header line kept)."""

    def edit(lines: list[str]) -> list[str]:
        record = json.loads(lines[1])
        change(record)
        return [lines[0], json.dumps(record), *lines[2:]]

    f.rewrite_records(f.doc["load"]["points"][0]["records"], edit)


def _reply_judged_completed(f: Forgery) -> None:
    """A reply cut after one token, relabelled completed (issue 40: schema 1.10.0 judges every reply)."""
    _edit_first_record(f, lambda r: r.update(output_tokens=1, finish_reason=None, outcome="completed"))


def _judged_fields_stripped(f: Forgery) -> None:
    """The same cut reply with its outcome and asked length removed, as an older record would be read."""

    def strip(r: dict) -> None:
        r.update(output_tokens=1, finish_reason=None)
        for key in ("outcome", "max_tokens"):
            r.pop(key, None)

    _edit_first_record(f, strip)


# (id, forgery, the figure validate must name)
def _rule_forged(f: Forgery) -> None:
    f.doc["rules"][0] = "client-bound/forged"  # a rule no tool has: refused, never looked past


def _rule_dropped(f: Forgery) -> None:
    f.doc["rules"].remove("client-check/recomputed")  # as if its client checks were attested whole


FORGERIES = [
    ("energy-samples-removed", _energy_samples_removed, "energy.records"),
    ("capacity-search-deleted", _capacity_search_deleted, "load.capacity.result.search"),
    ("concurrency-16-to-64", _concurrency_raised, "load.points[0].result.point.concurrency: stated 64"),
    ("lengths-changed", _lengths_changed, "load.points[1].result.point.input_len: stated 1024"),
    ("new-point-reuses-records", _point_reusing_records, "load.points[2].records"),
    ("new-point-reuses-a-copy", _point_reusing_a_copy, "load.points[2].records"),
    ("label-renamed", _label_renamed, "load.points[1].result.label: stated 'concurrency=64'"),
    ("start-moved", _start_moved, "load.points[1].result.started_at"),
    ("capacity-without-load-points", _capacity_without_load_points, "load.capacity.result:"),
    ("downgraded-search-deleted", _downgraded_search_deleted, "load.capacity.result.search"),
    ("downgraded-concurrency", _downgraded_concurrency, "load.points[0].result.point.concurrency: stated 64"),
    ("accuracy-temperature", _accuracy_sampling, "accuracy.result.temperature: stated 0.8"),
    ("accuracy-subset", _accuracy_subset, "accuracy.result.subset"),
    ("energy-load-point-removed", _energy_point_removed, "energy.energy:"),
    ("carbon-without-energy", _carbon_without_energy, "energy.carbon"),
    ("energy-downgraded-samples-removed", _energy_downgraded_samples_removed, "energy.records"),
    (
        "reply-judged-completed",
        _reply_judged_completed,
        "load.points[0].records (request 0): stated 'completed'",
    ),
    ("judged-fields-stripped", _judged_fields_stripped, "load.points[0].records (request 0)"),
    ("rule-id-forged", _rule_forged, "rules[0]: stated 'client-bound/forged'"),
    ("rule-dropped", _rule_dropped, "rules: stated"),
]


def test_the_build_states_the_rules_of_its_version(full_build):  # noqa: F811
    from factsheet.document.rules import rule_set
    from factsheet.document.schema import SCHEMA_VERSION

    doc = json.loads((full_build / "factsheet.json").read_text())
    assert doc["schema_version"] == SCHEMA_VERSION
    assert doc["rules"] == rule_set(SCHEMA_VERSION).ids and "client-bound/last-byte" in doc["rules"]


def test_the_honest_build_validates_with_its_records_bound(full_build):  # noqa: F811
    from typer.testing import CliRunner

    from factsheet.cli.commands import app

    result = CliRunner().invoke(app, ["validate", str(full_build / "factsheet.json")])
    assert result.exit_code == 0, result.output
    assert "records bound" in result.output


@pytest.mark.parametrize(("forge", "figure"), [f[1:] for f in FORGERIES], ids=[f[0] for f in FORGERIES])
def test_forgery_fails_validate_naming_the_figure(full_build, tmp_path, forge, figure):  # noqa: F811
    forged = Forgery(full_build, tmp_path / "forged")
    forge(forged)
    result = forged.validate()
    assert result.exit_code == 1, result.output
    assert figure in result.output, result.output


def test_header_removed_is_named(full_build, tmp_path):  # noqa: F811
    """Guards the 1.2.0 layout: a records file stripped of its header (digest restated) is unbound."""
    forged = Forgery(full_build, tmp_path / "forged")
    rec = forged.doc["load"]["points"][1]["records"]
    forged.rewrite_records(rec, lambda lines: [line for line in lines if '"header"' not in line])
    result = forged.validate()
    assert result.exit_code == 1, result.output
    assert "load.points[1].records" in result.output and "no context header" in result.output


def test_header_of_another_point_is_named(full_build, tmp_path):  # noqa: F811
    """Guards the 1.2.0 layout: one point's header moved onto another's records (digests restated)."""
    forged = Forgery(full_build, tmp_path / "forged")
    points = forged.doc["load"]["points"]
    other = (forged.root / points[0]["records"]["path"]).read_text().splitlines()[0]
    forged.rewrite_records(points[1]["records"], lambda lines: [other, *lines[1:]])
    result = forged.validate()
    assert result.exit_code == 1, result.output
    assert "load.points[1].result.point.concurrency: stated 1, recomputed 16" in result.output


def test_records_of_the_build_carry_their_header(full_build):  # noqa: F811
    doc = json.loads((full_build / "factsheet.json").read_text())
    roles = {
        doc["load"]["points"][0]["records"]["path"]: "load point",
        doc["load"]["capacity"]["records"][0]["path"]: "capacity step",
        doc["accuracy"]["records"]["path"]: "accuracy",
        doc["energy"]["records"]["path"]: "energy counters",
    }
    for path, role in roles.items():
        header = json.loads((full_build / path).read_text().splitlines()[0])["header"]
        assert header["role"] == role and header["context_sha256"].startswith("sha256:")


def test_an_unbound_document_says_its_settings_are_attested_only(full_build, tmp_path):  # noqa: F811
    """Headers stripped, every load record rewritten without what only a 1.10.0 tool writes (its outcome:
    test_omissions.py names the version otherwise) and the version lowered: it validates as the older version
    it claims, and says its settings are not bound (the README's threat model: a registry needing binding
    requires 1.2.0)."""
    forged = Forgery(full_build, tmp_path / "forged")
    forged.as_older_version()
    newer = ("outcome",)
    for rec in forged.records_entries()[:-2]:  # the load points' and capacity steps' (not accuracy, energy)
        forged.rewrite_records(
            rec,
            lambda lines: [
                json.dumps({k: v for k, v in json.loads(x).items() if k not in newer}) for x in lines
            ],
        )
    drop_keys(
        forged.doc, {"finish_reasons", "output_tokens_sources"}
    )  # figures of outcomes, which 1.1.0 had not
    result = forged.validate()
    assert result.exit_code == 0, result.output
    assert "records unbound" in result.output and "attested only" in result.output


def test_an_unbound_document_is_still_held_to_its_records(full_build, tmp_path):  # noqa: F811
    """What older data still allows: a concurrency lowered below what the records show in flight (16 users
    at once) is named, bound or not."""
    forged = Forgery(full_build, tmp_path / "forged")
    forged.as_older_version()
    res = forged.doc["load"]["points"][0]["result"]
    res["point"]["concurrency"], res["label"] = 4, "concurrency=4"
    result = forged.validate()
    assert result.exit_code == 1, result.output
    assert "load.points[0].result.point.concurrency: stated 4" in result.output


def test_a_rewritten_header_does_not_raise_the_concurrency(full_build, tmp_path):  # noqa: F811
    """A forger rewriting the header to the new context (digests restated) still has the records to fake:
    16 users at once do not become 64."""
    from factsheet.binding import header_line, load_point_context
    from probes.load.runner import PointResult

    forged = Forgery(full_build, tmp_path / "forged")
    _concurrency_raised(forged)
    point = forged.doc["load"]["points"][0]
    line = header_line(load_point_context(PointResult.model_validate(point["result"]))).decode().strip()
    forged.rewrite_records(point["records"], lambda lines: [line, *lines[1:]])
    result = forged.validate()
    assert result.exit_code == 1, result.output
    assert "load.points[0].result.point.concurrency: stated 64, recomputed 'at most 16" in result.output
    assert "load.points[0].records" not in result.output  # the header itself now binds


def test_records_without_headers_still_show_the_concurrency(full_build, tmp_path):  # noqa: F811
    forged = Forgery(full_build, tmp_path / "forged")
    forged.as_older_version()
    _concurrency_raised(forged)
    result = forged.validate()
    assert result.exit_code == 1, result.output
    assert "load.points[0].result.point.concurrency: stated 64, recomputed 'at most 16" in result.output
