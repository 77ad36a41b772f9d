"""Fixtures of the API tests: the mock server (known timing) and one factsheet built through the API."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from factsheet import build_factsheet, generate_keys
from tests.api.api_helpers import endpoint_spec
from tests.support.mock_server import mock_url_fixture

mock_url = mock_url_fixture(ttft_ms=20, itl_ms=5)


@pytest.fixture(scope="session")
def built(tmp_path_factory, mock_url):
    """A factsheet built by `build_factsheet` against the mock (the BuildResult)."""
    folder = tmp_path_factory.mktemp("built")
    return build_factsheet(endpoint_spec(folder, mock_url), folder / "out")


@pytest.fixture
def fresh(built, tmp_path) -> Path:
    """A private copy of the built folder (its factsheet.json), to sign, check and tamper with."""
    shutil.copytree(built.output, tmp_path / "sheet")
    return tmp_path / "sheet" / "factsheet.json"


@pytest.fixture(scope="session")
def keys(tmp_path_factory):
    return generate_keys(tmp_path_factory.mktemp("keys"))
