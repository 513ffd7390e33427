"""The app on a real PostgreSQL server (DATABASE_URL), where the machine has one.

Runs migrate and sync_runbooks in a subprocess against a fresh database, so
the rest of the suite keeps its SQLite database.
"""

import os
import subprocess
import sys
import uuid

import pytest

from tests.helpers import ROOT

PG = os.environ.get("KB_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432")


def _psql_ok() -> bool:
    try:
        import psycopg

        with psycopg.connect(PG + "/postgres", connect_timeout=2):
            return True
    except Exception:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not _psql_ok(), reason="no PostgreSQL server answers at " + PG)
def test_it_migrates_and_loads_the_runbooks_on_postgresql(tmp_path):
    import psycopg

    name = f"kb_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(PG + "/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        env = {**os.environ, "DATABASE_URL": f"{PG}/{name}", "KB_VAR_DIR": str(tmp_path)}
        run = lambda *args: subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env,
                                           capture_output=True, text=True, timeout=300)
        migrate = run("migrate", "--noinput")
        assert migrate.returncode == 0, migrate.stderr
        first, second = run("sync_runbooks"), run("sync_runbooks")
        assert first.returncode == 0 and second.returncode == 0, first.stderr + second.stderr
        count = run("shell", "-c", "from kb.models import Runbook; print(Runbook.objects.count())")
        assert int(count.stdout.strip().splitlines()[-1]) >= 30
        assert "unchanged" in second.stdout
    finally:
        with psycopg.connect(PG + "/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
