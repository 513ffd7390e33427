"""Broker faults with a real redis-server (no persistence, like a cache-style
Redis) and a real prefork worker (-c 2, local engine):

R4  Redis down while bundles are uploaded through the web form and the API
R5  Redis restarted while the worker idles, then an upload
R6  Redis restarted while an analysis runs
R12 the worker answers `celery inspect ping` while its pool is busy
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import time

import pytest
from django.test import Client

from tests.celery_harness import wait_for, wait_for_status
from tests.helpers import ROOT
from tests.reliability.util import api_get, api_upload, api_upload_id, result_core

pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]

DELAY = 4


# The worker this module runs against (tests/celery_harness.py: pipeline).
RIG = {"engine": "local", "concurrency": 2,
       "env": {"KB_TEST_STAGE_DELAY": str(DELAY), "KB_RECONCILE_INTERVAL": "1"}}
CAST_PREFIX = "bf"   # cast: make_cast(CAST_PREFIX)


@pytest.fixture(scope="module")
def reference(pipeline, cast, seed_tgz):
    analysis_id = api_upload_id(Client(), cast.alice_token, "seed.tgz", seed_tgz)
    analysis = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    assert analysis.status == "done", analysis.error
    return analysis.result


def _web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _assert_done_once(analysis_id: int, reference) -> None:
    from kb.models import Analysis

    a = Analysis.objects.get(id=analysis_id)
    assert (a.status, a.attempts) == ("done", 1), (a.status, a.attempts, a.error)
    assert result_core(a.result) == result_core(reference)
    slugs = [f["runbook"] for f in a.result["findings"]]
    assert list(a.findings.order_by("rank").values_list("slug", flat=True)) == slugs


def test_r4_with_redis_down_uploads_answer_at_once_wait_visibly_and_run_once_redis_is_back(
        pipeline, cast, seed_tgz, reference, observe):
    from kb.models import Analysis

    api, web = Client(), _web(cast.alice)
    pipeline.redis.stop()
    observe("stopped redis-server")
    try:
        t0 = time.monotonic()
        response = api_upload(api, cast.alice_token, "seed.tgz", seed_tgz)
        api_seconds = time.monotonic() - t0
        f = io.BytesIO(seed_tgz)
        f.name = "seed.tgz"
        t0 = time.monotonic()
        page = web.post(f"/incidents/{cast.incident.id}/upload/", {"file": f})
        web_seconds = time.monotonic() - t0
        observe(f"with Redis down: API upload -> {response.status_code} in {api_seconds:.2f} s, "
                f"web upload -> {page.status_code} in {web_seconds:.2f} s")
        assert response.status_code == 202 and api_seconds < 3
        assert page.status_code == 302 and web_seconds < 3
        api_id, web_id = response.json()["id"], int(page["Location"].rsplit("=", 1)[1])
        for analysis_id in (api_id, web_id):
            a = Analysis.objects.select_related("bundle").get(id=analysis_id)
            assert a.status == "queued" and a.enqueued is None
            assert os.path.getsize(a.bundle.stored_path) == len(seed_tgz)   # the upload is kept
        assert api_get(api, cast.alice_token, api_id).json()["status"] == "queued"

        time.sleep(3)   # past KB_WAITING_AFTER (2 s here), several failed reconcile passes
        waiting = "Waiting for a worker"
        pages = {
            "progress partial": web.get(f"/analyses/{web_id}/progress/"),
            "upload page": web.get(page["Location"]),
            "analysis page": web.get(f"/analyses/{web_id}/"),
            "incident page": web.get(f"/incidents/{cast.incident.id}/"),
        }
        seen = {name: waiting in r.content.decode() for name, r in pages.items()}
        observe(f"'{waiting}' shown on: {seen}")
        assert all(r.status_code == 200 for r in pages.values())
        assert all(seen.values()), seen
        assert Analysis.objects.get(id=api_id).status == "queued"
    finally:
        pipeline.redis.start()
    back = time.monotonic()
    observe("started redis-server again (empty: no persistence)")

    for analysis_id in (api_id, web_id):
        wait_for_status(analysis_id, ("done", "failed"), 90, pipeline.worker)
        _assert_done_once(analysis_id, reference)
    observe(f"both analyses done once (attempt 1, findings as an undisturbed run) "
            f"{time.monotonic() - back:.1f} s after Redis came back")


def test_r5_after_a_redis_restart_while_idle_a_new_upload_starts_within_60_s(pipeline, cast, seed_tgz, reference,
                                                                           observe):
    from kb.models import Analysis

    pipeline.redis.stop()
    time.sleep(2)
    pipeline.redis.start()
    observe("restarted redis-server while the worker was idle")
    time.sleep(1)

    t0 = time.monotonic()
    analysis_id = api_upload_id(Client(), cast.alice_token, "after-restart.tgz", seed_tgz)
    wait_for(lambda: Analysis.objects.filter(id=analysis_id).exclude(status="queued").exists(), 60, 0.1,
             "the analysis to start")
    started = time.monotonic() - t0
    wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    _assert_done_once(analysis_id, reference)
    observe(f"the next upload started {started:.1f} s after it was sent and was done once")
    assert started < 60


def test_r6_a_redis_restart_during_an_analysis_leaves_one_result(pipeline, cast, seed_tgz, reference, observe):
    analysis_id = api_upload_id(Client(), cast.alice_token, "slow-during-restart.tgz", seed_tgz)
    from kb.models import Analysis

    wait_for(lambda: Analysis.objects.filter(id=analysis_id, status="running").exists(), 30, 0.05,
             "the analysis to start")
    pipeline.redis.stop()
    observe(f"stopped redis-server while analysis {analysis_id} runs")
    time.sleep(2)
    pipeline.redis.start()
    observe("started it again")

    a = wait_for_status(analysis_id, ("done", "failed"), 90, pipeline.worker)
    assert a.status == "done", a.error
    assert a.attempts == 1, "one execution wrote the result"
    assert [f["runbook"] for f in a.result["findings"]] == [f["runbook"] for f in reference["findings"]]
    assert list(a.findings.order_by("rank").values_list("slug", flat=True)) == \
        [f["runbook"] for f in a.result["findings"]]
    observe(f"analysis {analysis_id} done once (attempt 1); worker log mentions the loss: "
            f"{'Connection to broker lost' in pipeline.worker.tail(200)}")
    time.sleep(2)
    assert pipeline.worker.proc.poll() is None, "the worker exited:\n" + pipeline.worker.tail(80)

    after = api_upload_id(Client(), cast.alice_token, "after-r6.tgz", seed_tgz)
    assert wait_for_status(after, ("done", "failed"), 90, pipeline.worker).status == "done"
    observe("the worker consumed the next upload normally")


def _worker_name(worker) -> str:
    for line in reversed(worker.log.read_text(errors="replace").splitlines()):
        if line.endswith(" ready."):
            return line.rsplit(" ", 2)[-2]
    raise AssertionError("no 'ready.' line in the worker log")


def test_r12_the_worker_answers_ping_while_its_pool_is_busy(pipeline, cast, seed_tgz, observe):
    from kb.celery import app
    from kb.models import Analysis

    line = (b"2024-03-01 10:00:01,000 ERROR org.apache.hadoop.hdfs.server.datanode.DataNode: "
            b"DataXceiver error processing WRITE_BLOCK operation src: /10.0.0.1:5000 dst: /10.0.0.2:50010\n")
    heavy = line * (40 * 1024 * 1024 // len(line))
    ids = [api_upload_id(Client(), cast.alice_token, f"busy-{i}.log", heavy) for i in range(3)]
    wait_for(lambda: Analysis.objects.filter(id__in=ids, status="running").count() == 2, 60, 0.05,
             "both pool children to be busy")
    name = _worker_name(pipeline.worker)

    replies, times = [], []
    for _ in range(3):
        t0 = time.monotonic()
        replies.append(app.control.ping(destination=[name], timeout=5))
        times.append(time.monotonic() - t0)
    env = dict(pipeline.worker.env)
    t0 = time.monotonic()
    cli = subprocess.run([sys.executable, "-m", "celery", "-A", "kb", "inspect", "ping", "-d", name,
                          "--timeout", "5"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    cli_seconds = time.monotonic() - t0
    busy = Analysis.objects.filter(id__in=ids, status="running").count()
    observe(f"with {busy} analyses running: control.ping answered in "
            f"{', '.join(f'{t:.2f}' for t in times)} s; `celery inspect ping` exited {cli.returncode} "
            f"in {cli_seconds:.1f} s (incl. its own start-up)")
    assert all(r and name in r[0] for r in replies), replies
    assert max(times) < 5
    assert cli.returncode == 0 and "pong" in cli.stdout, cli.stdout + cli.stderr
    for analysis_id in ids:
        assert wait_for_status(analysis_id, ("done", "failed"), 120, pipeline.worker).status == "done"
