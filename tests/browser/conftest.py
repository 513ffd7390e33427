"""Browser tests: pytest-playwright driving Debian's Chromium (no `playwright
install`), against a Django live server (docs/reliability.md F).

- Chromium comes from apt (scripts/system-deps.sh); CHROMIUM_PATH overrides.
  Without it every test here is skipped with the reason.
- Playwright's sync API runs an event loop in this thread, so Django's
  async-safety check must be off for these tests (and only these).
- Screenshots go to test-artifacts/screenshots/ (gitignored).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-artifacts" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM_PATH") or shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--headless=new", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    skip = pytest.mark.skip(reason="Chromium is missing: run `bash scripts/system-deps.sh` "
                                   "(apt-get install chromium) or set CHROMIUM_PATH")
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            if not CHROMIUM:
                item.add_marker(skip)


def pytest_report_header(config):
    if not CHROMIUM:
        return "chromium: missing (browser tests skip)"
    try:
        version = subprocess.run([CHROMIUM, "--version"], capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        version = "?"
    return f"chromium: {CHROMIUM} ({version})"


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    return {**browser_context_args, "viewport": {"width": 1280, "height": 900}}


@pytest.fixture
def screenshot(page):
    """screenshot("name") saves a full-page PNG of the current page as a test
    artefact; screenshot("name", locator) only that element."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str, locator=None) -> Path:
        path = SCREENSHOTS / f"{name}.png"
        if locator is not None:
            locator.screenshot(path=str(path))
        else:
            page.screenshot(path=str(path), full_page=True)
        return path

    return take


@pytest.fixture
def dialogs(page):
    """Every alert/confirm/prompt the page opens (an XSS payload that ran); dismissed at once."""
    seen: list[str] = []

    def on_dialog(dialog):
        seen.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return seen


def login(page, base_url: str, username: str, password: str) -> None:
    page.goto(base_url + "/accounts/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", password)
    page.click("button[type=submit], input[type=submit]")
    page.wait_for_url(lambda url: "/accounts/login/" not in url)
