"""Fixtures of the API tests: the mock server (known timing) and one factsheet built through the API."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from api_helpers import endpoint_spec

from factsheet import build_factsheet, generate_keys
from probes.targets.mock_server import MockServerConfig, running


@pytest.fixture(scope="session")
def mock_url():
    with running(MockServerConfig(model="mock-model", ttft_ms=20, itl_ms=5)) as url:
        yield url


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
