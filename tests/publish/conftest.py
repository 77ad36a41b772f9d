"""Fixtures: the mock server with known timing (factsheets are built against it in-process)."""

from __future__ import annotations

import pytest

from probes.targets.mock_server import MockServerConfig, running


@pytest.fixture(scope="session")
def mock_url():
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url:
        yield url
