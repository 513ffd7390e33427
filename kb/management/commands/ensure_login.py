"""python manage.py ensure_login: a first login for `make run`.

Once: a staff superuser `admin` with a random password kept in var/login.txt
(mode 600), and a team "ops" with admin as its team admin. Every run prints
how to log in. Idempotent; an existing admin's password is never changed.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from kb.models import Membership, Team

USERNAME = "admin"


def _login_file() -> Path:
    return Path(settings.VAR_DIR) / "login.txt"


def _write_secret(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(text)
    os.chmod(path, 0o600)


class Command(BaseCommand):
    help = "Create the admin login and the ops team once; print how to log in."

    def handle(self, *args, **opts):
        User = get_user_model()
        path = _login_file()
        # Each step is idempotent on its own: no transaction needed (nor a SQLite
        # read-then-write lock upgrade while a worker writes).
        user = User.objects.filter(username=USERNAME).first()
        password = None
        if user is None:
            password = secrets.token_urlsafe(12)
            user = User.objects.create_superuser(USERNAME, email="", password=password)
            _write_secret(path, f"{USERNAME} {password}\n")
        team, _ = Team.objects.get_or_create(slug="ops", defaults={"name": "ops"})
        Membership.objects.update_or_create(user=user, team=team, defaults={"role": Membership.Role.ADMIN})
        if password is None and path.exists():
            parts = path.read_text().split()
            password = parts[1] if len(parts) == 2 and parts[0] == USERNAME else None
        url = settings.SITE_URL.rstrip("/")
        if password:
            self.stdout.write(f"Log in at {url} as {USERNAME} / {password}")
        else:
            self.stdout.write(f"Log in at {url} as {USERNAME} (password unchanged; {path} is missing: "
                              f"`python manage.py changepassword {USERNAME}` sets a new one)")
