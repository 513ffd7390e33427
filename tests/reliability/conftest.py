"""Fault tests (docs/reliability.md, checks R1-R12): a real redis-server, real
Celery worker subprocesses (prefork) and, for the Spark ones, real
SparkSessions and a real standalone cluster; never eager mode, never mocks.

Tests marked `chaos` take minutes and run only with --run-chaos (`make chaos`,
see chaos_plugin.py, loaded from tests/conftest.py); the rest run in
`make test`. Every test tells what it did and saw through `observe`.

Slow analyses on demand: a worker started with KB_TEST_STAGE_DELAY=<s> pauses
that long between unpacking and scanning for bundles named slow-*
(tests/slow_worker.py, which tests.celery_harness starts then), so a test can
act mid-analysis.
"""

from __future__ import annotations

import signal

import pytest

# The worker rig of RIG and the cast of CAST_PREFIX: tests/celery_harness.py.
from tests.celery_harness import Pipeline, Worker, cast, pipeline, shared_db  # noqa: F401  (fixtures)
from tests.reliability.util import SEED, tgz_of


@pytest.fixture(scope="module")
def seed_tgz() -> bytes:
    return tgz_of(SEED)


def restart_worker(pipeline: Pipeline, concurrency: int | None = None, **env: str | None) -> Worker:
    """Stop the pipeline's worker (if still running) and start another, with `env` on top
    (a None value removes the variable)."""
    old = pipeline.worker
    if old.proc is not None and old.proc.poll() is None:
        old.stop()
    merged = {**old.env, **env}
    new = Worker(env={k: v for k, v in merged.items() if v is not None}, log=old.log,
                 concurrency=concurrency or old.concurrency)
    new.start()
    pipeline.worker = new
    return new


def kill(pid: int, sig: int = signal.SIGKILL) -> None:
    import os

    os.kill(pid, sig)

