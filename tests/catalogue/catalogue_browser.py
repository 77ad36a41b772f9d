"""Debian's chromium, driven by Playwright for Python (its own browser downloads are not used)."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Iterator

import pytest
from playwright import sync_api

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextlib.contextmanager
def chromium() -> Iterator:
    if shutil.which(CHROMIUM) is None:
        pytest.fail(f"{CHROMIUM} missing: `make test` installs Debian's chromium (make test-system)")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()
