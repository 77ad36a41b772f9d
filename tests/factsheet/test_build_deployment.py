"""A build of a vllm-kind target (a user command serving the mock server on a model folder that holds a chat
template and a generation config) records the deployment's facts: the template by the digest of its text and
the text itself, the generation defaults typed with the file's digest, and the chat-sessions workload's system
prompt by its digest; the page shows them and `validate` re-checks the template. An endpoint build says both
facts are not measured, with the reason (tests/workloads/test_build_sessions.py)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factsheet.cli.commands import app
from probes.load.workloads.chat_sessions import scripts
from probes.load.workloads.context import BuildContext
from probes.load.workloads.profiles import ChatSessionsProfile
from tests.support.deployment import TEMPLATE
from tests.support.mock_spec import endpoint_spec_dict
from tests.support.spec_builder import DELETE, write_spec

pytestmark = pytest.mark.system

runner = CliRunner()
SERVE = (
    "import sys; from probes.targets.mock_server import MockServerConfig, serve_forever; "
    "serve_forever(MockServerConfig(ttft_ms=5, itl_ms=1), port=int(sys.argv[1]))"
)
PROFILE = {
    "profile": "chat-sessions",
    "system_prompt_len": 12,
    "turns_min": 2,
    "turns_max": 2,
    "user_turn_len": 6,
}


def _spec(folder: Path) -> dict:
    """A vllm-kind target: the user command serves the mock server on the port the tool picks."""
    target = {
        "kind": "vllm",
        "model": {"path": str(folder)},
        "served_model_name": "mock-model",
        "command": [sys.executable, "-c", SERVE, "{port}"],
        "stop_grace_s": 2,
    }
    load = {
        "endpoint": "chat",
        "input_len": DELETE,
        "output_len": 4,
        "slo": {"ttft_ms": 500, "tpot_ms": DELETE},
        "workload": PROFILE,
    }
    spec = endpoint_spec_dict("unused", ((2, 8),), {"name": "deployment-facts", "load": load})
    return {**spec, "target": target}


def sha(data: str | bytes) -> str:
    return "sha256:" + hashlib.sha256(data.encode() if isinstance(data, str) else data).hexdigest()


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deploy")
    folder = tmp / "model"
    folder.mkdir()
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": TEMPLATE}))
    (folder / "generation_config.json").write_text(
        json.dumps({"temperature": 0.6, "top_p": 0.9, "eos_token_id": 2})
    )
    spec = tmp / "model.yaml"
    write_spec(spec, _spec(folder))
    result = runner.invoke(app, ["build", str(spec), "-o", str(tmp / "out")])
    assert result.exit_code == 0, result.output
    return tmp / "out", folder


def test_the_served_template_and_generation_defaults_are_recorded(built):
    out, folder = built
    facts = json.loads((out / "factsheet.json").read_text())["system"]["deployment"]
    t = facts["chat_template"]
    assert (t["sha256"], t["text"], t["source"]) == (
        sha(TEMPLATE),
        TEMPLATE,
        "tokenizer_config.json: chat_template",
    )
    g = facts["generation_config"]
    assert g["sha256"] == sha((folder / "generation_config.json").read_bytes())
    assert (g["fields"]["temperature"], g["fields"]["top_p"], g["other_keys"]) == (0.6, 0.9, ["eos_token_id"])


def test_the_system_prompt_sent_is_recorded_by_its_digest(built):
    out, _ = built
    result = json.loads((out / "factsheet.json").read_text())["load"]["points"][0]["result"]
    workload, point = result["workload"], result["point"]  # the script again, from the seed the sheet states
    ctx = BuildContext(point["num_requests"], point["seed"], point["input_len"], point["output_len"])
    sessions = scripts(ChatSessionsProfile(**PROFILE), ctx)
    system = sessions[0].system
    assert system and all(s.system == system for s in sessions)
    assert workload["system_prompts"] == [
        {"sha256": sha(system), "size_bytes": len(system.encode()), "sessions": len(sessions)}
    ]


def test_the_page_shows_them_and_validate_rechecks_the_template(built):
    out, _ = built
    html = (out / "factsheet.html").read_text()
    assert "<h3>Deployment</h3>" in html and sha(TEMPLATE) in html and "temperature=0.6" in html
    result = runner.invoke(app, ["validate", str(out / "factsheet.json")])
    assert result.exit_code == 0, result.output
    assert "chat template: the kept text hashes to its stated sha256" in result.output
