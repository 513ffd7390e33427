from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from analyzers.runbooks import RunbookError
from kb.services.sync import runbook_sync


class Command(BaseCommand):
    help = "Load runbooks/symptoms/*.yaml and runbooks/*.md into the database (idempotent; refuses an invalid file)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dir", default=str(settings.RUNBOOKS_DIR), help="runbook directory")
        parser.add_argument(
            "--force", action="store_true",
            help="take the files even over runbooks edited in the app since the last sync",
        )

    def handle(self, *args: Any, **options: Any) -> str:
        try:
            result = runbook_sync(directory=options["dir"], force=options["force"])
        except RunbookError as exc:
            raise CommandError(f"sync_runbooks: nothing loaded: {exc}") from None
        for warning in result.warnings:
            self.stderr.write(f"warning: {warning}")
        return result.summary()
