"""The worker with the Spark engine (KB_ENGINE=spark, the default in a
worker), its warm start turned off (KB_SPARK_WARM_START=false): the pool child
starts its own SparkSession on its first task (never at import, never before
the fork), and the findings equal the local engine's. The warm start is
test_pipeline_spark_warm.py."""

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


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory, shared_db):  # noqa: F811
    yield from start_pipeline(tmp_path_factory, shared_db, engine="spark", concurrency=1,
                              extra_env={"SPARK_MASTER": "local[2]", "KB_LEASE_SECONDS": "60",
                                         "KB_SPARK_WARM_START": "false"})


def test_the_spark_engine_in_the_worker_gives_the_local_findings(pipeline, shared_db, tmp_path):  # noqa: F811
    from analyzers.engine import analyze_paths
    from kb.models import Runbook

    sync_real_runbooks()
    cast = make_cast("s")
    bundle = tmp_path / "seed.tgz"
    with tarfile.open(bundle, "w:gz") as tar:
        tar.add(SEED, arcname=SEED.name, filter=lambda ti: None if ti.name.endswith("expected.json") else ti)
    client = Client()
    ids = []
    started = time.monotonic()
    for name in ("cold.tgz", "warm.tgz"):
        f = io.BytesIO(bundle.read_bytes())
        f.name = name
        response = client.post("/api/v1/analyses", {"file": f}, HTTP_AUTHORIZATION=f"Bearer {cast.alice_token}")
        assert response.status_code == 202
        ids.append(response.json()["id"])

    cold = wait_for_status(ids[0], ("done", "failed"), 240, pipeline.worker)
    warm = wait_for_status(ids[1], ("done", "failed"), 60, pipeline.worker)
    print(f"spark: both done {time.monotonic() - started:.1f} s after upload; "
          f"startup {cold.result['stats']['startup_seconds']} s, warm analysis {warm.result['stats']['seconds']} s")

    assert cold.status == "done", cold.error
    assert cold.result["stats"]["engine"] == "spark" and cold.engine == "spark"
    assert cold.result["stats"]["startup_seconds"] > 0            # this child started the session...
    assert warm.result["stats"]["startup_seconds"] == 0           # ...and kept it warm
    local = analyze_paths([str(bundle)], list(Runbook.objects.order_by("slug").values_list("meta", flat=True)))
    for analysis in (cold, warm):
        assert [(f["runbook"], f["confidence"]) for f in analysis.result["findings"]] == \
               [(f["runbook"], f["confidence"]) for f in local["findings"]]
    assert cold.result["findings"][0]["runbook"] == "hdfs-close-not-enough-replicas"
