"""The lease protocol of an analysis (docs/reliability.md, "Leases").

- analysis_claim moves a row to running with a compare-and-set UPDATE that also
  takes a lease (lease_owner = host:pid:task id, lease_expires). A second
  delivery of the same analysis finds it taken and does nothing. A lease held
  by a dead process on this host (a killed pool child) may be taken over at
  once; any other lease only when it has expired; after KB_MAX_ATTEMPTS claims
  the analysis fails ("the worker crashed N times").
- The holder renews it (analysis_extend_lease; Heartbeat while the engine
  works), gives it back on a transient error (analysis_release), or fails the
  analysis (analysis_fail). Every change is a compare-and-set on the holder.
"""

from __future__ import annotations

import os
import socket
import threading
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import OperationalError, connections
from django.db.models import F, Q
from django.utils import timezone

from kb.models import Analysis

Status = Analysis.Status


class LeaseLost(Exception):
    """Another delivery took the analysis over (our lease expired), or it was failed meanwhile."""


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
        status=Status.RUNNING, lease_owner=owner, lease_expires=now + lease_span(), attempts=F("attempts") + 1,
        started=now, finished=None, stage="", progress=0, bytes_done=0, bytes_total=0, error="",
    ):
        return True
    # Claimable but claimed too often: each claim that did not finish was a crash.
    worn = rows.filter(attempts__gte=settings.KB_MAX_ATTEMPTS)
    attempts = worn.values_list("attempts", flat=True).first()
    if attempts is not None and worn.update(status=Status.FAILED, error=crash_message(attempts), finished=now,
                                            lease_expires=None, stage=""):
        announce_finished(analysis_id)
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
    if not rows.update(status=Status.FAILED, error=one_line(error, 1000), finished=timezone.now(),
                       lease_expires=None, stage=""):
        return False
    announce_finished(analysis_id)
    return True


def announce_finished(analysis_id: int) -> None:
    """The analysis is done or failed: its incident's activity entry and the
    owner's and followers' notifications (kb.services.notifications; never raises)."""
    from kb.services.notifications import collab_analysis_finished

    collab_analysis_finished(analysis_id=analysis_id)


def lease_span() -> timedelta:
    return timedelta(seconds=settings.KB_LEASE_SECONDS)


def crash_message(attempts: int) -> str:
    return (f"the worker crashed {attempts} times on this analysis (killed, out of memory, or over the "
            "hard time limit); giving up")


def _dead_local_owner(analysis_id: int) -> str | None:
    """The lease owner of a running analysis if it is a process of this host that
    is gone (or a zombie): a pool child killed mid-analysis."""
    owner = (Analysis.objects.filter(id=analysis_id, status=Status.RUNNING)
             .values_list("lease_owner", flat=True).first())
    return owner if owner and not owner_alive(owner) else None


def owner_alive(owner: str) -> bool:
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


class Heartbeat:
    """Renews the lease every third of KB_LEASE_SECONDS while the engine works
    through stretches without progress (a big archive unpacking)."""

    def __init__(self, analysis_id: int, owner: str):
        self.analysis_id, self.owner = analysis_id, owner
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=f"kb-lease-{analysis_id}", daemon=True)

    def __enter__(self) -> Heartbeat:
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


def one_line(value: Any, limit: int = 300) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def error_summary(exc: BaseException) -> str:
    """One line for a user: the exception's type and first line, and for an error from
    the JVM (py4j puts it on a line starting ": ") the Java exception, not its stack."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    java = next((line[2:] for line in lines if line.startswith(": ")), None)
    return one_line(java or f"{type(exc).__name__}: {lines[0] if lines else ''}", 500)
