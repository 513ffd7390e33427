"""Analyses of uploaded bundles: queued -> running -> done | failed.

The Analysis row, not the broker, is the source of truth (docs/reliability.md):

- analysis_upload stores a bundle and analysis_start creates a queued row and
  sends the task after commit; when the broker is down the row just stays
  queued and the reconciler (reconcile.py) sends it later.
- analysis_run claims the row (leases.py), renews the lease while it works
  (progress writes and a heartbeat thread) and writes the result and the
  Finding rows in one transaction, only while it still holds the lease.
"""

from __future__ import annotations

import hashlib
import json
import logging
import shutil
import time
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import OperationalError, transaction
from django.utils import timezone

from analyzers.model import BundleError
from analyzers.staging import stage_logs
from kb.models import Analysis, Bundle, Finding, Incident, Team
from kb.selectors.catalog import catalog_metas
from kb.services.baseline_templates import analysis_baseline
from kb.services.bundle_uris import bundle_source, needs_spark
from kb.services.bundles import bundle_incident_for_upload, bundle_limits, bundle_store
from kb.services.context_store import context_dir, context_store_write
from kb.services.incidents import incident_severity_follow
from kb.services.staged import staged_dir
from kb.services.storage import quota_admit
from kb.services.leases import (
    Heartbeat,
    LeaseLost,
    analysis_claim,
    analysis_extend_lease,
    analysis_fail,
    announce_finished,
    error_summary,
    lease_span,
    one_line,
)
from kb.tasks import analysis_run_task

if TYPE_CHECKING:
    from analyzers.runners import Runner

log = logging.getLogger(__name__)

Status = Analysis.Status
# Share of the progress bar per stage; scanning fills the middle by bytes.
STAGE_PERCENT = {"unpacking": 2, "scanning": 5, "scoring": 92}
SCAN_PERCENT = 87
PROGRESS_EVERY = 1.0   # seconds between throttled progress writes


class SparkUnavailable(Exception):
    """The worker's SparkSession could not start (no Java, no master); the message is one line."""


def analysis_upload(*, user, uploaded_file: UploadedFile, incident: Incident | None = None,
                    team: Team | None = None, healthy: bool = False) -> Analysis:
    """Store an upload and queue its analysis, in one transaction: on `incident`,
    or (without one) on a new incident of `team` titled after the file. The web
    form and the API both come here."""
    team_id = incident.team_id if incident is not None else team.pk
    with transaction.atomic():
        # Held until commit: the check and the rows it admits are one step. QuotaExceeded: 413 or 429.
        quota_admit(team_id=team_id, incoming=uploaded_file.size or 0)
        if incident is None:
            incident = bundle_incident_for_upload(user=user, team=team, name=uploaded_file.name)
        bundle = bundle_store(incident=incident, user=user, uploaded_file=uploaded_file)
        return analysis_start(bundle=bundle, healthy=healthy)


def analysis_start(*, bundle: Bundle, baseline: Analysis | None = None, healthy: bool = False) -> Analysis:
    """A queued analysis of `bundle` (against the bundle of healthy analysis `baseline`, of the
    same team: kb.services.baselines checks); its task is sent once the transaction commits."""
    with transaction.atomic():
        analysis = Analysis.objects.create(team_id=bundle.team_id, bundle=bundle, baseline=baseline, healthy=healthy)
        transaction.on_commit(partial(analysis_enqueue, analysis_id=analysis.id))
    return analysis


def analysis_reanalyze(*, analysis: Analysis) -> Analysis:
    """A fresh analysis of the same bundle (after runbooks changed); the old one stays.
    Raises QuotaExceeded (429) past the team's hourly limit, BundleError once pruned."""
    if analysis.bundle.pruned is not None:
        raise BundleError(f"{analysis.bundle.original_name}: its files were pruned, upload it again")
    with transaction.atomic():
        quota_admit(team_id=analysis.team_id)
        return analysis_start(bundle=analysis.bundle)


def analysis_enqueue(*, analysis_id: int) -> bool:
    """Send the task. Never raises and never blocks for long: with the broker down
    (connection timeout CELERY_BROKER_CONNECTION_TIMEOUT, no publish retry) the
    row stays queued with `enqueued` unset, and the reconciler sends it later."""
    try:
        publish(analysis_id)
    except Exception as exc:   # kombu OperationalError, redis ConnectionError, OSError, ...
        log.warning("analysis %s stays queued: could not reach the broker (%s)", analysis_id, one_line(exc))
        return False
    Analysis.objects.filter(id=analysis_id, status=Status.QUEUED).update(enqueued=timezone.now())
    return True


