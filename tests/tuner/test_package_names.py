"""`tuner` loads its public names on first use (PEP 562): every name it lists resolves from the module it
names; a command's start loads neither the climb, scipy nor pandas (about 1.5 s of CPU a process)."""

import subprocess
import sys

import pytest

import tuner

pytestmark = pytest.mark.unit


def test_every_listed_name_resolves_from_its_module():
    assert set(tuner.__all__) == set(tuner._WHERE)
    for name in tuner.__all__:
        value = getattr(tuner, name)
        assert getattr(value, "__module__", tuner._WHERE[name]) == tuner._WHERE[name], name


def test_a_commands_start_loads_no_climb_no_scipy_and_no_pandas():
    """What `factsheet` imports before any command runs, and the document model every command reads."""
    heavy = ("tuner.climb", "scipy.stats", "scipy.optimize", "pandas", "sklearn")
    code = (
        "import sys, tuner, factsheet.cli.commands, factsheet.document.schema; "
        f"print(sorted(m for m in sys.modules if m in {heavy!r}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
