"""The XSS check in a real browser: Debian's Chromium through Playwright
(no `playwright install`), against Django's live server.

Playwright's sync API runs an event loop in the test thread, so Django's
async-safety check is switched off here, for these tests (docs/reliability.md F).
Without Chromium the tests skip with the reason.
"""

from __future__ import annotations

import os
import shutil

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.browser)
            if not CHROMIUM:
                item.add_marker(pytest.mark.skip(reason="Chromium is missing: apt-get install chromium "
                                                        "(scripts/system-deps.sh) or set CHROMIUM_PATH"))


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}