def publish(analysis_id: int) -> None:
    """One connection attempt, no retries: a refused connection fails in
    milliseconds (the pooled producer retries for the whole connect timeout).

    The message carries no time limits (explicit None): Celery would otherwise
    copy the sender's KB_TASK_*TIME_LIMIT into it, and the web process's
    settings would override those of the worker that runs the analysis."""
    with analysis_run_task.app.connection_for_write() as conn:
        conn.ensure_connection(max_retries=0)
        analysis_run_task.apply_async((analysis_id,), retry=False, connection=conn,
                                      time_limit=None, soft_time_limit=None)


def analysis_is_waiting(analysis: Analysis, *, now=None) -> bool:
    """Queued for longer than KB_WAITING_AFTER seconds: no worker took it (yet)."""
    now = now or timezone.now()
    return (analysis.status == Status.QUEUED
            and analysis.created < now - timedelta(seconds=settings.KB_WAITING_AFTER))


def analysis_discard_staged(*, analysis_id: int) -> None:
    """Remove what an analysis staged, when its process was killed before it could."""
    analysis = Analysis.objects.select_related("bundle").filter(id=analysis_id).first()
    if analysis is not None:
        _discard(analysis)


def _discard(analysis: Analysis) -> None:
    """The unpacked tree and a context store left partial by a failed run."""
    shutil.rmtree(staged_dir(analysis.bundle, analysis.id), ignore_errors=True)
    shutil.rmtree(context_dir(analysis.bundle, analysis.id), ignore_errors=True)


def analysis_run(*, analysis_id: int, owner: str) -> bool:
    """Claim and analyze. False when another delivery holds (or finished) it.

    Bad input (BundleError) fails the analysis with its one-line message; other
    exceptions propagate to the task, which decides (retry, fail)."""
    if not analysis_claim(analysis_id=analysis_id, owner=owner):
        log.info("analysis %s: not claimed by %s (another delivery holds or finished it)", analysis_id, owner)
        return False
    analysis = Analysis.objects.select_related("bundle", "baseline__bundle").get(id=analysis_id)
    # The catalog as the analysis's team sees it: shipped, its overlays, its own and published runbooks.
    runbooks = catalog_metas(team=analysis.team_id)
    if not runbooks:
        analysis_fail(analysis_id=analysis_id, owner=owner,
                      error="no runbooks are loaded (run `python manage.py sync_runbooks`)")
        return True
    engine = "spark" if needs_spark(analysis.bundle) else settings.KB_ENGINE
    progress = _Progress(analysis_id, owner)
    workdir = staged_dir(analysis.bundle, analysis_id)
    try:
        runner = _runner(engine, analysis_id, owner, progress)
        with Heartbeat(analysis_id, owner):
            result = _analyze(analysis, runbooks, runner, progress, workdir)
    except (BundleError, SparkUnavailable) as exc:
        _discard(analysis)
        analysis_fail(analysis_id=analysis_id, owner=owner, error=str(exc))
        return True
    except BaseException:
        _discard(analysis)
        raise
    # The unpacked tree goes now (the upload stays; re-analysis unpacks again): the
    # context view reads the compressed, line-indexed copy _analyze stored.
    shutil.rmtree(workdir, ignore_errors=True)
    result, stored_bytes = result
    _store(analysis_id, owner, result, engine, _digest(runbooks), stored_bytes)
    announce_finished(analysis_id)
    return True


def _runner(engine: str, analysis_id: int, owner: str, progress: _Progress) -> Runner:
    from analyzers.runners import EngineStartError, make_runner

    # Spark starts here, before this process starts any thread (docs/reliability.md A1.6);
    # 20-60 s of JVM start: hold the lease meanwhile.
    hold = partial(analysis_extend_lease, analysis_id=analysis_id, owner=owner,
                   seconds=settings.KB_STARTUP_LEASE_SECONDS)
    try:
        return make_runner(engine, master=settings.SPARK_MASTER, scanned=progress.scanned, before_cold_start=hold)
    except EngineStartError as exc:   # the JVM did not start, or the master never answered
        raise SparkUnavailable(f"Spark could not start on {settings.SPARK_MASTER}: {error_summary(exc.__cause__)} "
                               "(check the worker's JAVA_HOME and SPARK_MASTER)") from exc


