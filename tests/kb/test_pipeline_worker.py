"""The whole pipeline with real parts: upload -> Redis -> a Celery worker
(prefork, 2 children, local engine) -> the Analysis row -> the API and pages.

Worker and broker faults from docs/reliability.md (R4 Redis down at upload,
R9 duplicate deliveries) are checked here; the Spark engine in the worker is
test_pipeline_spark.py.
"""

from __future__ import annotations

import io
import re
import tarfile
import time

import pytest
from django.test import Client

from tests.celery_harness import cast, pipeline, shared_db, wait_for, wait_for_status  # noqa: F401  (fixtures)
from tests.helpers import SEED_BUNDLES

pytestmark = [pytest.mark.celery, pytest.mark.timeout(180)]

SEED = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas"
EXPECTED = "hdfs-close-not-enough-replicas"

# The worker rig and the cast (tests/celery_harness.py: pipeline, cast).
RIG = {"engine": "local", "concurrency": 2}
CAST_PREFIX = "w"


@pytest.fixture(scope="module")
def seed_tgz() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(SEED, arcname=SEED.name, filter=lambda ti: None if ti.name.endswith("expected.json") else ti)
    return buf.getvalue()


def _upload(client: Client, token: str, name: str, data: bytes, **extra):
    f = io.BytesIO(data)
    f.name = name
    return client.post("/api/v1/analyses", {"file": f, **extra}, HTTP_AUTHORIZATION=f"Bearer {token}")


def _get(client: Client, token: str, analysis_id: int) -> dict:
    response = client.get(f"/api/v1/analyses/{analysis_id}", HTTP_AUTHORIZATION=f"Bearer {token}")
    assert response.status_code == 200, response.content
    return response.json()


def _poll_api(client: Client, token: str, analysis_id: int, timeout: float, pipeline) -> dict:
    try:
        return wait_for(lambda: (b := _get(client, token, analysis_id))["status"] in ("done", "failed") and b,
                        timeout, 0.2, f"analysis {analysis_id} to finish")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{pipeline.worker.tail()}") from None


def test_an_api_upload_is_analysed_by_the_worker(pipeline, cast, seed_tgz):
    client = Client()
    started = time.monotonic()
    response = _upload(client, cast.alice_token, "checkpoint-failure.tar.gz", seed_tgz)

    assert response.status_code == 202, response.content
    body = response.json()
    assert set(body) == {"id", "url"} and body["url"] == f"/api/v1/analyses/{body['id']}"

    done = _poll_api(client, cast.alice_token, body["id"], 60, pipeline)
    elapsed = time.monotonic() - started
    assert set(done) == {"id", "status", "progress", "error", "result"}
    assert done["status"] == "done", done["error"]
    assert done["progress"] == 100 and done["error"] is None
    slugs = [f["runbook"] for f in done["result"]["findings"]]
    assert slugs[0] == EXPECTED, slugs
    assert done["result"]["stats"]["engine"] == "local"
    print(f"upload -> done via the API in {elapsed:.2f} s")

    from kb.models import Analysis, Incident

    analysis = Analysis.objects.select_related("bundle__incident").get(id=body["id"])
    assert list(analysis.findings.values_list("slug", flat=True)) == slugs
    assert analysis.attempts == 1 and analysis.runbooks_digest and analysis.engine == "local"
    # No incident given: one was opened in alice's team, titled after the file.
    assert analysis.bundle.incident.title == "checkpoint-failure.tar.gz"
    assert analysis.bundle.incident.team == cast.incident.team
    assert Incident.objects.filter(title="checkpoint-failure.tar.gz").count() == 1
    # The unpacked tree is gone; the context lines come from the compressed, line-indexed copy.
    from kb.services.context_store import context_store_lines
    from kb.services.staged import staged_dir

    assert not staged_dir(analysis.bundle, analysis.id).exists()
    evidence = done["result"]["findings"][0]["evidence"][0]
    (line,) = context_store_lines(analysis=analysis, path=evidence["path"], first=evidence["line"],
                                  last=evidence["line"], max_line_bytes=16000)
    assert evidence["text"] in line.raw.decode()


