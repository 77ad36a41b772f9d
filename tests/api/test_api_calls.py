"""Each call of factsheet.api against known truth: the mock server's timing, a policy either side of it,
a byte flipped, a figure hand-edited. A result names exactly the files that exist afterwards; a judgement
gives the CLI's verdict and exit code on the same inputs; bad input raises InputError naming the field and
writes nothing."""

from __future__ import annotations

import json
import re

import pytest

from factsheet import (
    InputError,
    build_factsheet,
    check_factsheet,
    diff_factsheets,
    export_factsheet,
    probe_load,
    render_factsheet,
    sign_factsheet,
    validate_factsheet,
    verify_factsheet,
)
from factsheet.api.results import Result
from probes.core.digests import sha256_bytes
from probes.core.errors import CheckFailed
from tests.api.api_helpers import cli, endpoint_spec, files_under, policy

pytestmark = pytest.mark.system


def test_build_names_every_file_it_leaves(built):
    assert built.exit_code == 0 and built.failure is None and built.error is None
    assert files_under(built.output) == set(built.files)
    assert [p.name for p in built.written] == ["factsheet.json", "factsheet.html", "factsheet.pdf"]
    assert len(built.records) == 2 and built.compliance is None and built.attestation is None
    # The result carries the factsheet as written, byte for byte.
    assert built.json_path.read_bytes() == built.factsheet.model_dump_json(indent=2).encode()


def test_build_gates_signs_and_reports_like_the_command(tmp_path, mock_url, keys):
    gate = policy(tmp_path, "impossible", 40)  # below the mock's 55 ms floor: fails on any host
    extra = f"compliance: {{policies: [{gate.name}]}}\nsign: {{key: {keys.private}}}\n"
    result = build_factsheet(endpoint_spec(tmp_path, mock_url, extra), tmp_path / "out")
    assert result.exit_code == 1 and "p99-impossible/p99-e2el" in result.failure
    assert result.compliance.verdict == "fail" and result.factsheet.compliance.verdict == "fail"
    assert result.attestation == tmp_path / "out" / "factsheet.intoto.jsonl"
    assert files_under(tmp_path / "out") == set(result.files)
    with pytest.raises(CheckFailed, match="compliance gate failed"):
        result.raise_for_status()
    verified = verify_factsheet(result.json_path, keys.public)
    assert verified.verified and verified.compliance.result == "FAILED"


def test_bad_spec_raises_naming_the_field_and_writes_nothing(tmp_path, mock_url):
    spec = endpoint_spec(tmp_path, mock_url, points=((0, 4),))
    with pytest.raises(InputError, match=r"load\.points"):
        build_factsheet(spec, tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("threshold", "verdict", "code"), [(5000, "pass", 0), (40, "fail", 1)])
def test_check_gives_the_commands_verdict(fresh, tmp_path, threshold, verdict, code):
    rules = policy(tmp_path, f"p{threshold}", threshold)
    result = check_factsheet(fresh, [str(rules)], tmp_path / "api")
    assert (result.verdict, result.exit_code) == (verdict, code)
    assert files_under(tmp_path / "api") == set(result.written)
    ran = cli("check", fresh, "-p", rules, "-o", tmp_path / "cli")
    assert ran.exit_code == result.exit_code, ran.output
    assert f"compliance: {verdict.upper()}" in ran.output
    assert (result.failure is None) == ("check failed" not in ran.output)


