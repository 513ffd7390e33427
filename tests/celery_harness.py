"""Real parts for pipeline tests: a redis-server on a free loopback port and a
Celery worker subprocess (`python -m celery -A kb worker --pool prefork`),
sharing one SQLite file with the test process. Never eager mode, never mocks
(docs/reliability.md B1).

How the database is shared: pytest-django's test database is SQLite in
memory, which a subprocess cannot open. `shared_db` (module scope) copies its
schema into a file with SQLite's backup API and points the test process's
connection at that file for the module; the worker gets the same file through
DATABASE_URL. Tests in such a module commit for real (no rollback per test),
so they use the module's own cast (`cast`), not conftest's db-bound users.

The worker rig of a test module is one fixture, `pipeline` (module scope):
Redis and a worker as the module's RIG says, stopped at the module's end;
`cast` is the module's committed users, named after its CAST_PREFIX. Use them
from a test module:

    from tests.celery_harness import cast, pipeline, shared_db  # noqa: F401  (fixtures)

    pytestmark = [pytest.mark.celery]
    RIG = {"engine": "local", "concurrency": 2}
    CAST_PREFIX = "w"

    def test_x(pipeline, cast): ...
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from tests.helpers import ROOT

REDIS_SERVER = "/usr/bin/redis-server"
WORKER_READY_SECONDS = 90


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate: Callable[[], object], timeout: float, interval: float = 0.2, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def _stop_group(proc: subprocess.Popen, sig: int, grace: float) -> None:
    """Signal the process group this harness started (start_new_session), then kill what is left."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)   # pool children, and a JVM if one was started
    except ProcessLookupError:
        pass
    proc.wait(10)


class RedisServer:
    """redis-server without persistence (--save '' --appendonly no) in its own directory."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.port = free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def ping(self) -> bool:
        import redis

        try:
            return bool(redis.Redis(port=self.port, socket_connect_timeout=0.5, socket_timeout=0.5).ping())
        except redis.exceptions.RedisError:
            return False

    def start(self) -> None:
        self.proc = subprocess.Popen(
            [REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
             "--dir", str(self.directory), "--logfile", str(self.directory / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
        wait_for(self.ping, 10, 0.05, "redis-server to answer")

    def stop(self) -> None:
        if self.proc is not None:
            _stop_group(self.proc, signal.SIGTERM, 5)
            self.proc = None

    def queue_length(self, queue: str = "celery") -> int:
        import redis

        return redis.Redis(port=self.port).llen(queue)


@dataclass
class Worker:
    env: dict[str, str]
    log: Path
    concurrency: int = 1
    proc: subprocess.Popen | None = None

    @property
    def module(self) -> str:
        """`celery`, or tests.slow_worker when slow-* bundles should pause (fault tests)."""
        return "tests.slow_worker" if self.env.get("KB_TEST_STAGE_DELAY") else "celery"

    def start(self) -> None:
        offset = self.log.stat().st_size if self.log.exists() else 0
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", self.module, "-A", "kb", "worker", "--pool", "prefork",
             "-c", str(self.concurrency), "--loglevel", "INFO", "-n", f"kbtest-{uuid.uuid4().hex[:6]}@%h",
             "--without-gossip", "--without-mingle"],
            cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
        )
        out.close()

        def ready():
            if self.proc.poll() is not None:
                raise AssertionError(f"the worker exited with {self.proc.returncode}:\n{self.tail()}")
            with open(self.log, "rb") as fh:
                fh.seek(offset)
                return b" ready." in fh.read()

        wait_for(ready, WORKER_READY_SECONDS, 0.2, "the Celery worker to be ready")

    def stop(self) -> None:
        if self.proc is not None:
            _stop_group(self.proc, signal.SIGQUIT, 10)   # cold shutdown: do not wait for tasks
            self.proc = None

    def tail(self, n: int = 60) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no worker log)"


def point_celery_at(url: str) -> None:
    """Make this process's Celery app publish to `url` (drop pooled connections)."""
    from kb.celery import app

    app.conf.broker_url = url
    for owner, attr in ((app.amqp, "_producer_pool"), (app, "_pool")):
        pool = getattr(owner, attr, None)
        if pool is not None:
            try:
                pool.force_close_all()
            except Exception:
                pass
            setattr(owner, attr, None)


@pytest.fixture
def no_broker():
    """Publishing goes to a closed port: fails at once, never reaches someone's Redis."""
    from kb.celery import app

    saved = app.conf.broker_url
    point_celery_at(f"redis://127.0.0.1:{free_port()}/0")
    yield
    point_celery_at(saved)


@pytest.fixture(scope="module")
def shared_db(django_db_blocker, tmp_path_factory):
    """A migrated SQLite file that this process and the worker both use (see the module doc)."""
    from django.core.management import call_command
    from django.db import connections

    path = tmp_path_factory.mktemp("shared-db") / "kb.sqlite3"
    with django_db_blocker.unblock():
        conn = connections["default"]
        if conn.vendor != "sqlite":
            pytest.skip("the worker tests share a SQLite file with the worker")
        # pytest-django's in-memory test database (if set up) stays alive, unused, meanwhile.
        saved_connection, saved_name = conn.connection, conn.settings_dict["NAME"]
        conn.connection = None
        conn.settings_dict["NAME"] = str(path)
        try:
            call_command("migrate", verbosity=0, interactive=False)
            yield path
        finally:
            conn.close()
            conn.settings_dict["NAME"] = saved_name
            conn.connection = saved_connection


