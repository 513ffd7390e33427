"""Celery tasks: thin interfaces that take ids and call services (HackSoft,
thin tasks, logic in services). The services import lazily in the bodies. A pool
child starts its SparkSession in a background thread it starts right after the
fork (worker_process_init returns at once: its handlers must finish within 4 s,
a JVM takes 7-60 s), never at import and never before the fork (docs/reliability.md
A1); a task that comes first waits for that start in analyzers.spark.get_spark.

Reconciling: every worker's main process runs kb.services.reconcile.analysis_reconcile
every KB_RECONCILE_INTERVAL seconds in a daemon thread started on `worker_ready`,
so `make run` needs no celery beat; `python manage.py reconcile` runs the same
pass by hand or from cron.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded
from celery.signals import worker_process_init, worker_ready
from django.conf import settings
from django.db import OperationalError, connections
from redis.exceptions import ConnectionError as RedisConnectionError

log = logging.getLogger(__name__)


class DatabaseBusy(Exception):
    """The database stayed locked past its timeout (SQLite: "database is locked")."""


# Retried with backoff; anything else fails the analysis at once (a bug does not fix itself).
TRANSIENT = (DatabaseBusy, RedisConnectionError)


def _analysis_run_task_failure(self, exc, task_id, args, kwargs, einfo) -> None:
    """Called in the worker once a transient error outlived the retries, and in the
    worker's main process when the hard time limit killed the pool child running
    the task: that analysis fails at once with "time limit" (a bundle that hung once
    hangs again; left running, the reconciler would rerun it until "crashed N times")."""
    from kb.services.analyses import analysis_discard_staged
    from kb.services.leases import analysis_fail

    if isinstance(exc, TRANSIENT):
        analysis_fail(analysis_id=args[0],
                      error=f"gave up after {self.max_retries} retries: {type(exc).__name__}: {exc}")
    elif isinstance(exc, TimeLimitExceeded):
        limit = exc.args[0] if exc.args else self.time_limit
        if analysis_fail(analysis_id=args[0], task_id=task_id,
                         error=f"time limit: the analysis ran longer than {limit:g} s (the hard limit) "
                               "and its worker process was killed"):
            analysis_discard_staged(analysis_id=args[0])


@shared_task(
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    ignore_result=True,
    soft_time_limit=settings.CELERY_TASK_SOFT_TIME_LIMIT,
    time_limit=settings.CELERY_TASK_TIME_LIMIT,
    autoretry_for=TRANSIENT,
    max_retries=settings.KB_TASK_MAX_RETRIES,
    retry_backoff=5,
    retry_backoff_max=60,
    retry_jitter=True,
    on_failure=_analysis_run_task_failure,
)
def analysis_run_task(self, analysis_id: int) -> None:
    from kb.services.analyses import analysis_run
    from kb.services.leases import LeaseLost, analysis_fail, analysis_release, lease_owner

    owner = lease_owner(self.request.id or "direct")
    try:
        analysis_run(analysis_id=analysis_id, owner=owner)
    except SoftTimeLimitExceeded:
        limit = (self.request.timelimit or (None, None))[1] or self.soft_time_limit
        analysis_fail(analysis_id=analysis_id, owner=owner,
                      error=f"time limit: the analysis ran longer than {limit:g} s and was stopped")
    except LeaseLost as exc:
        log.warning("%s; the other holder writes the result", exc)
    except OperationalError as exc:
        if "locked" not in str(exc).lower():
            _fail_unexpected(analysis_id, owner, exc)
            return
        analysis_release(analysis_id=analysis_id, owner=owner)
        raise DatabaseBusy(str(exc)) from exc
    except TRANSIENT:
        analysis_release(analysis_id=analysis_id, owner=owner)
        raise
    except Exception as exc:
        _fail_unexpected(analysis_id, owner, exc)


def _fail_unexpected(analysis_id: int, owner: str, exc: Exception) -> None:
    from kb.services.analyses import error_summary
    from kb.services.leases import analysis_fail

    log.exception("analysis %s failed", analysis_id)   # the whole story (a Java stack, say) goes to the log
    analysis_fail(analysis_id=analysis_id, owner=owner,
                  error=f"the analysis failed with an internal error: {error_summary(exc)}")


# The reconciler thread lives in the worker's main process, which forks a new pool
# child whenever one dies (killed, OOM, hard time limit). A fork while that thread is
# inside SQLite, the database driver or redis-py copies their locks, held, into the
# child, which then blocks on its first use of them for ever: the replacement child
# sat in futex_wait and the tasks sent to it never started (tests/reliability; the
# fork-with-threads hazard of docs/reliability.md A1.6). A pass runs under this lock,
# and every fork in the process waits for it (a pass takes milliseconds).
_reconcile_lock = threading.Lock()
os.register_at_fork(before=_reconcile_lock.acquire, after_in_parent=_reconcile_lock.release,
                    after_in_child=_reconcile_lock.release)


@worker_ready.connect
def _start_reconciler(sender=None, **kwargs) -> None:
    interval = settings.KB_RECONCILE_INTERVAL
    if interval > 0:
        threading.Thread(target=_reconcile_forever, args=(interval,), name="kb-reconciler", daemon=True).start()
        log.info("kb: reconciling analyses every %s s", interval)


def _reconcile_forever(interval: float) -> None:
    from kb.services.reconcile import analysis_reconcile

    while True:
        with _reconcile_lock:          # no fork while a pass holds database or Redis locks
            try:
                result = analysis_reconcile()
                if result:
                    log.info(result.summary())
            except Exception:
                log.exception("kb: reconcile pass failed")
            finally:
                connections.close_all()   # this thread's connections only
        time.sleep(interval)


@worker_process_init.connect
def _warm_spark_soon(sender=None, **kwargs) -> None:
    """After the fork, in this pool child: start Spark and warm it in the background,
    so the first upload after `make run` does not wait for a JVM that had time to start."""
    if settings.KB_ENGINE == "spark" and settings.KB_SPARK_WARM_START:
        threading.Thread(target=_warm_spark, name="kb-spark-warm-start", daemon=True).start()


def _warm_spark() -> None:
    """get_spark() then warm_up with the catalog's signatures (analyzers/spark/warmup.py).
    A failure is logged and left to the first task, which reports it on its analysis."""
    from analyzers.signatures import signatures_from_runbooks
    from analyzers.spark import get_spark, warm_up
    from kb.models import Runbook

    t0 = time.monotonic()
    try:
        spark = get_spark(settings.SPARK_MASTER)
        try:
            metas = list(Runbook.objects.order_by("slug").values_list("meta", flat=True))
        finally:
            connections.close_all()   # this thread's connections only
        done = warm_up(spark, signatures_from_runbooks(metas)) if metas else {"workers": []}
        log.info("kb: Spark warm in %.1f s (%d Python workers ready)", time.monotonic() - t0, len(done["workers"]))
    except Exception:
        log.exception("kb: warming Spark failed; the first analysis will start it")
