"""The author's governance statements travel into every export as declared: SPDX 3 `limitation`,
`metricDecisionThreshold` and `standardCompliance`; CycloneDX modelCard considerations; the HF card's text and
`base_model`. Without a governance section the exports state none of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from factsheet.document.governance import Governance
from factsheet.export import cyclonedx, hf, spdx
from factsheet.export.readout import source
from tests.support import sheet_fixture as fx

GOVERNANCE = Governance.model_validate({
    "release_date": "2024-11-01",
    "base_model": "Mock-7B-base",
    "adapters": ["lora-chat-v2"],
    "modalities": [{"modality": "text", "direction": "input", "max_size": 2048, "unit": "tokens"}],
    "distribution_channels": ["OpenAI-compatible endpoint"],
    "acceptable_use_policy": "internal assistants only",
    "known_limitations": ["English only", "no safety tuning"],
    "standards": ["ISO/IEC 42001:2023"],
    "decision_thresholds": [{"figure": "capacity_at_slo", "threshold": ">= 16 users"}],
})  # fmt: skip


def _source(folder: Path, governance: Governance | None):
    sheet = fx.build_sheet(fx.load_points()).model_copy(update={"governance": governance})
    path = folder / "factsheet.json"
    path.write_bytes(sheet.model_dump_json(indent=2).encode())
    return source(path, sheet)


@pytest.fixture(scope="module")
def declared(tmp_path_factory):
    return _source(tmp_path_factory.mktemp("gov"), GOVERNANCE)


@pytest.fixture(scope="module")
def undeclared(tmp_path_factory):
    return _source(tmp_path_factory.mktemp("nogov"), None)


def _package(src):
    objects = spdx.from_jsonld(spdx.to_jsonld(spdx.document(src)))  # as a reader gets it back
    return next(o for o in objects.foreach() if o.__class__.__name__ == "ai_AIPackage")


def test_spdx_carries_limitation_thresholds_and_standards(declared, undeclared):
    package = _package(declared)
    out_of_scope = declared.sheet.identity.out_of_scope
    assert package.ai_limitation == "; ".join(
        filter(None, [out_of_scope, "English only", "no safety tuning"])
    )
    assert [(e.key, e.value) for e in package.ai_metricDecisionThreshold] == [
        ("capacity_at_slo", ">= 16 users")
    ]
    assert list(package.ai_standardCompliance) == ["ISO/IEC 42001:2023"]
    bare = _package(undeclared)
    assert not list(bare.ai_metricDecisionThreshold) and not list(bare.ai_standardCompliance)


def test_cyclonedx_model_card_considerations_carry_the_declared_limitations(declared, undeclared):
    bom = cyclonedx.bom(declared)
    cyclonedx.validate(bom)  # the 1.6 schema still holds with the added considerations
    card = next(c for c in bom["components"] if c["type"] == "machine-learning-model")["modelCard"]
    limits = card["considerations"]["technicalLimitations"]
    assert limits[-2:] == ["English only", "no safety tuning"]
    assert (
        card["considerations"]["ethicalConsiderations"][0]["mitigationStrategy"] == "internal assistants only"
    )
    bare = next(c for c in cyclonedx.bom(undeclared)["components"] if c["type"] == "machine-learning-model")
    assert "ethicalConsiderations" not in bare["modelCard"].get("considerations", {})


def test_hf_card_states_the_declarations_as_declared(declared, undeclared):
    card = hf.model_card(declared)
    front, body = card.split("---\n")[1], card.split("---\n", 2)[2]
    assert "base_model: Mock-7B-base" in front
    assert "## Declared by the author (not measured)" in body
    assert (
        "- Decision thresholds: capacity\\_at\\_slo: \\>= 16 users" in body
    )  # markdown escaped, as all text
    assert "- Modalities: text input up to 2048 tokens" in body
    assert "Declared by the author" not in hf.model_card(undeclared)


def test_the_spec_section_is_validated_in_one_line(tmp_path):
    """A decision threshold naming no headline figure, or an unknown field, is refused naming the field."""
    from factsheet.spec.build import load_spec
    from probes.core.errors import InputError
    from tests.support.mock_spec import endpoint_spec

    for governance, field in (
        ({"decision_thresholds": [{"figure": "p42", "threshold": "x"}]}, "decision_thresholds"),
        ({"release_date": "yesterday"}, "release_date"),
        ({"licence_text": "x"}, "licence_text"),
    ):
        spec = endpoint_spec(tmp_path, "http://127.0.0.1:9", overrides={"governance": governance})
        with pytest.raises(InputError) as err:
            load_spec(spec)
        assert field in str(err.value) and "\n" not in str(err.value).strip(), str(err.value)
    ok = endpoint_spec(
        tmp_path, "http://127.0.0.1:9", overrides={"governance": {"standards": ["ISO/IEC 42001"]}}
    )
    assert load_spec(ok)[0].governance.standards == ["ISO/IEC 42001"]
