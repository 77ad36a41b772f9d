from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from probes.targets.mock_server import MockServerConfig, running


@pytest.fixture(scope="module")
def mock_url():
    with running(MockServerConfig(model="mock-model", ttft_ms=50, itl_ms=5)) as url:
        yield url


def _endpoint_spec(tmp_path: Path, base_url: str, extra: str = "") -> Path:
    spec = tmp_path / "model.yaml"
    spec.write_text(
        textwrap.dedent(f"""\
        spec_version: 1
        name: mock-endpoint
        model: {{name: mock-model}}
        target: {{kind: endpoint, base_url: "{base_url}", model: mock-model}}
        load:
          input_len: 16
          output_len: 8
          slo: {{ttft_ms: 80, tpot_ms: 10}}
          points:
            - {{concurrency: 1, num_requests: 4}}
            - {{concurrency: 4, num_requests: 12}}
        """)
        + extra
    )
    return spec


@pytest.fixture(scope="session")
def endpoint_spec():
    """Writes a small endpoint spec for `base_url` into a folder; returns its path."""
    return _endpoint_spec


@pytest.fixture(scope="session")
def repo() -> Path:
    return Path(__file__).resolve().parents[2]
