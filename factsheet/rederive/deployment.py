"""`validate`'s check of the deployment facts: a chat template whose text the factsheet
keeps must be the text its digest and size name. Everything else in `system.deployment` is attested only:
the model folder it was read from is not beside the factsheet."""

from __future__ import annotations

from factsheet.document.schema import Factsheet
from factsheet.rederive.compare import Discrepancy
from probes.core.digests import sha256_bytes
from probes.targets.deployment import ChatTemplate

PATH = "system.deployment.chat_template"


def deployment_differences(sheet: Factsheet) -> list[Discrepancy]:
    """The stated template's sha256 and size against its stated text; empty when no text is kept (an older
    document, an endpoint, a template over 16 KiB) or the text is the one its digest names."""
    facts = sheet.system.deployment
    template = facts.chat_template if facts is not None else None
    if not isinstance(template, ChatTemplate) or template.text is None:
        return []
    data = template.text.encode()
    source = f"{PATH}.text, the template text the factsheet keeps"
    recomputed = {"sha256": sha256_bytes(data), "size_bytes": len(data)}
    return [
        Discrepancy(figure=f"{PATH}.{key}", stated=getattr(template, key), recomputed=value, source=source)
        for key, value in recomputed.items()
        if getattr(template, key) != value
    ]
