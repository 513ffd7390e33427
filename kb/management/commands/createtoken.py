"""python manage.py createtoken USERNAME [--name NAME]: print a new API token (shown once)."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from kb.services.tokens import token_create


class Command(BaseCommand):
    help = "Create an API token for a user and print it (it is shown once; only its hash is stored)."

    def add_arguments(self, parser):
        parser.add_argument("username")
        parser.add_argument("--name", default="", help="a label for the token, e.g. the script using it")

    def handle(self, *args, **opts):
        User = get_user_model()
        try:
            user = User.objects.get(**{User.USERNAME_FIELD: opts["username"]})
        except User.DoesNotExist:
            raise CommandError(f"createtoken: no user {opts['username']!r}") from None
        if not user.is_active:
            raise CommandError(f"createtoken: user {opts['username']!r} is not active")
        _, secret = token_create(user=user, name=opts["name"])
        self.stdout.write(secret)
