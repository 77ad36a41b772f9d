"""Fixtures: the mock server with known timing (factsheets are built against it in-process)."""

from __future__ import annotations

from tests.support.mock_server import mock_url_fixture

mock_url = mock_url_fixture(ttft_ms=20, itl_ms=5)
