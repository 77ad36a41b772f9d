from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.attest.attest_helpers import endpoint_spec, run_cli
from tests.support.mock_server import mock_url_fixture

mock_url = mock_url_fixture(ttft_ms=20, itl_ms=2)


@pytest.fixture(scope="session")
def keys(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("keys")
    result = run_cli("keygen", "-o", folder)
    assert result.returncode == 0, result.stderr
    return folder / "factsheet-signing.key", folder / "factsheet-signing.pub"


@pytest.fixture(scope="session")
def built(tmp_path_factory, mock_url) -> Path:
    """A real factsheet (JSON, HTML, PDF, raw records) built by the CLI against the mock server, unsigned."""
    folder = tmp_path_factory.mktemp("built")
    spec = endpoint_spec(folder, mock_url)
    result = run_cli("build", spec, "-o", folder / "out")
    assert result.returncode == 0, result.stderr
    return folder / "out"


@pytest.fixture
def fresh(built, tmp_path) -> Path:
    """A private copy of the built factsheet's folder, to sign and tamper with."""
    out = tmp_path / "sheet"
    shutil.copytree(built, out)
    return out
