"""The `mock_url` fixture: the load probe's mock server (known timing) on a free local port, for as long as
the fixture's scope. Each folder states the timing its thresholds rest on, in one line:

    mock_url = mock_url_fixture(ttft_ms=20, itl_ms=5)
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from probes.targets.mock_server import MockServerConfig, running


def mock_url_fixture(scope: str = "session", **timing: float) -> Callable[[], Iterator[str]]:
    """A fixture named `mock_url` yielding the base URL of a mock server built from `timing` (any
    MockServerConfig field: ttft_ms, itl_ms, slots, ...; the model is "mock-model")."""
    config = MockServerConfig(**timing)

    @pytest.fixture(scope=scope, name="mock_url")
    def mock_url() -> Iterator[str]:
        with running(config) as url:
            yield url

    return mock_url
