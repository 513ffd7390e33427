"""The reconciler (docs/reliability.md, "Reconciling"): queued analyses the broker
never got are sent again, running ones whose worker died are put back or,
after KB_MAX_ATTEMPTS, failed. Run by every worker's main process
(kb.tasks) and by `python manage.py reconcile`.
"""

from __future__ import annotations

import logging
import socket
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from kb.models import Analysis
from kb.services.analyses import publish
from kb.services.leases import announce_finished, crash_message, one_line, owner_alive

log = logging.getLogger(__name__)

Status = Analysis.Status


@dataclass
class ReconcileResult:
    sent: list[int] = field(default_factory=list)        # queued analyses sent (again)
    expired: list[int] = field(default_factory=list)     # running, lease expired: queued again
    crashed: list[int] = field(default_factory=list)     # failed: too many attempts
    broker_down: bool = False

    def __bool__(self) -> bool:
        return bool(self.sent or self.expired or self.crashed or self.broker_down)

    def summary(self) -> str:
        line = (f"reconcile: {len(self.sent)} sent, {len(self.expired)} expired leases, "
                f"{len(self.crashed)} failed after {settings.KB_MAX_ATTEMPTS} attempts")
        return line + ("; the broker is down, will try again" if self.broker_down else "")


def analysis_reconcile(*, now=None) -> ReconcileResult:
    """One pass: put back running analyses whose lease expired or whose holder (a
    process of this host) is gone, or fail them after KB_MAX_ATTEMPTS; then send queued ones that were never sent for
    KB_REQUEUE_AFTER s or sent more than KB_REQUEUE_STALE_AFTER s ago (the
    message was lost, e.g. a Redis restart without persistence). Several
    reconcilers may run at once: every change is a compare-and-set."""
    now = now or timezone.now()
    out = ReconcileResult()
    here = f"{socket.gethostname()}:"
    for row in Analysis.objects.filter(status=Status.RUNNING).filter(
        Q(lease_expires__lt=now) | Q(lease_owner__startswith=here)
    ).values("id", "attempts", "lease_owner", "lease_expires"):
        if row["lease_expires"] and row["lease_expires"] >= now and owner_alive(row["lease_owner"]):
            continue
        same = Analysis.objects.filter(id=row["id"], status=Status.RUNNING, lease_owner=row["lease_owner"],
                                       lease_expires=row["lease_expires"])
        if row["attempts"] >= settings.KB_MAX_ATTEMPTS:
            if same.update(status=Status.FAILED, error=crash_message(row["attempts"]), finished=now,
                           lease_expires=None, stage=""):
                out.crashed.append(row["id"])
                announce_finished(row["id"])
        elif same.update(status=Status.QUEUED, lease_owner="", lease_expires=None, enqueued=None,
                         stage="", progress=0):
            out.expired.append(row["id"])

    due = Analysis.objects.filter(status=Status.QUEUED).filter(
        Q(enqueued__isnull=True, created__lt=now - timedelta(seconds=settings.KB_REQUEUE_AFTER))
        | Q(enqueued__isnull=True, id__in=out.expired)
        | Q(enqueued__lt=now - timedelta(seconds=settings.KB_REQUEUE_STALE_AFTER))
    ).order_by("created")
    for row in due.values("id", "enqueued"):
        mine = Analysis.objects.filter(id=row["id"], status=Status.QUEUED, enqueued=row["enqueued"])
        if not mine.update(enqueued=now):
            continue                     # another reconciler sent it
        try:
            publish(row["id"])
        except Exception as exc:
            Analysis.objects.filter(id=row["id"], enqueued=now).update(enqueued=row["enqueued"])
            log.warning("reconcile: broker unreachable (%s); %s queued analyses wait", one_line(exc),
                        due.count())
            out.broker_down = True
            break                        # one timeout per pass, not one per analysis
        out.sent.append(row["id"])
    return out