def test_another_teams_token_gets_404_for_the_analysis(pipeline, cast, seed_tgz):
    client = Client()
    analysis_id = _upload(client, cast.alice_token, "b.tgz", seed_tgz).json()["id"]

    response = client.get(f"/api/v1/analyses/{analysis_id}", HTTP_AUTHORIZATION=f"Bearer {cast.mallory_token}")

    assert response.status_code == 404
    assert _poll_api(client, cast.alice_token, analysis_id, 60, pipeline)["status"] == "done"


def test_a_corrupt_archive_fails_with_a_clear_error(pipeline, cast):
    client = Client()
    response = _upload(client, cast.alice_token, "broken.tar.gz", b"this is not gzip data\n" * 50,
                       incident=str(cast.incident.id))
    assert response.status_code == 202

    body = _poll_api(client, cast.alice_token, response.json()["id"], 60, pipeline)

    assert body["status"] == "failed"
    assert body["result"] is None
    assert body["error"].startswith("broken.tar.gz: not a gzip-compressed tar archive"), body["error"]
    assert "\n" not in body["error"] and "Traceback" not in body["error"]


def test_a_duplicate_delivery_writes_once(pipeline, cast, seed_tgz):
    from kb.models import Analysis, Finding
    from kb.tasks import analysis_run_task

    client = Client()
    analysis_id = _upload(client, cast.alice_token, "dup.tgz", seed_tgz).json()["id"]
    # Two more messages for the same analysis: with 2 pool children one runs
    # alongside the first delivery, the other after it.
    analysis_run_task.delay(analysis_id)
    analysis_run_task.delay(analysis_id)

    wait_for_status(analysis_id, ("done",), 60, pipeline.worker)
    wait_for(lambda: pipeline.worker.tail(400).count(f"analysis {analysis_id}: not claimed") == 2, 30, 0.2,
             "both extra deliveries to give up")
    analysis = Analysis.objects.get(id=analysis_id)
    assert analysis.attempts == 1
    slugs = [f["runbook"] for f in analysis.result["findings"]]
    assert list(Finding.objects.filter(analysis=analysis).values_list("slug", flat=True)) == slugs
    assert pipeline.redis.queue_length() == 0


def test_the_web_upload_form_and_its_progress(pipeline, cast, seed_tgz):
    client = Client()
    client.force_login(cast.alice)
    url = f"/incidents/{cast.incident.id}/upload/"
    assert client.get(url).status_code == 200

    f = io.BytesIO(seed_tgz)
    f.name = "from-the-browser.tgz"
    response = client.post(url, {"file": f})

    assert response.status_code == 302
    from kb.models import Analysis

    analysis = Analysis.objects.select_related("bundle").latest("id")
    assert analysis.bundle.original_name == "from-the-browser.tgz"
    assert analysis.bundle.incident_id == cast.incident.id
    assert response["Location"] == f"{url}?analysis={analysis.id}"
    page = client.get(response["Location"])
    assert f"/analyses/{analysis.id}/progress/".encode() in page.content

    partials = []

    def finished():
        partial = client.get(f"/analyses/{analysis.id}/progress/").content.decode()
        partials.append(partial)
        return 'hx-trigger="every 1s"' not in partial

    wait_for(finished, 60, 0.2, "the progress partial to stop polling")
    last = partials[-1]
    assert 'data-status="done"' in last
    assert f'href="/analyses/{analysis.id}/"' in last
    assert re.search(r"Done: \d+ findings?", last)
    assert all('hx-trigger="every 1s"' in p for p in partials[:-1])


