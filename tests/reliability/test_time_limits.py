"""R7: analyses past their time limits, with tiny limits set through the
environment of a worker started here (KB_TASK_SOFT_TIME_LIMIT,
KB_TASK_TIME_LIMIT) and slow-* bundles pausing DELAY s (KB_TEST_STAGE_DELAY).

- soft limit: SoftTimeLimitExceeded inside the task -> failed "time limit",
  staged files removed, no redelivery, the worker goes on;
- hard limit (soft limit above it: code that never returns to Python, e.g.
  stuck in native code): the pool child is killed; the analysis must not stay
  "running" nor loop through redeliveries: failed "time limit", worker goes on.
"""

from __future__ import annotations

import time

import pytest
from django.test import Client

from tests.celery_harness import wait_for_status
from tests.reliability.util import api_upload_id, unacked, wait_gone

pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]

DELAY = 15
# The hard-limit test must stop the child before the soft limit fires: under load the
# "running" status can reach the test seconds late, so the soft limit leaves room.
SOFT, HARD = 6, 12


# The worker this module runs against (tests/celery_harness.py: pipeline).
RIG = {"engine": "local", "concurrency": 2,
       "env": {"KB_TEST_STAGE_DELAY": str(DELAY), "KB_RECONCILE_INTERVAL": "1",
               "KB_TASK_SOFT_TIME_LIMIT": str(SOFT), "KB_TASK_TIME_LIMIT": str(HARD)}}
CAST_PREFIX = "tl"   # cast: make_cast(CAST_PREFIX)


def _staged(analysis_id: int):
    from kb.models import Analysis
    from kb.services.bundles import bundle_dir

    a = Analysis.objects.select_related("bundle").get(id=analysis_id)
    return bundle_dir(a.bundle) / "staged" / str(analysis_id)


def test_r7_over_the_soft_limit_fails_with_time_limit_and_the_worker_goes_on(pipeline, cast, seed_tgz, observe):
    client = Client()
    started = time.monotonic()
    analysis_id = api_upload_id(client, cast.alice_token, "slow-soft.tgz", seed_tgz)

    failed = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    observe(f"soft limit {SOFT} s, analysis pausing {DELAY} s: {failed.status} after "
            f"{time.monotonic() - started:.1f} s: {failed.error!r}")
    assert failed.status == "failed"
    assert failed.error == f"time limit: the analysis ran longer than {SOFT} s and was stopped"
    assert failed.attempts == 1
    assert not _staged(analysis_id).exists()
    time.sleep(3)                                   # a reconcile pass or two: no redelivery
    from kb.models import Analysis

    again = Analysis.objects.get(id=analysis_id)
    assert (again.status, again.attempts) == ("failed", 1)
    assert pipeline.redis.queue_length() == 0

    good = api_upload_id(client, cast.alice_token, "quick.tgz", seed_tgz)
    assert wait_for_status(good, ("done", "failed"), 60, pipeline.worker).status == "done"
    observe("no redelivery; the next bundle was analyzed normally")


def test_r7_a_hung_analysis_is_killed_at_the_hard_limit_and_fails_with_time_limit(pipeline, cast, seed_tgz,
                                                                                  observe):
    """The pool child holding the analysis hangs (SIGSTOP: like a process stuck in
    native code or on a dead NFS mount), so the soft limit cannot reach it; the
    hard limit kills it. The analysis fails with "time limit" once: it is not a crash
    to retry (a hung bundle would hang again)."""
    import signal

    from kb.models import Analysis
    from tests.celery_harness import wait_for
    from tests.reliability.conftest import kill

    client = Client()
    analysis_id = api_upload_id(client, cast.alice_token, "slow-hang.tgz", seed_tgz)
    running = wait_for(lambda: Analysis.objects.filter(id=analysis_id, status="running").first(), 30, 0.02,
                       "the analysis to start")
    holder = int(running.lease_owner.split(":")[1])
    kill(holder, signal.SIGSTOP)
    stopped = time.monotonic()
    observe(f"stopped (SIGSTOP) pool child {holder} running analysis {analysis_id}; soft limit {SOFT} s, "
            f"hard limit {HARD} s")

    failed = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    seconds = time.monotonic() - stopped
    observe(f"{failed.status} {seconds:.1f} s later, attempt {failed.attempts}: {failed.error!r}")
    assert failed.status == "failed"
    assert failed.error == (f"time limit: the analysis ran longer than {HARD} s (the hard limit) "
                            "and its worker process was killed"), failed.error
    assert failed.attempts == 1, "a hung analysis is not retried"
    assert not _staged(analysis_id).exists()
    wait_gone([holder], 10)                        # the hard limit killed it (SIGKILL works on a stopped process)
    time.sleep(3)                                  # reconcile passes: no redelivery
    again = Analysis.objects.get(id=analysis_id)
    assert (again.status, again.attempts, again.error) == ("failed", 1, failed.error)
    assert pipeline.redis.queue_length() == 0
    assert unacked(pipeline.redis) == 0           # acknowledged: Redis will not redeliver it either

    good = api_upload_id(client, cast.alice_token, "quick-after-hang.tgz", seed_tgz)
    assert wait_for_status(good, ("done", "failed"), 60, pipeline.worker).status == "done"
    observe("the killed child was replaced; no redelivery; the next bundle was analyzed normally")
