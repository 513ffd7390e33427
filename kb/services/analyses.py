"""Analyses of uploaded bundles: queued -> running -> done | failed.

The Analysis row, not the broker, is the source of truth (reliability-notes B4):

- analysis_start creates a queued row and sends the task after commit; when the
  broker is down the row just stays queued and the reconciler sends it later.
- analysis_claim moves a row to running with a compare-and-set UPDATE that also
  takes a lease (lease_owner = host:pid:task id, lease_expires). A second
  delivery of the same analysis finds it taken and does nothing. A lease held
  by a dead process on this host (a killed pool child) may be taken over at
  once; any other lease only when it has expired.
- analysis_run renews the lease while it works (progress writes and a heartbeat
  thread) and writes the result and the Finding rows in one transaction, only
  while it still holds the lease.
- analysis_reconcile sends queued rows again and puts back running rows whose
  lease expired; after KB_MAX_ATTEMPTS claims an analysis fails ("the worker
  crashed N times") instead of looping on a poison bundle.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import socket
import threading
import time
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import OperationalError, connections, transaction
from django.db.models import F, Q
from django.utils import timezone

from analyzers.model import BundleError
from kb.models import Analysis, Bundle, Finding, Incident, Runbook, Team
from kb.services.bundles import bundle_dir, bundle_incident_for_upload, bundle_limits, bundle_store, safe_label
from kb.tasks import analysis_run_task

if TYPE_CHECKING:
    from analyzers.runners import Runner

log = logging.getLogger(__name__)

Status = Analysis.Status
# Share of the progress bar per stage; scanning fills the middle by bytes.
STAGE_PERCENT = {"unpacking": 2, "scanning": 5, "scoring": 92}
SCAN_PERCENT = 87
PROGRESS_EVERY = 1.0   # seconds between throttled progress writes


class LeaseLost(Exception):
    """Another delivery took the analysis over (our lease expired), or it was failed meanwhile."""


class SparkUnavailable(Exception):
    """The worker's SparkSession could not start (no Java, no master); the message is one line."""