def test_check_with_a_missing_policy_raises_and_writes_nothing(fresh, tmp_path):
    with pytest.raises(InputError, match="nowhere.yaml"):
        check_factsheet(fresh, [str(tmp_path / "nowhere.yaml")], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_sign_then_verify_then_a_flipped_byte_fails_like_the_command(fresh, keys):
    signed = sign_factsheet(fresh, keys.private)
    # issue 32: the results bundle (test and eval results) is written first, the attestation binding it last
    assert signed.written == (signed.results, signed.attestation) and signed.attestation.is_file()
    assert signed.key_id == keys.key_id
    ok = verify_factsheet(fresh, keys.public)
    assert ok.exit_code == 0 and "factsheet.pdf" in ok.subjects and ok.key_id == keys.key_id
    html = fresh.with_name("factsheet.html")
    html.write_bytes(html.read_bytes().replace(b"<html", b"<HTML", 1))
    bad = verify_factsheet(fresh, keys.public)
    assert bad.exit_code == 1 and not bad.verified and "factsheet.html differs" in bad.failure
    ran = cli("verify", fresh, "--pubkey", keys.public)
    assert ran.exit_code == 1 and "factsheet.html differs" in ran.output


def test_diff_of_a_build_with_itself_is_no_regression(built, fresh, tmp_path):
    result = diff_factsheets(built.json_path, fresh, output=tmp_path / "d")
    # a sweep alone decides nothing (its points are indicative, one run each): inconclusive, exit 1 (diff 1.4.0)
    assert result.verdict == "inconclusive" and result.exit_code == 1 and result.report.gate == "fail"
    assert {p.name for p in files_under(tmp_path / "d")} == {p.name for p in result.written}
    ran = cli("diff", built.json_path, fresh, "-o", tmp_path / "cli")
    assert ran.exit_code == result.exit_code, ran.output


def test_diff_limit_without_metric_raises_naming_the_option(built, fresh, tmp_path):
    with pytest.raises(InputError, match="--max-regression"):
        diff_factsheets(built.json_path, fresh, max_regression=["10%"], output=tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_validate_finds_a_hand_edited_figure(fresh):
    assert validate_factsheet(fresh).kind.startswith("factsheet (schema ")
    doc = json.loads(fresh.read_text())
    p99 = doc["load"]["points"][0]["result"]["metrics"]["e2el_ms"]["percentiles"]
    p99["p99"] = p99["p99"] / 2
    fresh.write_text(json.dumps(doc, indent=2))
    result = validate_factsheet(fresh)
    assert result.exit_code == 1 and result.kind is None
    assert any("e2el_ms.percentiles.p99" in d.figure for d in result.discrepancies)
    assert cli("validate", fresh).exit_code == 1


def test_render_and_export_name_exactly_what_they_wrote(fresh, tmp_path):
    rendered = render_factsheet(fresh, tmp_path / "r")
    assert files_under(tmp_path / "r") == set(rendered.written) and len(rendered.written) == 3
    card = export_factsheet(fresh, "hf", tmp_path / "hf")
    assert files_under(tmp_path / "hf") == set(card.written) and card.document.name == "README.md"
    assert card.factsheet_sha256 == sha256_bytes(fresh.read_bytes())
    with pytest.raises(ValueError, match="'mlflow' is not a valid ExportFormat"):
        export_factsheet(fresh, "mlflow", tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_probe_load_writes_the_document_it_names(mock_url, tmp_path):
    out = tmp_path / "probe"
    result = probe_load(
        base_url=mock_url, model="mock-model", output=out, concurrency=2, num_prompts=8, input_len=8,
        output_len=8, goodput=["e2el:5000"],
    )  # fmt: skip
    assert files_under(out) == set(result.written) == {result.result_json, result.records}
    doc = json.loads(result.result_json.read_text())
    assert doc["records_digest"] == sha256_bytes(result.records.read_bytes())
    assert result.point.metrics.completed == 8 and doc["metrics"]["good"] == 8  # E2EL ~55 ms < 5 s
    assert result.exit_code == 0


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        ({"concurrency": 2, "goodput": ["ttft=5"]}, "--goodput"),
        ({"concurrency": 2, "request_rate": 3.0}, "exactly one of --concurrency"),
        ({"concurrency": 2, "metric_percentiles": (50, 100)}, "--metric-percentiles"),
        ({"concurrency": 2, "dataset": "jsonl"}, "workload.path"),
        ({"concurrency": 2, "num_promts": 5}, "num_promts"),
    ],
)
def test_probe_bad_setting_raises_naming_it_and_writes_nothing(tmp_path, settings, field):
    with pytest.raises(InputError, match=re.escape(field)):
        probe_load(base_url="http://127.0.0.1:9", model="m", output=tmp_path / "o", **settings)
    assert not (tmp_path / "o").exists()


def test_every_result_shares_one_base_and_its_exit_code():
    import factsheet.api as api

    results = [getattr(api, n) for n in api.EXPORTS if n.endswith("Result")]
    assert len(results) >= 9 and all(issubclass(r, Result) for r in results)
    with pytest.raises(CheckFailed, match="why"):
        Result(failure="why").raise_for_status()
    assert (Result().exit_code, Result(failure="why").exit_code) == (0, 1)
