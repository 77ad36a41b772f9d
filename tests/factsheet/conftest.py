from __future__ import annotations

from pathlib import Path

import mock_spec
import pytest

from probes.targets.mock_server import MockServerConfig, running


@pytest.fixture(scope="module")
def mock_url():
    with running(MockServerConfig(model="mock-model", ttft_ms=50, itl_ms=5)) as url:
        yield url


@pytest.fixture(scope="session")
def endpoint_spec():
    """Writes a small endpoint spec for `base_url` into a folder; returns its path."""
    return mock_spec.endpoint_spec


@pytest.fixture(scope="session")
def repo() -> Path:
    return Path(__file__).resolve().parents[2]