@dataclass
class Pipeline:
    redis: RedisServer
    worker: Worker
    db_path: Path
    bundles_dir: Path


def start_pipeline(tmp_path_factory, shared_db: Path, *, engine: str = "local", concurrency: int = 1,
                   extra_env: dict[str, str] | None = None):
    """Redis, settings and a worker for one test module; a generator for a fixture to yield from."""
    from django.test.utils import override_settings

    from kb.celery import app

    base = tmp_path_factory.mktemp(f"pipeline-{engine}")
    bundles = base / "bundles"
    bundles.mkdir()
    redis_server = RedisServer(base)
    redis_server.start()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "kb.settings",
        "PYTHONPATH": str(ROOT),
        "DATABASE_URL": f"sqlite:///{shared_db}",
        "REDIS_URL": redis_server.url,
        "BUNDLES_DIR": str(bundles),
        "KB_VAR_DIR": str(base / "var"),
        "KB_ENGINE": engine,
        "KB_RECONCILE_INTERVAL": "1",
        "KB_REQUEUE_AFTER": "1",
        "KB_LEASE_SECONDS": "15",
        "KB_BUNDLE_MAX_RATIO": "1000",
        "LOG_LEVEL": "INFO",
        **(extra_env or {}),
    }
    pipeline = Pipeline(redis_server, Worker(env=env, log=base / "worker.log", concurrency=concurrency),
                        shared_db, bundles)
    saved_url = app.conf.broker_url
    point_celery_at(redis_server.url)
    overrides = override_settings(BUNDLES_DIR=bundles, KB_ENGINE=engine, KB_REQUEUE_AFTER=1, KB_WAITING_AFTER=2)
    overrides.enable()
    try:
        pipeline.worker.start()
        yield pipeline
    finally:
        pipeline.worker.stop()   # the worker running now: a test may have replaced the first
        redis_server.stop()
        overrides.disable()
        point_celery_at(saved_url)


@pytest.fixture(scope="module")
def pipeline(request, tmp_path_factory, shared_db):
    """The module's worker rig: Redis and a Celery worker (prefork) as the module's RIG says
    ({"engine": "local"|"spark", "concurrency": n, "env": {...}}; local and one child if it
    says nothing), stopped at the module's end."""
    rig = getattr(request.module, "RIG", {})
    yield from start_pipeline(tmp_path_factory, shared_db, engine=rig.get("engine", "local"),
                              concurrency=rig.get("concurrency", 1), extra_env=rig.get("env"))


@pytest.fixture(scope="module")
def cast(request, shared_db):
    """alice (team Ops) and mallory (team Other) with tokens, named after the module's CAST_PREFIX;
    the real runbooks loaded."""
    sync_real_runbooks()
    return make_cast(request.module.CAST_PREFIX)


@dataclass
class Cast:
    """Committed users for the shared database: alice (team Ops), mallory (team Other)."""
    alice: object
    mallory: object
    alice_token: str
    mallory_token: str
    incident: object


def make_cast(prefix: str) -> Cast:
    from django.contrib.auth import get_user_model

    from kb.models import Incident, Membership, Team
    from kb.services.tokens import token_create

    User = get_user_model()
    ops = Team.objects.create(name=f"{prefix} Ops", slug=f"{prefix}-ops")
    other = Team.objects.create(name=f"{prefix} Other", slug=f"{prefix}-other")
    alice = User.objects.create_user(f"{prefix}-alice", password="pw-alice")
    mallory = User.objects.create_user(f"{prefix}-mallory", password="pw-mallory")
    Membership.objects.create(user=alice, team=ops, role=Membership.Role.MEMBER)
    Membership.objects.create(user=mallory, team=other, role=Membership.Role.ADMIN)
    incident = Incident.objects.create(team=ops, title="Checkpoints fail", created_by=alice)
    return Cast(alice, mallory, token_create(user=alice)[1], token_create(user=mallory)[1], incident)


def sync_real_runbooks() -> None:
    from django.core.management import call_command

    call_command("sync_runbooks", stdout=open(os.devnull, "w"))


def wait_for_status(analysis_id: int, statuses: tuple[str, ...], timeout: float, worker: Worker | None = None):
    from kb.models import Analysis

    def reached():
        a = Analysis.objects.get(id=analysis_id)
        return a if a.status in statuses else None

    try:
        return wait_for(reached, timeout, 0.25, f"analysis {analysis_id} to become {'/'.join(statuses)}")
    except AssertionError as exc:
        a = Analysis.objects.get(id=analysis_id)
        detail = f"{exc}; it is {a.status} ({a.stage} {a.progress}%, error={a.error!r}, attempts={a.attempts})"
        if worker is not None:
            detail += "\nworker log:\n" + worker.tail()
        raise AssertionError(detail) from None
