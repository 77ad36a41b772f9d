"""The factsheet's conformance section (schema >= 1.10.0): the serving engine found, the model id sent, and
each preflight check's verdict, as the server answered before the first measured request
(probes/targets/conformance.py runs it; docs/servers.md says what each engine offers)."""

from __future__ import annotations

from probes.targets.conformance import Conformance, ConformanceCheck

ConformanceSection = Conformance

__all__ = ["ConformanceCheck", "ConformanceSection"]
