"""`factsheet validate` re-checks a chat template the factsheet keeps against its stated digest and size: the
untouched sheet passes and says so, one flipped byte of the text is exit 1 naming the field."""

from __future__ import annotations

import hashlib
import json

from typer.testing import CliRunner

from factsheet.cli.commands import app
from factsheet.rederive.coverage import classify
from tests.support.deployment import FIXTURE, TEMPLATE, sheet_with_template

runner = CliRunner()


def test_a_kept_template_matching_its_digest_validates_and_says_so(tmp_path):
    path = sheet_with_template(tmp_path)
    doc = json.loads(path.read_text())
    stated = doc["system"]["deployment"]["chat_template"]
    assert stated["sha256"] == "sha256:" + hashlib.sha256(TEMPLATE.encode()).hexdigest()
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 0, result.output
    assert "chat template: the kept text hashes to its stated sha256" in result.output


def test_a_flipped_byte_in_the_kept_template_is_exit_1_naming_the_field(tmp_path):
    path = sheet_with_template(tmp_path)
    doc = json.loads(path.read_text())
    text = doc["system"]["deployment"]["chat_template"]["text"]
    doc["system"]["deployment"]["chat_template"]["text"] = text.replace(
        "im_start", "im_stArt", 1
    )  # same size
    path.write_text(json.dumps(doc, indent=2))
    result = runner.invoke(app, ["validate", str(path)])
    assert result.exit_code == 1, result.output
    assert "system.deployment.chat_template.sha256" in result.output
    assert "system.deployment.chat_template.size_bytes" not in result.output  # the size still matches


def test_an_older_document_says_it_states_no_template():
    result = runner.invoke(app, ["validate", str(FIXTURE / "factsheet.json")])
    assert result.exit_code == 0, result.output
    assert "chat template: not stated (schema 1.0.0)" in result.output


def test_the_template_digest_is_re_checked_and_the_rest_attested():
    assert classify("system.deployment.chat_template.sha256")[0] == "re-checked"
    assert classify("system.deployment.chat_template.text")[0] == "attested only"
    assert classify("system.deployment.generation_config.fields.temperature")[0] == "attested only"
    assert classify("load.points[].result.workload.system_prompts[].sha256")[0] == "attested only"
