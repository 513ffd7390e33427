"""python manage.py reconcile [--every SECONDS]: send queued analyses again and
recover those whose worker died (the pass every worker also runs in a thread)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand

from kb.services.reconcile import analysis_reconcile


class Command(BaseCommand):
    help = "Re-enqueue stuck analyses (queued but never sent, or running under an expired lease)."

    def add_arguments(self, parser):
        parser.add_argument("--every", type=float, default=0,
                            help="repeat every SECONDS until interrupted (default: one pass)")

    def handle(self, *args, **opts):
        while True:
            self.stdout.write(analysis_reconcile().summary())
            if not opts["every"]:
                return
            time.sleep(opts["every"])