def _analyze(analysis: Analysis, runbooks, runner: Runner, progress: _Progress, workdir: Path):
    from analyzers.engine import analyze_staged

    shutil.rmtree(workdir, ignore_errors=True)       # a redelivery starts clean
    spark = getattr(runner.run, "spark", None)   # hdfs://, s3a:// bundles are fetched through it
    source = bundle_source(analysis.bundle, workdir, spark)
    limits = bundle_limits()
    t0 = time.monotonic()
    progress.stage("unpacking")
    # Unusable input, as for `manage.py analyze` (exit 2): say so, not "no root cause".
    staged = stage_logs([str(source)], str(workdir), limits, label=source.name)
    baseline = analysis_baseline(analysis, runbooks, runner, limits)
    result = analyze_staged(staged, runbooks, engine=runner.engine, limits=limits, runner=runner.run,
                            range_bytes=runner.range_bytes, started=t0, startup_seconds=runner.startup_seconds,
                            progress=progress, baseline=baseline)
    stored = context_store_write(bundle=analysis.bundle, analysis_id=analysis.id, files=staged.files)
    return result, stored


def _store(analysis_id: int, owner: str, result: dict[str, Any], engine: str, digest: str,
           stored_bytes: int = 0) -> None:
    """Result and findings in one transaction, only while we hold the lease; old
    findings go first, so a redelivery leaves the same rows."""
    findings, seen = [], set()
    for f in result.get("findings", []):
        if f["runbook"] not in seen:
            seen.add(f["runbook"])
            findings.append(Finding(analysis_id=analysis_id, slug=f["runbook"], rank=len(findings) + 1,
                                    confidence=float(f.get("confidence") or 0.0)))
    with transaction.atomic():
        # The UPDATE first: it takes SQLite's write lock at once (no read-then-upgrade deadlock).
        if not Analysis.objects.filter(id=analysis_id, status=Status.RUNNING, lease_owner=owner).update(
            status=Status.DONE, result=result, progress=100, stage="", error="", finished=timezone.now(),
            lease_expires=None, engine=engine, runbooks_digest=digest, stored_bytes=stored_bytes,
        ):
            raise LeaseLost(f"analysis {analysis_id}: lease of {owner} lost before the result was stored")
        Finding.objects.filter(analysis_id=analysis_id).delete()
        Finding.objects.bulk_create(findings)
        incident_id = Analysis.objects.filter(id=analysis_id).values_list("bundle__incident_id", flat=True).first()
        if incident_id is not None:
            incident_severity_follow(incident_id=incident_id, result=result)


def _digest(runbooks: list[dict[str, Any]]) -> str:
    text = json.dumps(runbooks, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Progress:
    """analyzers.model.Progress onto the row: stage changes at once, bytes at most once a second.
    Each write renews the lease; finding the lease gone stops the analysis."""

    def __init__(self, analysis_id: int, owner: str):
        self.analysis_id, self.owner = analysis_id, owner
        self.name, self.done, self.total = "", 0, 0
        self.last = 0.0

    def stage(self, name: str) -> None:
        self.name = name
        self._write(force=True)

    def scanned(self, done: int, total: int) -> None:
        self.done, self.total = done, total
        self._write(force=False)

    def percent(self) -> int:
        base = STAGE_PERCENT.get(self.name, 0)
        if self.name == "scanning" and self.total:
            base += SCAN_PERCENT * min(self.done, self.total) // self.total
        return base

    def _write(self, *, force: bool) -> None:
        now = time.monotonic()
        if not force and now - self.last < PROGRESS_EVERY:
            return
        self.last = now
        try:
            updated = Analysis.objects.filter(
                id=self.analysis_id, status=Status.RUNNING, lease_owner=self.owner
            ).update(stage=self.name, progress=self.percent(), bytes_done=self.done, bytes_total=self.total,
                     lease_expires=timezone.now() + lease_span())
        except OperationalError as exc:   # a busy database: skip this update, not the analysis
            log.info("analysis %s: progress not written (%s)", self.analysis_id, exc)
            return
        if not updated:
            raise LeaseLost(f"analysis {self.analysis_id}: lease of {self.owner} lost")
