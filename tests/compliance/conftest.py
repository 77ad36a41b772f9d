"""Fixtures: the mock server and factsheets built against it (see compliance_builds for the timing)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.support.compliance_builds import build, spec_text
from tests.support.mock_server import mock_url_fixture

mock_url = mock_url_fixture(ttft_ms=20, itl_ms=5)


@pytest.fixture(scope="session")
def sheet_dir(tmp_path_factory, mock_url) -> Path:
    """One factsheet with a point backed by enough samples for a p99 claim (480 ≥ 459, MLPerf early
    stopping at 99 %) and a point with far too few (8)."""
    points = """\
        - {concurrency: 16, num_requests: 480}
        - {concurrency: 1, num_requests: 8}
        """
    result, out = build(tmp_path_factory.mktemp("sheet"), spec_text(mock_url, points))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture
def policy_file(tmp_path):
    def write(body: str, name: str = "policy.yaml") -> Path:
        path = tmp_path / name
        path.write_text(textwrap.dedent(body))
        return path

    return write
