"""Imports point one way: the core (build, probes, tuner) never imports the screen or a test server."""

import subprocess
import sys

CORE = ["factsheet.build", "probes.targets", "probes.load.runner", "tuner"]
NOT_CORE = ["factsheet.progress", "factsheet.cli", "probes.targets.mock_server", "typer", "aiohttp"]


def test_core_modules_import_neither_the_screen_nor_the_mock_server():
    code = (
        f"import sys\nfor m in {CORE!r}: __import__(m)\n"
        f"print(sorted(m for m in {NOT_CORE!r} if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
