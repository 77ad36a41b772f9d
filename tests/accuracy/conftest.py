import gzip
from pathlib import Path

import pytest

from tests.support.humaneval_path import DATASET

SMALL_TASKS = 10


@pytest.fixture(scope="session")
def cache_root(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("factsheet-cache")


@pytest.fixture(autouse=True)
def _isolated_cache(cache_root, monkeypatch):
    monkeypatch.setenv("FACTSHEET_CACHE_DIR", str(cache_root))
    monkeypatch.delenv("FACTSHEET_HUMANEVAL_PATH", raising=False)


@pytest.fixture(scope="session")
def small_dataset(tmp_path_factory) -> Path:
    """The first tasks of HumanEval+, so expected outputs are computed in seconds."""
    path = tmp_path_factory.mktemp("data") / "small.jsonl"
    with gzip.open(DATASET, "rt") as fh:
        lines = [next(fh) for _ in range(SMALL_TASKS)]
    path.write_text("".join(lines))
    return path


@pytest.fixture(scope="session")
def small_tasks(small_dataset):
    from probes.accuracy.dataset import load_dataset

    return load_dataset(small_dataset)


@pytest.fixture(scope="session")
def small_expected(small_tasks, cache_root):
    from probes.accuracy.harness import expected_outputs
    from probes.accuracy.sandbox import SandboxLimits

    # The cache the tests read these from; set for this computation only (set for good, it sent every later
    # test of the session, in any folder, to this folder's cache).
    with pytest.MonkeyPatch.context() as env:
        env.setenv("FACTSHEET_CACHE_DIR", str(cache_root))
        return expected_outputs(small_tasks, SandboxLimits())