def error_summary(exc: BaseException) -> str:
    """One line for a user: the exception's type and first line, and for an error from
    the JVM (py4j puts it on a line starting ": ") the Java exception, not its stack."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    java = next((line[2:] for line in lines if line.startswith(": ")), None)
    return _one_line(java or f"{type(exc).__name__}: {lines[0] if lines else ''}", 500)


# ---------------------------------------------------------------- start and send


def analysis_upload(*, user, uploaded_file: UploadedFile, incident: Incident | None = None,
                    team: Team | None = None) -> Analysis:
    """Store an upload and queue its analysis, in one transaction: on `incident`,
    or (without one) on a new incident of `team` titled after the file. The web
    form and the API both come here."""
    with transaction.atomic():
        if incident is None:
            incident = bundle_incident_for_upload(user=user, team=team, name=uploaded_file.name)
        bundle = bundle_store(incident=incident, user=user, uploaded_file=uploaded_file)
        return analysis_start(bundle=bundle)


def analysis_start(*, bundle: Bundle) -> Analysis:
    """A queued analysis of `bundle`; its task is sent once the transaction commits."""
    with transaction.atomic():
        analysis = Analysis.objects.create(team_id=bundle.team_id, bundle=bundle)
        transaction.on_commit(partial(analysis_enqueue, analysis_id=analysis.id))
    return analysis


def analysis_reanalyse(*, analysis: Analysis) -> Analysis:
    """A fresh analysis of the same bundle (after runbooks changed); the old one stays."""
    return analysis_start(bundle=analysis.bundle)


def analysis_enqueue(*, analysis_id: int) -> bool:
    """Send the task. Never raises and never blocks for long: with the broker down
    (connection timeout CELERY_BROKER_CONNECTION_TIMEOUT, no publish retry) the
    row stays queued with `enqueued` unset, and the reconciler sends it later."""
    try:
        _publish(analysis_id)
    except Exception as exc:   # kombu OperationalError, redis ConnectionError, OSError, ...
        log.warning("analysis %s stays queued: could not reach the broker (%s)", analysis_id, _one_line(exc))
        return False
    Analysis.objects.filter(id=analysis_id, status=Status.QUEUED).update(enqueued=timezone.now())
    return True


def _publish(analysis_id: int) -> None:
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


# ---------------------------------------------------------------- claim and lease


def lease_owner(tag: str) -> str:
    """Who holds a lease: host, process and the task id (the same task id comes
    back on a redelivery; the pid tells whether the holder is still alive)."""
    return f"{socket.gethostname()}:{os.getpid()}:{tag}"[:100]


def analysis_claim(*, analysis_id: int, owner: str) -> bool:
    """Take the analysis if it is queued, or running under an expired lease (or a
    lease of a dead process on this host). True when this caller now holds it."""
    now = timezone.now()
    claimable = Q(status=Status.QUEUED) | Q(status=Status.RUNNING, lease_expires__lt=now)
    dead = _dead_local_owner(analysis_id)
    if dead:
        claimable |= Q(status=Status.RUNNING, lease_owner=dead)
    rows = Analysis.objects.filter(claimable, id=analysis_id)
    if rows.filter(attempts__lt=settings.KB_MAX_ATTEMPTS).update(
        status=Status.RUNNING, lease_owner=owner, lease_expires=now + _lease(), attempts=F("attempts") + 1,
        started=now, finished=None, stage="", progress=0, bytes_done=0, bytes_total=0, error="",
    ):
        return True
    # Claimable but claimed too often: each claim that did not finish was a crash.
    worn = rows.filter(attempts__gte=settings.KB_MAX_ATTEMPTS)
    attempts = worn.values_list("attempts", flat=True).first()
    if attempts is not None and worn.update(status=Status.FAILED, error=_crash_message(attempts), finished=now,
                                            lease_expires=None, stage=""):
        _finished(analysis_id)
    return False


def analysis_extend_lease(*, analysis_id: int, owner: str, seconds: int | None = None) -> bool:
    until = timezone.now() + timedelta(seconds=seconds or settings.KB_LEASE_SECONDS)
    return bool(Analysis.objects.filter(id=analysis_id, status=Status.RUNNING, lease_owner=owner)
                .update(lease_expires=until))


def analysis_release(*, analysis_id: int, owner: str) -> bool:
    """Give a claimed analysis back (a transient error; the task retries it).
    The attempt is not counted: it did not crash."""
    return bool(Analysis.objects.filter(id=analysis_id, status=Status.RUNNING, lease_owner=owner).update(
        status=Status.QUEUED, lease_owner="", lease_expires=None, attempts=F("attempts") - 1,
        stage="", progress=0, enqueued=timezone.now(),
    ))


def analysis_fail(*, analysis_id: int, error: str, owner: str | None = None, task_id: str | None = None) -> bool:
    """Mark a queued or running analysis failed (only while `owner`, or a delivery of
    task `task_id`, holds it, if given)."""
    rows = Analysis.objects.filter(id=analysis_id, status__in=[Status.QUEUED, Status.RUNNING])
    if owner is not None:
        rows = rows.filter(lease_owner=owner)
    if task_id is not None:
        rows = rows.filter(status=Status.RUNNING, lease_owner__endswith=f":{task_id}")
    if not rows.update(status=Status.FAILED, error=_one_line(error, 1000), finished=timezone.now(),
                       lease_expires=None, stage=""):
        return False
    _finished(analysis_id)
    return True


def analysis_discard_staged(*, analysis_id: int) -> None:
    """Remove what an analysis staged, when its process was killed before it could."""
    analysis = Analysis.objects.select_related("bundle").filter(id=analysis_id).first()
    if analysis is not None:
        shutil.rmtree(bundle_dir(analysis.bundle) / "staged" / str(analysis_id), ignore_errors=True)


def _finished(analysis_id: int) -> None:
    """The analysis is done or failed: its incident's activity entry and the
    owner's and followers' notifications (kb.services.notifications; never raises)."""
    from kb.services.notifications import collab_analysis_finished

    collab_analysis_finished(analysis_id=analysis_id)


def _lease() -> timedelta:
    return timedelta(seconds=settings.KB_LEASE_SECONDS)


def _crash_message(attempts: int) -> str:
    return (f"the worker crashed {attempts} times on this analysis (killed, out of memory, or over the "
            "hard time limit); giving up")


def _dead_local_owner(analysis_id: int) -> str | None:
    """The lease owner of a running analysis if it is a process of this host that
    is gone (or a zombie): a pool child killed mid-analysis."""
    owner = (Analysis.objects.filter(id=analysis_id, status=Status.RUNNING)
             .values_list("lease_owner", flat=True).first())
    return owner if owner and not _owner_alive(owner) else None


def _owner_alive(owner: str) -> bool:
    """False only for a lease owner of this host whose process is gone."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return True
    return _pid_alive(int(pid_text))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


