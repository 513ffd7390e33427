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

from tests.celery_harness import Pipeline, Worker, make_cast, shared_db, start_pipeline, sync_real_runbooks  # noqa: F401
from tests.reliability.util import SEED, tgz_of


def open_rig(tmp_path_factory, shared_db, **kwargs):
    """tests.celery_harness.start_pipeline, whose worker a test may replace
    (restart_worker); every worker started is stopped at the end."""
    gen = start_pipeline(tmp_path_factory, shared_db, **kwargs)
    pipeline = next(gen)
    try:
        yield pipeline
    finally:
        pipeline.worker.stop()
        gen.close()


@pytest.fixture(scope="module")
def pipeline(request, tmp_path_factory, shared_db):  # noqa: F811
    """The module's worker rig: Redis and a Celery worker as the module's RIG says
    ({"engine": "local"|"spark", "concurrency": n, "env": {...}}), stopped at its end."""
    rig = getattr(request.module, "RIG", {})
    yield from open_rig(tmp_path_factory, shared_db, engine=rig.get("engine", "local"),
                        concurrency=rig.get("concurrency", 2), extra_env=rig.get("env"))


@pytest.fixture(scope="module")
def cast(request, shared_db):  # noqa: F811
    """alice (team Ops) and mallory (team Other) with tokens, named after the module's CAST_PREFIX;
    the real runbooks loaded."""
    sync_real_runbooks()
    return make_cast(request.module.CAST_PREFIX)


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

