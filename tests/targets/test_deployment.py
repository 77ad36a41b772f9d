"""The deployment's facts as read from a served model folder (probes/targets/deployment.py): the chat template
the engine applies (by digest; the text up to 16 KiB), the generation config's sampling defaults, typed, and
for an endpoint target neither (not measured, with the reason). Known truth: hashlib over the very text."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from probes.core.errors import InputError
from probes.core.measurement import NotMeasured
from probes.targets.deployment import (
    TEXT_KEPT_MAX_BYTES,
    ChatTemplate,
    GenerationDefaults,
    endpoint_facts,
    served_facts,
)

TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
GENERATION = {"temperature": 0.6, "top_p": 0.95, "top_k": 20, "bos_token_id": 1, "eos_token_id": [2, 3]}


def sha(text: str | bytes) -> str:
    return "sha256:" + hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A model folder as a Hugging Face download has it: the template inside tokenizer_config.json."""
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"chat_template": TEMPLATE, "eos_token": "x"}))
    (tmp_path / "generation_config.json").write_text(json.dumps(GENERATION, indent=2))
    return tmp_path


def test_the_template_in_tokenizer_config_is_recorded_by_the_digest_of_its_text(folder):
    facts = served_facts(folder, ["vllm", "serve", str(folder)])
    t = facts.chat_template
    assert isinstance(t, ChatTemplate)
    assert t.sha256 == sha(TEMPLATE) and t.size_bytes == len(TEMPLATE.encode()) and t.text == TEMPLATE
    assert t.source == "tokenizer_config.json: chat_template"


def test_the_generation_config_is_recorded_typed_with_the_digest_of_the_whole_file(folder):
    g = served_facts(folder, []).generation_config
    assert isinstance(g, GenerationDefaults)
    assert g.sha256 == sha((folder / "generation_config.json").read_bytes())
    assert (g.fields.temperature, g.fields.top_p, g.fields.top_k) == (0.6, 0.95, 20)
    assert g.fields.repetition_penalty is None and g.fields.max_new_tokens is None  # not set: not invented
    assert g.other_keys == ["bos_token_id", "eos_token_id"] and g.overrides is None


def test_chat_template_jinja_wins_over_tokenizer_config_and_crlf_reads_as_the_engine_reads_it(folder):
    served = "{{ messages[0].content }}\n"
    (folder / "chat_template.jinja").write_bytes(served.replace("\n", "\r\n").encode())
    t = served_facts(folder, []).chat_template
    assert t.source == "chat_template.jinja" and t.sha256 == sha(served)


def test_named_templates_serve_the_default_and_name_the_others_by_digest(folder):
    named = [{"name": "default", "template": TEMPLATE}, {"name": "tool_use", "template": "{{ tools }}"}]
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": named}))
    t = served_facts(folder, []).chat_template
    assert t.sha256 == sha(TEMPLATE) and t.named == {"tool_use": sha("{{ tools }}")}


def test_the_flags_the_server_is_started_with_win(folder, tmp_path_factory):
    other = tmp_path_factory.mktemp("t") / "mine.jinja"
    other.write_text("{{ 'x' }}")
    cmd = ["vllm", "serve", str(folder), f"--chat-template={other}", "--generation-config", "vllm",
           "--override-generation-config", '{"temperature": 0.0, "seed": 1}']  # fmt: skip
    facts = served_facts(folder, cmd)
    assert (
        facts.chat_template.sha256 == sha("{{ 'x' }}")
        and facts.chat_template.source == "--chat-template mine.jinja"
    )
    g = facts.generation_config
    assert g.sha256 is None and g.source.startswith("none: --generation-config vllm")
    assert g.overrides.temperature == 0.0 and g.fields.temperature is None
    inline = served_facts(folder, ["--chat-template", "{{ messages }}"]).chat_template
    assert inline.source == "--chat-template (inline)" and inline.sha256 == sha("{{ messages }}")


def test_a_long_template_is_named_by_its_digest_alone(folder):
    long = "{# pad #}" * (TEXT_KEPT_MAX_BYTES // 9 + 1)
    (folder / "chat_template.jinja").write_text(long)
    t = served_facts(folder, []).chat_template
    assert t.text is None and t.size_bytes == len(long) > TEXT_KEPT_MAX_BYTES and t.sha256 == sha(long)


def test_a_folder_without_template_or_generation_config_says_so(tmp_path):
    facts = served_facts(tmp_path, [])
    assert isinstance(facts.chat_template, NotMeasured) and "no chat template" in facts.chat_template.reason
    g = facts.generation_config
    assert g.sha256 is None and g.source.startswith("none: no generation_config.json")


def test_an_endpoint_target_claims_neither():
    facts = endpoint_facts()
    for fact in (facts.chat_template, facts.generation_config):
        assert isinstance(fact, NotMeasured) and "endpoint target" in fact.reason


@pytest.mark.parametrize(
    ("name", "content", "cmd", "named"),
    [
        ("tokenizer_config.json", "{not json", [], "tokenizer config tokenizer_config.json"),
        ("tokenizer_config.json", '{"chat_template": 7}', [], "tokenizer_config.json: chat_template"),
        ("generation_config.json", '{"temperature": "hot"}', [], "generation_config.json: temperature"),
        ("generation_config.json", "[1]", [], "generation_config.json: not a JSON object"),
        ("x", "", ["--override-generation-config", "{"], "--override-generation-config"),
    ],
)
def test_a_malformed_file_or_flag_is_one_line_of_bad_input(tmp_path, name, content, cmd, named):
    (tmp_path / name).write_text(content)
    with pytest.raises(InputError) as err:
        served_facts(tmp_path, cmd)
    message = str(err.value)
    assert named in message and "\n" not in message and str(tmp_path) not in message


def test_a_bare_template_name_is_one_the_engine_ships_and_not_measured(folder):
    t = served_facts(folder, ["--chat-template", "template_chatml.jinja"]).chat_template
    assert isinstance(t, NotMeasured) and "built into the engine" in t.reason


def test_a_multimodal_processors_template_wins_over_the_tokenizers(folder):
    (folder / "chat_template.json").write_text(json.dumps({"chat_template": "{{ images }}"}))
    assert served_facts(folder, []).chat_template.sha256 == sha(TEMPLATE)  # no processor: the tokenizer's
    (folder / "preprocessor_config.json").write_text("{}")
    t = served_facts(folder, []).chat_template
    assert t.source == "chat_template.json: chat_template" and t.sha256 == sha("{{ images }}")