# ---------------------------------------------------------------- run


def analysis_run(*, analysis_id: int, owner: str) -> bool:
    """Claim and analyse. False when another delivery holds (or finished) it.

    Bad input (BundleError) fails the analysis with its one-line message; other
    exceptions propagate to the task, which decides (retry, fail)."""
    if not analysis_claim(analysis_id=analysis_id, owner=owner):
        log.info("analysis %s: not claimed by %s (another delivery holds or finished it)", analysis_id, owner)
        return False
    analysis = Analysis.objects.select_related("bundle").get(id=analysis_id)
    runbooks = list(Runbook.objects.order_by("slug").values_list("meta", flat=True))
    if not runbooks:
        analysis_fail(analysis_id=analysis_id, owner=owner,
                      error="no runbooks are loaded (run `python manage.py sync_runbooks`)")
        return True
    engine = settings.KB_ENGINE
    progress = _Progress(analysis_id, owner)
    workdir = bundle_dir(analysis.bundle) / "staged" / str(analysis_id)
    try:
        runner = _runner(engine, analysis_id, owner, progress)
        with _Heartbeat(analysis_id, owner):
            result = _analyse(analysis, runbooks, runner, progress, workdir)
    except (BundleError, SparkUnavailable) as exc:
        shutil.rmtree(workdir, ignore_errors=True)
        analysis_fail(analysis_id=analysis_id, owner=owner, error=str(exc))
        return True
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    _store(analysis_id, owner, result, engine, _digest(runbooks))
    _finished(analysis_id)
    return True


def _runner(engine: str, analysis_id: int, owner: str, progress: _Progress) -> Runner:
    from analyzers.runners import EngineStartError, make_runner

    # Spark starts here, before this process starts any thread (reliability-notes A1.6);
    # 20-60 s of JVM start: hold the lease meanwhile.
    hold = partial(analysis_extend_lease, analysis_id=analysis_id, owner=owner,
                   seconds=settings.KB_STARTUP_LEASE_SECONDS)
    try:
        return make_runner(engine, master=settings.SPARK_MASTER, scanned=progress.scanned, before_cold_start=hold)
    except EngineStartError as exc:   # the JVM did not start, or the master never answered
        raise SparkUnavailable(f"Spark could not start on {settings.SPARK_MASTER}: {error_summary(exc.__cause__)} "
                               "(check the worker's JAVA_HOME and SPARK_MASTER)") from exc


def _analyse(analysis: Analysis, runbooks, runner: Runner, progress: _Progress, workdir: Path):
    from analyzers.engine import analyze_staged
    from analyzers.staging import stage_logs

    shutil.rmtree(workdir, ignore_errors=True)       # a redelivery starts clean
    source = _input_link(Path(analysis.bundle.stored_path), workdir / "input",
                         safe_label(analysis.bundle.original_name))
    limits = bundle_limits()
    t0 = time.monotonic()
    progress.stage("unpacking")
    # Unusable input, as for `manage.py analyze` (exit 2): say so, not "no root cause".
    staged = stage_logs([str(source)], str(workdir), limits, label=source.name)
    _test_stage_delay(analysis.bundle.original_name)
    result = analyze_staged(staged, runbooks, engine=runner.engine, limits=limits, runner=runner.run,
                            range_bytes=runner.range_bytes, started=t0, startup_seconds=runner.startup_seconds,
                            progress=progress.stage)
    root = bundle_dir(analysis.bundle)
    manifest = {f.path: os.path.relpath(f.disk_path, root) for f in staged.files}
    (workdir / "manifest.json").write_text(json.dumps(manifest, indent=1, ensure_ascii=False))
    return result


