"""Worker faults with a real Redis and a real prefork worker (-c 2, local engine):
R1 pool child killed, R2 main process killed, R3 SIGTERM, R8 a bundle that
kills its worker every time, R9 the same message delivered twice at once.

The worker pauses slow-* bundles 4 s between unpacking and scanning
(KB_TEST_STAGE_DELAY), so every fault lands mid-analysis: the lease is held,
the staged files are on disk, no result is written yet.
"""

from __future__ import annotations

import signal
import time

import pytest
from django.test import Client

from tests.celery_harness import wait_for, wait_for_status
from tests.reliability.conftest import kill, restart_worker
from tests.reliability.util import (
    SEED_FINDING,
    alive,
    api_upload_id,
    descendants,
    pool_children,
    result_core,
    wait_gone,
)

pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]

DELAY = 4
RECONCILE_INTERVAL = 2


# The worker this module runs against (tests/celery_harness.py: pipeline).
RIG = {"engine": "local", "concurrency": 2,
       "env": {"KB_TEST_STAGE_DELAY": str(DELAY),
               "KB_RECONCILE_INTERVAL": str(RECONCILE_INTERVAL)}}
CAST_PREFIX = "wf"   # cast: make_cast(CAST_PREFIX)


@pytest.fixture(scope="module")
def undisturbed(pipeline, cast, seed_tgz):
    """The result of an undisturbed run of slow-seed.tgz: what every disturbed run must give."""
    analysis_id = api_upload_id(Client(), cast.alice_token, "slow-seed.tgz", seed_tgz)
    analysis = wait_for_status(analysis_id, ("done", "failed"), 90, pipeline.worker)
    assert analysis.status == "done", analysis.error
    assert analysis.attempts == 1
    assert analysis.result["findings"][0]["runbook"] == SEED_FINDING
    return analysis.result


def _running_mid_analysis(analysis_id: int, pipeline, timeout: float = 60):
    """The row once its holder is past unpacking (staged files on disk) and in the pause."""
    from kb.models import Analysis
    from kb.services.bundles import bundle_dir

    def ready():
        a = Analysis.objects.select_related("bundle").filter(id=analysis_id, status="running").first()
        if a is None:
            return None
        staged = bundle_dir(a.bundle) / "staged" / str(analysis_id)
        return a if list(staged.glob("staged-*")) else None

    return wait_for(ready, timeout, 0.05, f"analysis {analysis_id} to be mid-analysis")


def _holder_pid(analysis) -> int:
    return int(analysis.lease_owner.split(":")[1])


def _assert_done_once(analysis_id: int, undisturbed, attempts: int):
    from kb.models import Analysis, Finding
    from kb.services.bundles import bundle_dir

    a = Analysis.objects.select_related("bundle").get(id=analysis_id)
    assert a.status == "done", a.error
    assert a.attempts == attempts, a.attempts
    assert result_core(a.result) == result_core(undisturbed)
    slugs = [f["runbook"] for f in a.result["findings"]]
    rows = list(Finding.objects.filter(analysis_id=analysis_id).order_by("rank").values_list("slug", flat=True))
    assert rows == slugs, (rows, slugs)               # one row per finding: no duplicates
    # The unpacked tree goes after the analysis (the killed run's with it: the rerun starts clean);
    # the context store was rewritten whole by the run that finished.
    assert not (bundle_dir(a.bundle) / "staged" / str(analysis_id)).exists()
    assert (bundle_dir(a.bundle) / "context" / str(analysis_id) / "manifest.json").is_file()
    return a


def test_r1_a_pool_child_killed_mid_analysis_reruns_to_the_same_result(pipeline, cast, seed_tgz, undisturbed,
                                                                       observe):
    """R1: kill -9 the pool child holding the analysis; acks_late + reject_on_worker_lost
    requeue the message at once, and the next child takes over the dead child's lease."""
    analysis_id = api_upload_id(Client(), cast.alice_token, "slow-seed.tgz", seed_tgz)
    running = _running_mid_analysis(analysis_id, pipeline)
    victim = _holder_pid(running)
    assert victim in pool_children(pipeline.worker.proc.pid), "the lease holder is a pool child"

    kill(victim)
    killed = time.monotonic()
    observe(f"killed pool child {victim} (SIGKILL) holding analysis {analysis_id} mid-analysis")

    wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    recovery = time.monotonic() - killed
    a = _assert_done_once(analysis_id, undisturbed, attempts=2)
    assert _holder_pid(a) != victim
    observe(f"analysis {analysis_id} done {recovery:.1f} s after the kill (incl. the {DELAY} s pause of the "
            f"rerun), attempt 2, findings identical to the undisturbed run, one Finding row each")
    assert recovery < 30 + DELAY
    assert pipeline.worker.proc.poll() is None


def test_r9_the_same_message_twice_at_once_writes_once(pipeline, cast, seed_tgz, undisturbed, observe):
    """R9: a second delivery of the same message (same task id) while the first runs:
    it finds the lease taken and leaves without writing."""
    from kb.tasks import analysis_run_task

    analysis_id = api_upload_id(Client(), cast.alice_token, "slow-seed.tgz", seed_tgz)
    running = _running_mid_analysis(analysis_id, pipeline)
    task_id = running.lease_owner.split(":", 2)[2]
    analysis_run_task.apply_async((analysis_id,), task_id=task_id)
    observe(f"sent the message of analysis {analysis_id} again (task id {task_id}) while child "
            f"{_holder_pid(running)} runs it")

    wait_for(lambda: f"analysis {analysis_id}: not claimed" in pipeline.worker.tail(300), 30, 0.1,
             "the second delivery to give up")
    wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    _assert_done_once(analysis_id, undisturbed, attempts=1)
    observe("the second delivery logged 'not claimed' and wrote nothing; done once, attempt 1")
    assert pipeline.redis.queue_length() == 0


