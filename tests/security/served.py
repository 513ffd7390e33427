"""`make serve` for tests: scripts/serve.sh (migrate, collectstatic, gunicorn with
kb/gunicorn_conf.py) on a free 127.0.0.1 port, in its own process group and var/ folder,
plus a small cookie-keeping HTTP client for form posts (CSRF token included)."""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from tests.celery_harness import _stop_group, free_port, wait_for
from tests.helpers import ROOT

SERVE_READY_SECONDS = 180


@dataclass
class Served:
    proc: subprocess.Popen
    port: int
    env: dict[str, str]
    log: Path

    def manage(self, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=self.env, capture_output=True,
                              text=True, timeout=120)

    def workers(self) -> list[int]:
        """The gunicorn master's live children (its workers)."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        return [int(pid) for pid in children]

    def threads(self) -> int:
        """Threads of the master and its workers together."""
        total = 0
        for pid in [self.proc.pid, *self.workers()]:
            try:
                status = Path(f"/proc/{pid}/status").read_text()
            except FileNotFoundError:
                continue
            total += int(re.search(r"^Threads:\s+(\d+)", status, re.M).group(1))
        return total

    def stop(self) -> None:
        _stop_group(self.proc, signal.SIGTERM, 15)


def _answers(port: int) -> bool:
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
        conn.request("GET", "/accounts/login/")
        return conn.getresponse().status == 200
    except OSError:
        return False


def serve(tmp_path: Path, **extra_env: str) -> Served:
    """Start scripts/serve.sh (exec's gunicorn, so the Popen is the master) and wait until it answers."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KB_", "DATABASE_URL"))}
    env.update({"KB_VAR_DIR": str(tmp_path), "KB_BIND": f"127.0.0.1:{port}", "PY": sys.executable,
                "DJANGO_SETTINGS_MODULE": "kb.settings", **extra_env})
    log = tmp_path / "gunicorn.log"
    proc = subprocess.Popen(["bash", "scripts/serve.sh"], cwd=ROOT, env=env, stdout=log.open("w"),
                            stderr=subprocess.STDOUT, start_new_session=True)
    served = Served(proc=proc, port=port, env=env, log=log)
    try:
        wait_for(lambda: proc.poll() is not None or _answers(port), SERVE_READY_SECONDS, 0.5, "gunicorn to answer")
        assert proc.poll() is None, log.read_text()[-2000:]
    except BaseException:
        served.stop()
        raise
    return served


@dataclass
class FormClient:
    """Just enough of a browser for form posts: keeps cookies, sends the CSRF token."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, method: str, path: str, form: dict[str, str] | None = None) -> tuple[int, dict, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if form is not None:
            form = {"csrfmiddlewaretoken": self.cookies.get("csrftoken", ""), **form}
            body = urllib.parse.urlencode(form)
            headers.update({"Content-Type": "application/x-www-form-urlencoded",
                            "Referer": f"http://127.0.0.1:{self.port}{path}"})
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        for value in response.headers.get_all("Set-Cookie") or []:
            name, _, rest = value.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        text = response.read().decode("utf-8", "replace")
        conn.close()
        return response.status, dict(response.headers), text

    def login(self, username: str, password: str, path: str = "/accounts/login/") -> tuple[int, dict, str]:
        self.cookies.pop("sessionid", None)
        if "csrftoken" not in self.cookies:
            self.request("GET", path)
        return self.request("POST", path, {"username": username, "password": password})