def _test_stage_delay(name: str) -> None:
    """Fault-test hook (tests/reliability), off unless KB_TEST_STAGE_DELAY is set:
    a bundle named "slow-*" then pauses that many seconds between unpacking and
    scanning (lease held, staged files on disk), so a test can kill or stop the
    worker mid-analysis."""
    seconds = os.environ.get("KB_TEST_STAGE_DELAY")
    if seconds and name.startswith("slow-"):
        time.sleep(float(seconds))


def _input_link(stored: Path, directory: Path, label: str) -> Path:
    """The upload under a safe version of its original name, so the engine reads
    host/component hints and names the file in messages (a hard link: no copy)."""
    directory.mkdir(parents=True)
    target = directory / label
    try:
        os.link(stored, target)
    except OSError:
        shutil.copyfile(stored, target)
    return target


def analysis_staged_file(*, analysis: Analysis, path: str) -> Path | None:
    """Where the staged (UTF-8) copy of bundle path `path` of a done analysis is,
    for showing lines around evidence; None if unknown or gone."""
    root = bundle_dir(analysis.bundle)
    try:
        manifest = json.loads((root / "staged" / str(analysis.id) / "manifest.json").read_text())
    except (OSError, ValueError):
        return None
    rel = manifest.get(path)
    if not rel:
        return None
    disk = (root / rel).resolve()
    return disk if disk.is_relative_to(root.resolve()) and disk.is_file() else None


def _store(analysis_id: int, owner: str, result: dict[str, Any], engine: str, digest: str) -> None:
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
            lease_expires=None, engine=engine, runbooks_digest=digest,
        ):
            raise LeaseLost(f"analysis {analysis_id}: lease of {owner} lost before the result was stored")
        Finding.objects.filter(analysis_id=analysis_id).delete()
        Finding.objects.bulk_create(findings)


def _digest(runbooks: list[dict[str, Any]]) -> str:
    text = json.dumps(runbooks, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class _Progress:
    """Progress onto the row: stage changes at once, bytes at most once a second.
    Each write renews the lease; finding the lease gone stops the analysis."""

    def __init__(self, analysis_id: int, owner: str):
        self.analysis_id, self.owner = analysis_id, owner
        self.name, self.done, self.total = "", 0, 0
        self.last = 0.0

    def stage(self, name: str, _value: int = 0) -> None:
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
                     lease_expires=timezone.now() + _lease())
        except OperationalError as exc:   # a busy database: skip this update, not the analysis
            log.info("analysis %s: progress not written (%s)", self.analysis_id, exc)
            return
        if not updated:
            raise LeaseLost(f"analysis {self.analysis_id}: lease of {self.owner} lost")


class _Heartbeat:
    """Renews the lease every third of KB_LEASE_SECONDS while the engine works
    through stretches without progress (a big archive unpacking)."""

    def __init__(self, analysis_id: int, owner: str):
        self.analysis_id, self.owner = analysis_id, owner
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"kb-lease-{analysis_id}", daemon=True)

    def __enter__(self) -> _Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)

    def _run(self) -> None:
        every = max(1.0, settings.KB_LEASE_SECONDS / 3)
        try:
            while not self.stopped.wait(every):
                try:
                    if not analysis_extend_lease(analysis_id=self.analysis_id, owner=self.owner):
                        return      # the main thread finds out at its next write
                except OperationalError:
                    continue
        finally:
            connections.close_all()   # this thread's connections only


# ---------------------------------------------------------------- reconcile


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
        if row["lease_expires"] and row["lease_expires"] >= now and _owner_alive(row["lease_owner"]):
            continue
        same = Analysis.objects.filter(id=row["id"], status=Status.RUNNING, lease_owner=row["lease_owner"],
                                       lease_expires=row["lease_expires"])
        if row["attempts"] >= settings.KB_MAX_ATTEMPTS:
            if same.update(status=Status.FAILED, error=_crash_message(row["attempts"]), finished=now,
                           lease_expires=None, stage=""):
                out.crashed.append(row["id"])
                _finished(row["id"])
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
            _publish(row["id"])
        except Exception as exc:
            Analysis.objects.filter(id=row["id"], enqueued=now).update(enqueued=row["enqueued"])
            log.warning("reconcile: broker unreachable (%s); %s queued analyses wait", _one_line(exc),
                        due.count())
            out.broker_down = True
            break                        # one timeout per pass, not one per analysis
        out.sent.append(row["id"])
    return out


def _one_line(value: Any, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