def test_r8_a_bundle_that_kills_its_worker_every_time_fails_after_max_attempts(pipeline, cast, seed_tgz, observe,
                                                                               settings):
    """R8: every run of this analysis dies (here: SIGKILL from outside, like the OOM killer on a
    poison bundle). After KB_MAX_ATTEMPTS claims it fails with "worker crashed N times"; the
    queue drains and the worker goes on serving."""
    from kb.models import Analysis

    analysis_id = api_upload_id(Client(), cast.alice_token, "slow-poison.tgz", seed_tgz)
    victims: list[int] = []
    max_attempts = settings.KB_MAX_ATTEMPTS
    while len(victims) < max_attempts:
        running = wait_for(
            lambda: Analysis.objects.filter(id=analysis_id, status="running", attempts=len(victims) + 1).first(),
            60, 0.05, f"attempt {len(victims) + 1}")
        victims.append(_holder_pid(running))
        kill(victims[-1])
        observe(f"attempt {len(victims)}: killed child {victims[-1]}")

    failed = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    assert failed.status == "failed"
    assert failed.error.startswith(f"the worker crashed {max_attempts} times on this analysis"), failed.error
    observe(f"analysis {analysis_id} failed: {failed.error!r}")
    time.sleep(RECONCILE_INTERVAL + 1)   # no further attempt, no message left
    assert Analysis.objects.get(id=analysis_id).attempts == max_attempts
    assert pipeline.redis.queue_length() == 0

    good = api_upload_id(Client(), cast.alice_token, "after-poison.tgz", seed_tgz)
    assert wait_for_status(good, ("done", "failed"), 60, pipeline.worker).status == "done"
    observe("the queue drained; the next bundle was analyzed normally")


def test_r3_sigterm_mid_analysis_finishes_it_then_stops(pipeline, cast, seed_tgz, undisturbed, observe):
    """R3: SIGTERM (a deploy) = warm shutdown: the running analysis finishes before the
    worker exits; what is queued meanwhile waits in Redis and runs after the restart."""
    client = Client()
    analysis_id = api_upload_id(client, cast.alice_token, "slow-seed.tgz", seed_tgz)
    _running_mid_analysis(analysis_id, pipeline)
    worker = pipeline.worker
    worker.proc.send_signal(signal.SIGTERM)
    stopped = time.monotonic()
    observe(f"SIGTERM to the worker (pid {worker.proc.pid}) while analysis {analysis_id} runs")
    waiting_id = api_upload_id(client, cast.alice_token, "after-sigterm.tgz", seed_tgz)

    worker.proc.wait(60)
    observe(f"the worker exited with {worker.proc.returncode} {time.monotonic() - stopped:.1f} s after SIGTERM")
    _assert_done_once(analysis_id, undisturbed, attempts=1)
    from kb.models import Analysis

    assert Analysis.objects.get(id=waiting_id).status == "queued"
    observe(f"analysis {analysis_id} was finished before the exit (attempt 1); "
            f"analysis {waiting_id} waits queued")

    worker.proc = None
    restart_worker(pipeline)
    back = time.monotonic()
    assert wait_for_status(waiting_id, ("done", "failed"), 60, pipeline.worker).status == "done"
    observe(f"after the restart analysis {waiting_id} was done in {time.monotonic() - back:.1f} s")


def test_r2_the_main_worker_process_killed_mid_analysis_recovers_after_restart(pipeline, cast, seed_tgz,
                                                                               undisturbed, observe):
    """R2: kill -9 the worker's main process. Its pool children die with it (PDEATHSIG);
    the message stays unacked in Redis (redelivered only after the visibility timeout),
    so the reconciler of the restarted worker puts the analysis back: its holder is a
    dead process of this host. Bound: worker start + KB_RECONCILE_INTERVAL + the rerun."""
    analysis_id = api_upload_id(Client(), cast.alice_token, "slow-seed.tgz", seed_tgz)
    running = _running_mid_analysis(analysis_id, pipeline)
    main = pipeline.worker.proc.pid
    tree = descendants(main)
    assert _holder_pid(running) in tree

    kill(main)
    killed = time.monotonic()
    pipeline.worker.proc.wait(10)
    observe(f"killed the worker's main process {main} (SIGKILL); its tree was {tree}")
    wait_gone(tree, 15)
    observe(f"no orphan: all {len(tree)} pool processes gone {time.monotonic() - killed:.1f} s after the kill")

    pipeline.worker.proc = None
    restart_worker(pipeline)
    ready = time.monotonic()
    wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    done = time.monotonic()
    a = _assert_done_once(analysis_id, undisturbed, attempts=2)
    assert "reconcile: 0 sent, 1 expired leases" in pipeline.worker.tail(400) or \
        "1 expired leases" in pipeline.worker.tail(400)
    observe(f"worker restarted in {ready - killed:.1f} s; the reconciler requeued analysis {analysis_id}; "
            f"done {done - ready:.1f} s after the restart (rerun pause {DELAY} s, reconcile interval "
            f"{RECONCILE_INTERVAL} s), {done - killed:.1f} s after the kill; attempt {a.attempts}, same findings")
    assert done - ready < RECONCILE_INTERVAL + DELAY + 30


def test_the_worker_still_serves(pipeline, cast, seed_tgz, observe):
    analysis_id = api_upload_id(Client(), cast.alice_token, "last.tgz", seed_tgz)
    assert wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker).status == "done"
    assert not [p for p in pool_children(pipeline.worker.proc.pid) if not alive(p)]
    observe("after all the faults a bundle is analyzed normally")
