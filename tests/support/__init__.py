"""What several test folders share, each with one import path (`from tests.support.mock_spec import ...`):
the mock server fixture, the small endpoint spec and the spec builder (dicts with overrides), gated builds,
local HTTP fakes, the fake RAPL counter, the fake vLLM process tree, the known-truth campaign measurers,
HumanEval+'s location and /proc readers."""
