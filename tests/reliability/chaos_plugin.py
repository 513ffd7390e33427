"""The chaos tier: fault-injection tests too slow for `make test`.

    make test    pytest                          tests marked `chaos` are skipped
    make chaos   pytest -m chaos --run-chaos     only they run

The option has to be known before pytest collects anything, and pytest only
lets the conftest files it loads at start-up (tests/conftest.py, not
tests/reliability/conftest.py when no path is given) add options, so
tests/conftest.py loads this module as a plugin.

Every fault test reports what it did and what it saw through the `observe`
fixture: the lines are printed as they happen (visible with -s) and again in
a "what the fault tests did and saw" section at the end of the run. They
travel in the test's report (user_properties), so the section also lists the
lines of tests that ran in pytest-xdist workers (make check).
"""

from __future__ import annotations

import time

import pytest

_OBSERVED = "observed"   # the user_properties key of an observe() line


class _Observed:
    """The lines of the run: the teardown report carries every line its test said
    (in this process, or sent back by an xdist worker to the controller)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def pytest_runtest_logreport(self, report):
        if report.when == "teardown":
            self.lines.extend(line for key, line in report.user_properties if key == _OBSERVED)

    def pytest_terminal_summary(self, terminalreporter):
        if self.lines:
            terminalreporter.section("what the fault tests did and saw")
            for line in self.lines:
                terminalreporter.write_line(line)


def pytest_addoption(parser):
    parser.addoption("--run-chaos", action="store_true", default=False,
                     help="run the long fault-injection tests marked `chaos` (make chaos)")


def pytest_configure(config):
    config.pluginmanager.register(_Observed(), "kb-observed-lines")


def pytest_collection_modifyitems(config, items):
    if config.getoption("--run-chaos"):
        return
    skip = pytest.mark.skip(reason="chaos test (minutes): run with --run-chaos, i.e. `make chaos`")
    for item in items:
        if "chaos" in item.keywords:
            item.add_marker(skip)


@pytest.fixture
def observe(request):
    """observe("killed pool child 1234 in stage unpacking"): a line of the run's report."""
    item = request.node
    started = time.monotonic()

    def say(message: str) -> None:
        line = f"[{item.name}] +{time.monotonic() - started:5.1f}s {message}"
        item.user_properties.append((_OBSERVED, line))
        print(line, flush=True)

    return say
