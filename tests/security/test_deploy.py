"""S5: production settings come from environment variables and pass Django's
deployment checklist (`manage.py check --deploy --fail-level WARNING`), run in
a subprocess with only the environment a production deployment would set."""

from __future__ import annotations

import os
import secrets
import signal
import string
import subprocess
import sys

import pytest

from tests.helpers import ROOT

pytestmark = pytest.mark.timeout(180)


def _production_env(tmp_path, **extra) -> dict[str, str]:
    key = "".join(secrets.choice(string.ascii_letters + string.digits + "!@#%^&*(-_=+)") for _ in range(50))
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("DJANGO_", "KB_", "SECRET_KEY", "DEBUG", "ALLOWED_HOSTS", "DATABASE_URL"))}
    env.update({"DEBUG": "false", "SECRET_KEY": key, "KB_SECURE": "true",
                "ALLOWED_HOSTS": "kb.example.com", "KB_VAR_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)})
    env.update(extra)
    return env


def _manage(env, *args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)


def test_s5_check_deploy_is_clean_with_production_settings(tmp_path, observe):
    out = _manage(_production_env(tmp_path), "check", "--deploy", "--fail-level", "WARNING")
    observe(f"manage.py check --deploy --fail-level WARNING (production env) -> exit {out.returncode}: "
            f"{(out.stdout + out.stderr).strip()[:200]}")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout


def test_s5_the_checklist_is_not_clean_without_the_production_environment(tmp_path):
    """The same command without KB_SECURE and with DEBUG on fails: the settings really come
    from the environment (no production value is hard-coded)."""
    env = _production_env(tmp_path, DEBUG="true", KB_SECURE="false")
    out = _manage(env, "check", "--deploy", "--fail-level", "WARNING")
    assert out.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016", "security.W018"):
        assert warning in out.stderr + out.stdout, warning


@pytest.mark.parametrize("entry", [
    ["manage.py", "check"],
    ["-c", "import kb.wsgi"],                         # what gunicorn loads
    ["-m", "celery", "-A", "kb", "report"],           # what the worker loads
])
def test_s5_a_missing_secret_key_is_refused_in_production(tmp_path, entry):
    """DEBUG off and no SECRET_KEY: web, worker and manage.py refuse to start, always (no opt-in
    variable; the old KB_REQUIRE_SECRET_KEY=false no longer lets it through), with one line."""
    env = _production_env(tmp_path, KB_REQUIRE_SECRET_KEY="false", DJANGO_SETTINGS_MODULE="kb.settings")
    del env["SECRET_KEY"]
    out = subprocess.run([sys.executable, *entry], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert out.stderr.strip().splitlines() == [
        "kb: SECRET_KEY is not set: set SECRET_KEY to a long random string "
        "(python -c 'import secrets; print(secrets.token_urlsafe(50))'), or DEBUG=true for development"], out.stderr


def test_s5_debug_and_the_secret_come_from_the_environment(tmp_path):
    code = "from django.conf import settings as s; print(s.DEBUG, s.SECRET_KEY == __import__('os').environ['SECRET_KEY'], s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, s.ALLOWED_HOSTS)"
    env = _production_env(tmp_path, DJANGO_SETTINGS_MODULE="kb.settings")
    out = subprocess.run([sys.executable, "-c", "import django; django.setup(); " + code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.stdout.split() == ["False", "True", "True", "True", "True", "['kb.example.com']"], out.stderr


def test_s5_security_headers_on_every_response(client, alice, db):
    client.force_login(alice)
    for url in ("/", "/incidents/", "/accounts/login/", "/api/v1/openapi.json"):
        response = client.get(url)
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert response["X-Frame-Options"] == "DENY", url
        assert "script-src 'self'" in response["Content-Security-Policy"], url
        assert response["Referrer-Policy"] == "same-origin", url


@pytest.mark.slow
def test_make_runs_development_server_names_no_python_version(tmp_path):
    """`make run` serves with runserver, whose wsgiref handler would send
    `Server: WSGIServer/0.2 CPython/3.x.y` (issue 17, 7.); kb's own header replaces it."""
    import http.client

    from tests.celery_harness import _stop_group, free_port, wait_for

    port = free_port()
    env = {**os.environ, "KB_VAR_DIR": str(tmp_path)}
    proc = subprocess.Popen([sys.executable, "manage.py", "runserver", f"127.0.0.1:{port}", "--noreload"], cwd=ROOT,
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    def server_header():
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/accounts/login/")
            return conn.getresponse().getheader("Server")
        except OSError:
            return None

    try:
        header = wait_for(server_header, 90, 0.5, "runserver to answer")
    finally:
        _stop_group(proc, signal.SIGTERM, 10)
    assert header == "kb"


def test_the_analyze_command_needs_no_secret_key(tmp_path):
    """The CLI contract: `manage.py analyze` works with no Redis, database or web app, so also
    with no SECRET_KEY (it signs nothing); the web app and the worker still refuse."""
    env = _production_env(tmp_path, DJANGO_SETTINGS_MODULE="kb.settings")
    del env["SECRET_KEY"]
    seed = ROOT / "tests" / "fixtures" / "seed-bundles" / "001-flink-checkpoint-hdfs-not-enough-replicas"
    out = _manage(env, "analyze", str(seed), "--format", "json")
    assert out.returncode == 0, out.stderr
    assert '"hdfs-close-not-enough-replicas"' in out.stdout
