"""python manage.py prune [--older-than DAYS] [--dry-run]: remove the stored
files (upload and context copy) of bundles older than DAYS (default:
KB_RETENTION_DAYS); analyses, results and findings stay. Run it from cron."""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from kb.services.storage import storage_prune
from kb.uploads import human_bytes


class Command(BaseCommand):
    help = "Remove the files of bundles older than --older-than DAYS (default KB_RETENTION_DAYS)."

    def add_arguments(self, parser):
        parser.add_argument("--older-than", type=int, default=None, metavar="DAYS",
                            help=f"age in days (default KB_RETENTION_DAYS, now {settings.KB_RETENTION_DAYS})")
        parser.add_argument("--dry-run", action="store_true", help="only say what would be removed")

    def handle(self, *args, **opts):
        days = opts["older_than"] if opts["older_than"] is not None else settings.KB_RETENTION_DAYS
        if days <= 0:
            raise CommandError("--older-than must be at least 1 day (KB_RETENTION_DAYS=0 keeps everything)")
        result = storage_prune(older_than_days=days, dry_run=opts["dry_run"])
        verb = "would free" if opts["dry_run"] else "freed"
        line = f"{result.bundles} bundle(s) older than {days} days pruned: {verb} {human_bytes(result.freed)}"
        if result.skipped:
            line += f"; {len(result.skipped)} skipped (an analysis is queued or running)"
        self.stdout.write(line)
