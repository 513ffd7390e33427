"""Storage that cannot fill (issue 17): what a team keeps on disk, the quotas
that bound it, and pruning.

- A team keeps its uploads (BUNDLES_DIR/<code>/upload) and each analysis's
  compressed context copy (kb.services.context_store); the unpacked trees are
  removed after each analysis. Over KB_TEAM_STORAGE_BYTES an upload is refused
  (413), over KB_TEAM_ANALYSES_PER_HOUR analyses started in the last hour an
  upload or re-analysis is refused (429, with the seconds to wait). The check runs under
  quota_lock, in the transaction that stores what it admits: atomic, never check-then-act.
- storage_prune removes the files of bundles older than a number of days
  (KB_RETENTION_DAYS by default); their analyses, results and findings stay,
  the context view says the lines are gone, and re-analysis is refused.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from kb.models import Analysis, Bundle, Incident, Team
from kb.services.bundles import bundle_dir
from kb.uploads import human_bytes


class QuotaExceeded(Exception):
    """A team's quota refuses this; `status` is the HTTP answer (413 or 429)."""

    def __init__(self, message: str, *, status: int, retry_after: int | None = None):
        super().__init__(message)
        self.status, self.retry_after = status, retry_after


def team_storage_used(*, team_id: int) -> int:
    """Bytes the team keeps on disk: its uploads and its analyses' context copies (pruned ones excluded)."""
    uploads = Bundle.objects.filter(team_id=team_id, pruned__isnull=True).aggregate(n=Sum("size"))["n"] or 0
    copies = (Analysis.objects.filter(team_id=team_id, bundle__pruned__isnull=True)
              .aggregate(n=Sum("stored_bytes"))["n"] or 0)
    return uploads + copies


def quota_lock(*, team_id: int) -> None:
    """Hold the team's quota until the caller's transaction ends, so that its check and the
    rows it admits (the bundle with its size, the analysis) are one step: two uploads at
    once can no longer both pass a check neither has written yet. PostgreSQL: the team row,
    locked FOR UPDATE, serialises the team's uploads; SQLite: the IMMEDIATE transaction
    (kb.settings) already holds the database's write lock, and select_for_update is a no-op."""
    if not transaction.get_connection().in_atomic_block:
        raise RuntimeError("quota_lock needs the transaction that writes what it admits")
    list(Team.objects.select_for_update().filter(pk=team_id).values_list("pk", flat=True))


def quota_admit(*, team_id: int, incoming: int | None = None) -> None:
    """Under quota_lock: refuse an upload of `incoming` bytes past the storage quota (413;
    None: no upload, a re-analysis) or an analysis past the hourly limit (429)."""
    quota_lock(team_id=team_id)
    if incoming is not None:
        storage_check_upload(team_id=team_id, incoming=incoming)
    analyses_rate_check(team_id=team_id)


def storage_check_upload(*, team_id: int, incoming: int) -> None:
    """Refuse an upload of `incoming` bytes that would take the team past its storage quota."""
    quota = settings.KB_TEAM_STORAGE_BYTES
    if quota <= 0:
        return
    used = team_storage_used(team_id=team_id)
    if used + incoming > quota:
        raise QuotaExceeded(
            f"Your team's storage quota is full: it keeps {human_bytes(used)} of {human_bytes(quota)}, "
            f"and this upload is {human_bytes(incoming)}. Prune old bundles or ask an administrator "
            "to raise KB_TEAM_STORAGE_BYTES.", status=413)


def analyses_rate_check(*, team_id: int) -> None:
    """Refuse another analysis when the team started KB_TEAM_ANALYSES_PER_HOUR in the last hour."""
    limit = settings.KB_TEAM_ANALYSES_PER_HOUR
    if limit <= 0:
        return
    now = timezone.now()
    recent = list(Analysis.objects.filter(team_id=team_id, created__gt=now - timedelta(hours=1))
                  .order_by("-created").values_list("created", flat=True)[:limit])
    if len(recent) >= limit:
        wait = max(1, int((recent[-1] + timedelta(hours=1) - now).total_seconds()) + 1)
        raise QuotaExceeded(
            f"Your team started {limit} analyses in the last hour, its limit (KB_TEAM_ANALYSES_PER_HOUR); "
            f"try again in {wait} s.", status=429, retry_after=wait)


@dataclass
class StorageSummary:
    upload_bytes: int
    context_bytes: int
    team_used: int
    team_quota: int
    pruned: int
    retention_days: int

    @property
    def total(self) -> int:
        return self.upload_bytes + self.context_bytes


def incident_storage(*, incident: Incident) -> StorageSummary:
    """What the incident keeps on disk, and its team's use of its quota (the incident page)."""
    bundles = Bundle.objects.filter(incident=incident)
    kept = bundles.filter(pruned__isnull=True)
    return StorageSummary(
        upload_bytes=kept.aggregate(n=Sum("size"))["n"] or 0,
        context_bytes=(Analysis.objects.filter(bundle__in=kept).aggregate(n=Sum("stored_bytes"))["n"] or 0),
        team_used=team_storage_used(team_id=incident.team_id), team_quota=settings.KB_TEAM_STORAGE_BYTES,
        pruned=bundles.filter(pruned__isnull=False).count(), retention_days=settings.KB_RETENTION_DAYS)


@dataclass
class PruneResult:
    bundles: int = 0
    freed: int = 0
    skipped: list[int] = field(default_factory=list)   # bundles with an analysis still queued or running


def storage_prune(*, older_than_days: int, dry_run: bool = False) -> PruneResult:
    """Remove the files of bundles uploaded more than `older_than_days` days ago
    (not those with an analysis in flight); their rows and results stay."""
    cutoff = timezone.now() - timedelta(days=older_than_days)
    result = PruneResult()
    busy = (Analysis.Status.QUEUED, Analysis.Status.RUNNING)
    for bundle in Bundle.objects.filter(pruned__isnull=True, created__lt=cutoff).order_by("created"):
        if bundle.analyses.filter(status__in=busy).exists():
            result.skipped.append(bundle.pk)
            continue
        size = bundle.size + (bundle.analyses.aggregate(n=Sum("stored_bytes"))["n"] or 0)
        if not dry_run:
            shutil.rmtree(bundle_dir(bundle), ignore_errors=True)
            Bundle.objects.filter(pk=bundle.pk).update(pruned=timezone.now())
        result.bundles += 1
        result.freed += size
    return result
