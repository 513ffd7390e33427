"""The chaos tier: fault-injection tests too slow for `make test`.

    make test    pytest                          tests marked `chaos` are skipped
    make chaos   pytest -m chaos --run-chaos     only they run

The option has to be known before pytest collects anything, and pytest only
lets the conftest files it loads at start-up (tests/conftest.py, not
tests/reliability/conftest.py when no path is given) add options, so
tests/conftest.py loads this module as a plugin.

Every fault test reports what it did and what it saw through the `observe`
fixture: the lines are printed as they happen (visible with -s) and again in
a "what the fault tests did and saw" section at the end of the run.
"""

from __future__ import annotations

import time

import pytest

_LINES = pytest.StashKey[list]()


def pytest_addoption(parser):
    parser.addoption("--run-chaos", action="store_true", default=False,
                     help="run the long fault-injection tests marked `chaos` (make chaos)")


def pytest_configure(config):
    config.stash[_LINES] = []


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
    lines = request.config.stash[_LINES]
    name = request.node.name
    started = time.monotonic()

    def say(message: str) -> None:
        line = f"[{name}] +{time.monotonic() - started:5.1f}s {message}"
        lines.append(line)
        print(line, flush=True)

    return say


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    lines = config.stash.get(_LINES, [])
    if lines:
        terminalreporter.section("what the fault tests did and saw")
        for line in lines:
            terminalreporter.write_line(line)
