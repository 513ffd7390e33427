"""The Spark worker's warm start (kb/tasks.py): right after the fork, a pool child
starts its SparkSession and warms it with the catalog's signatures in a
background thread, so the first upload after the worker started does not wait
for a JVM, and gives the local engine's findings."""

from __future__ import annotations

import io
import tarfile
import time

import pytest
from django.test import Client

from tests.celery_harness import (  # noqa: F401  (fixtures)
    make_cast,
    shared_db,
    start_pipeline,
    sync_real_runbooks,
    wait_for_status,
)
from tests.helpers import SEED_BUNDLES

pytestmark = [pytest.mark.celery, pytest.mark.spark, pytest.mark.timeout(300)]

SEED = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas"
WARM = "kb: Spark warm in"


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory, shared_db, django_db_blocker):  # noqa: F811
    with django_db_blocker.unblock():
        sync_real_runbooks()   # before the worker starts: its warm-up reads the catalog
    yield from start_pipeline(tmp_path_factory, shared_db, engine="spark", concurrency=1,
                              extra_env={"SPARK_MASTER": "local[2]", "KB_LEASE_SECONDS": "60"})


def _worker_log(pipeline) -> str:
    return pipeline.worker.log.read_text(errors="replace")


def test_the_first_upload_finds_spark_already_warm(pipeline, shared_db, tmp_path):  # noqa: F811
    from analyzers.engine import analyze_paths
    from kb.models import Runbook

    deadline = time.monotonic() + 200
    while WARM not in _worker_log(pipeline):
        assert "warming Spark failed" not in _worker_log(pipeline), _worker_log(pipeline)[-3000:]
        assert time.monotonic() < deadline, "the worker never said Spark was warm:\n" + _worker_log(pipeline)[-3000:]
        time.sleep(0.5)
    cast = make_cast("w")
    bundle = tmp_path / "seed.tgz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(SEED, arcname=SEED.name, filter=lambda ti: None if ti.name.endswith("expected.json") else ti)
    f = io.BytesIO(bundle.read_bytes())
    f.name = "first.tgz"
    response = Client().post("/api/v1/analyses", {"file": f}, HTTP_AUTHORIZATION=f"Bearer {cast.alice_token}")
    assert response.status_code == 202
    first = wait_for_status(response.json()["id"], ("done", "failed"), 120, pipeline.worker)

    assert first.status == "done", first.error
    assert first.result["stats"]["engine"] == "spark"
    assert first.result["stats"]["startup_seconds"] == 0   # the session was up before the upload
    local = analyze_paths([str(bundle)], list(Runbook.objects.order_by("slug").values_list("meta", flat=True)))
    assert [(f["runbook"], f["confidence"]) for f in first.result["findings"]] == \
           [(f["runbook"], f["confidence"]) for f in local["findings"]]
