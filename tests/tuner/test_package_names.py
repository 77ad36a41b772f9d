"""`tuner` loads its public names on first use (PEP 562): every name it lists resolves from the module it
names, and importing the package alone loads neither the climb nor scipy (what a `factsheet` command's start
would pay)."""

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


def test_the_document_model_loads_no_climb_and_no_scipy():
    code = (
        "import sys, tuner, factsheet.document.schema; "
        "print(sorted(m for m in sys.modules if m in ('tuner.climb', 'scipy.stats', 'scipy.optimize')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