def test_with_redis_down_an_upload_returns_at_once_and_runs_when_redis_is_back(pipeline, cast, seed_tgz):
    client = Client()
    web = Client()
    web.force_login(cast.alice)
    pipeline.redis.stop()
    try:
        started = time.monotonic()
        response = _upload(client, cast.alice_token, "while-redis-is-down.tgz", seed_tgz)
        api_seconds = time.monotonic() - started
        f = io.BytesIO(seed_tgz)
        f.name = "web-while-redis-is-down.tgz"
        started = time.monotonic()
        web_response = web.post(f"/incidents/{cast.incident.id}/upload/", {"file": f})
        web_seconds = time.monotonic() - started

        print(f"with Redis down: API upload answered in {api_seconds:.2f} s, web upload in {web_seconds:.2f} s")
        assert response.status_code == 202 and api_seconds < 3, api_seconds
        assert web_response.status_code == 302 and web_seconds < 3, web_seconds
        api_id = response.json()["id"]
        assert _get(client, cast.alice_token, api_id)["status"] == "queued"
        time.sleep(2.5)   # past KB_WAITING_AFTER: the page says it waits for a worker
        web_id = int(web_response["Location"].rsplit("=", 1)[1])
        assert b"Waiting for a worker" in web.get(f"/analyses/{web_id}/progress/").content
    finally:
        pipeline.redis.start()
    back = time.monotonic()

    for analysis_id in (api_id, web_id):
        wait_for_status(analysis_id, ("done",), 90, pipeline.worker)
    print(f"done {time.monotonic() - back:.1f} s after Redis came back")


def test_a_pool_child_killed_mid_analysis_is_rerun_once(pipeline, cast):
    """R1: kill -9 the pool child while it analyses: acks_late + reject_on_worker_lost
    redeliver the message, and the new child takes over the dead child's lease at once."""
    import os
    import signal

    from kb.models import Analysis

    line = (b"2024-03-01 10:00:01,000 INFO org.apache.hadoop.hdfs.server.datanode.DataNode: Receiving "
            b"BP-1:blk_123_456 src: /10.0.0.1:5000 dest: /10.0.0.2:50010 of size 134217728\n")
    data = line * (60 * 1024 * 1024 // len(line)) + \
        b"2024-03-01 10:00:02,000 ERROR DataNode: java.io.IOException: No space left on device\n"
    client = Client()
    analysis_id = _upload(client, cast.alice_token, "dn1-datanode.log", data).json()["id"]

    running = wait_for(lambda: Analysis.objects.filter(id=analysis_id, status="running").first(), 30, 0.02,
                       "the analysis to start")
    victim = int(running.lease_owner.split(":")[1])
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()

    analysis = wait_for_status(analysis_id, ("done", "failed"), 60, pipeline.worker)
    print(f"re-run to done {time.monotonic() - killed:.1f} s after the kill")
    assert analysis.status == "done", analysis.error
    assert analysis.attempts == 2
    assert int(analysis.lease_owner.split(":")[1]) != victim
    slugs = [f["runbook"] for f in analysis.result["findings"]]
    assert "disk-full" in slugs
    assert list(analysis.findings.values_list("slug", flat=True)) == slugs


def test_an_analysis_over_its_soft_time_limit_fails_and_leaves_no_staged_files(pipeline, cast):
    """R7: the soft limit (here 1 s for this one message) fails the analysis with
    "time limit", removes what it staged, and the worker goes on serving."""
    import gzip

    from django.core.files.uploadedfile import SimpleUploadedFile

    from kb.models import Analysis
    from kb.services.bundles import bundle_dir, bundle_store
    from kb.tasks import analysis_run_task

    # 100,000 matching lines: several seconds of work however warm the worker is.
    log = b"".join(b"2024-03-01 10:00:01,000 ERROR org.apache.hadoop.hdfs.DFSClient: Exception in "
                   b"createBlockOutputStream java.io.IOException: Bad connect ack with firstBadLink as "
                   b"10.0.0.%d:50010\n" % (i % 250) for i in range(100_000))
    bundle = bundle_store(incident=cast.incident, user=cast.alice,
                          uploaded_file=SimpleUploadedFile("slow.log.gz", gzip.compress(log)))
    analysis = Analysis.objects.create(team=bundle.team, bundle=bundle)

    analysis_run_task.apply_async((analysis.id,), soft_time_limit=1, time_limit=60)

    failed = wait_for_status(analysis.id, ("done", "failed"), 60, pipeline.worker)
    assert failed.status == "failed", failed.status
    assert failed.error == "time limit: the analysis ran longer than 1 s and was stopped"
    assert not (bundle_dir(bundle) / "staged" / str(analysis.id)).exists()
    assert (bundle_dir(bundle) / "upload").exists()
