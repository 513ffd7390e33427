"""`make run PORT=...` (scripts/run.sh, README "First run"): the web app, the login
URL it prints and SITE_URL follow the port; everything it started stops with it.

The run is real: migrate and sync into a temporary KB_VAR_DIR, its own redis-server
on a free port (run.sh starts one when none answers at REDIS_URL), a Celery
worker, the development server; the test fetches the login page there."""

from __future__ import annotations

import os
import queue
import re
import signal
import subprocess
import threading
import urllib.request
from pathlib import Path

import pytest

from tests.celery_harness import _stop_group, free_port, wait_for
from tests.helpers import ROOT

START_TIMEOUT = 180  # migrate + sync of the whole catalog on a busy 2-core machine


def _run_env(tmp_path, redis_port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "SITE_URL", "SECRET_KEY", "PORT")}
    env.update({
        "KB_VAR_DIR": str(tmp_path / "var"), "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "KB_ENGINE": "local", "DJANGO_SETTINGS_MODULE": "kb.settings",
    })
    return env


def _reader(proc: subprocess.Popen, lines: queue.Queue) -> None:
    for line in proc.stdout:
        lines.put(line.rstrip("\n"))


def _started_by(tmp_path) -> list[int]:
    """The processes of this run: their command line names its KB_VAR_DIR (the
    worker's and redis-server's log files are in it)."""
    pids = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if str(tmp_path).encode() in cmdline.read_bytes():
                pids.append(int(cmdline.parent.name))
        except OSError:
            continue
    return pids


def _redis_pid(port: int) -> int:
    import redis

    return int(redis.Redis(port=port, socket_connect_timeout=0.5).info("server")["process_id"])


def _redis_answers(port: int) -> bool:
    import redis

    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=0.5).ping())
    except redis.exceptions.RedisError:
        return False


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_make_run_port_moves_the_web_port_and_the_printed_login_url(tmp_path):
    port, redis_port = free_port(), free_port()
    # -o install: the shared virtualenv is installed already; make must not pip into it.
    proc = subprocess.Popen(
        ["make", "--no-print-directory", "-o", "install", "run", f"PORT={port}"], cwd=ROOT,
        env=_run_env(tmp_path, redis_port), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    lines: queue.Queue = queue.Queue()
    threading.Thread(target=_reader, args=(proc, lines), daemon=True).start()
    seen: list[str] = []
    try:
        def printed(pattern: str):
            while not lines.empty():
                seen.append(lines.get())
            assert proc.poll() is None, "make run exited:\n" + "\n".join(seen)
            return next((m for line in seen if (m := re.search(pattern, line))), None)

        login = wait_for(lambda: printed(r"Log in at (\S+) as admin / (\S+)"), START_TIMEOUT, 0.2,
                         "the login line")
        assert login.group(1) == f"http://127.0.0.1:{port}"
        wait_for(lambda: printed(rf"open http://127\.0\.0\.1:{port}$"), 30, 0.2, "the open line")

        def login_page():
            printed(r"$^")  # keep collecting output; fail fast if run.sh died
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=2) as r:
                    return r.status, r.read().decode()
            except OSError:
                return None

        status, page = wait_for(login_page, 60, 0.3, f"the login page on port {port}")
        assert status == 200
        assert 'name="username"' in page and 'name="password"' in page
        assert _redis_answers(redis_port)  # run.sh started its own redis-server
        assert (tmp_path / "var" / "kb.sqlite3").exists() and (tmp_path / "var" / "login.txt").exists()
    finally:
        # As Ctrl-C does: signal the whole group (make, run.sh, runserver) and let
        # run.sh's trap stop what it started in its own sessions (redis-server,
        # worker). make exits at once, so no SIGKILL before the trap has run.
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            wait_for(lambda: not _redis_answers(redis_port) and not _started_by(tmp_path), 30, 0.2,
                     "run.sh to stop its redis-server and worker")
        finally:
            _stop_group(proc, signal.SIGKILL, 5)
            # Only if the trap failed: this run's own processes (redis-server retitles
            # itself, so it is found by its port).
            for pid in _started_by(tmp_path) + ([_redis_pid(redis_port)] if _redis_answers(redis_port) else []):
                os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("bad", ["abc", "0", "70000", "80; rm -rf /"])
def test_run_refuses_a_port_that_is_not_a_port_number(tmp_path, bad):
    env = {**_run_env(tmp_path, free_port()), "KB_PORT": bad}

    proc = subprocess.run(["bash", "scripts/run.sh"], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=30)

    assert proc.returncode == 2
    assert proc.stderr.strip() == f"kb: KB_PORT (or PORT) must be a port number from 1 to 65535, not '{bad}'"
    assert not (tmp_path / "var").exists()  # refused before touching anything
