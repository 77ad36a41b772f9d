from __future__ import annotations

from pathlib import Path

import pytest

from tests.support import mock_spec
from tests.support.mock_server import mock_url_fixture

mock_url = mock_url_fixture("module", ttft_ms=50, itl_ms=5)


@pytest.fixture(scope="session")
def endpoint_spec():
    """Writes a small endpoint spec for `base_url` into a folder; returns its path."""
    return mock_spec.endpoint_spec


@pytest.fixture(scope="session")
def repo() -> Path:
    return Path(__file__).resolve().parents[2]
