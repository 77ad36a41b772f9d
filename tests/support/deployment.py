"""A factsheet with deployment facts, for the validate and diff tests: the 1.0.0 fixture (built against the mock
server; model.yaml beside it) copied, with `system.deployment` as `served_facts` reads it from a model folder
holding `template` in its tokenizer_config.json and a generation_config.json."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from probes.targets.deployment import served_facts

FIXTURE = Path(__file__).parents[1] / "factsheet" / "fixtures" / "factsheet-1.0.0"
TEMPLATE = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"


def sheet_with_template(where: Path, template: str = TEMPLATE, temperature: float = 0.6) -> Path:
    """The fixture copied to `where`, its system section stating the facts of a folder serving `template`."""
    folder = where / "model"
    folder.mkdir(parents=True)
    (folder / "tokenizer_config.json").write_text(json.dumps({"chat_template": template}))
    (folder / "generation_config.json").write_text(json.dumps({"temperature": temperature}))
    shutil.copytree(FIXTURE, where / "sheet")
    path = where / "sheet" / "factsheet.json"
    doc = json.loads(path.read_text())
    doc["system"]["deployment"] = served_facts(folder, []).model_dump(mode="json")
    path.write_text(json.dumps(doc, indent=2))
    return path
