"""Ten bundles uploaded at once by ten users of two teams, through the API,
to one real worker (prefork -c 2, local engine): every analysis ends done with
the findings of its own bundle (the same as analyzing that bundle in process),
in its uploader's team, and nobody sees the other team's analyses."""

from __future__ import annotations

import threading
import time

import pytest
from django.test import Client

from tests.celery_harness import sync_real_runbooks, wait_for_status
from tests.reliability.util import api_get, api_upload, case_dir, tgz_of

pytestmark = [pytest.mark.celery, pytest.mark.timeout(300)]

SLUGS = ["disk-full", "jvm-heap-oom", "too-many-open-files", "kafka-offset-out-of-range", "hdfs-block-missing",
         "zookeeper-too-many-connections", "yarn-local-dirs-bad", "jvm-metaspace-oom", "hbase-region-too-busy",
         "spark-shuffle-fetch-failed"]


# The worker this module runs against (tests/celery_harness.py: pipeline).
RIG = {"engine": "local", "concurrency": 2}


@pytest.fixture(scope="module")
def people(shared_db):  # noqa: F811
    """Ten users, five in team Blue and five in team Green, each with a token."""
    from django.contrib.auth import get_user_model

    from kb.models import Membership, Team
    from kb.services.tokens import token_create

    sync_real_runbooks()
    teams = [Team.objects.create(name=f"cu {c}", slug=f"cu-{c}") for c in ("blue", "green")]
    out = []
    for i in range(10):
        user = get_user_model().objects.create_user(f"cu-user{i}", password="pw")
        team = teams[i % 2]
        Membership.objects.create(user=user, team=team)
        out.append({"user": user, "team": team, "token": token_create(user=user)[1], "slug": SLUGS[i]})
    return out


def test_ten_concurrent_uploads_by_two_teams_each_get_their_own_findings(pipeline, people, tmp_path, observe):
    from analyzers.engine import analyze_paths
    from kb.models import Analysis, Runbook

    runbooks = list(Runbook.objects.order_by("slug").values_list("meta", flat=True))
    bundles = {p["slug"]: tgz_of(case_dir(p["slug"]), arcname=p["slug"]) for p in people}
    expected = {}
    for slug, data in bundles.items():
        path = tmp_path / f"{slug}.tgz"
        path.write_bytes(data)
        expected[slug] = analyze_paths([str(path)], runbooks)["findings"]
        assert slug in [f["runbook"] for f in expected[slug]], slug

    ids: dict[str, int] = {}
    errors: list[str] = []
    barrier = threading.Barrier(len(people))

    def upload(person):
        try:
            barrier.wait(10)
            response = api_upload(Client(), person["token"], f"{person['slug']}.tgz", bundles[person["slug"]])
            assert response.status_code == 202, response.content
            ids[person["slug"]] = response.json()["id"]
        except BaseException as exc:   # noqa: BLE001 - reported below
            errors.append(f"{person['slug']}: {exc!r}")
        finally:
            from django.db import connections

            connections.close_all()

    threads = [threading.Thread(target=upload, args=(p,)) for p in people]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    observe(f"10 users of 2 teams uploaded 10 different bundles at once: {len(ids)} accepted in "
            f"{time.monotonic() - t0:.1f} s, errors {errors}")
    assert not errors and len(ids) == 10

    for slug, analysis_id in ids.items():
        wait_for_status(analysis_id, ("done", "failed"), 120, pipeline.worker)
    observe(f"all 10 finished {time.monotonic() - t0:.1f} s after the first upload")

    for person in people:
        a = Analysis.objects.select_related("bundle__incident").get(id=ids[person["slug"]])
        assert a.status == "done", (person["slug"], a.error)
        assert a.attempts == 1
        assert a.team_id == person["team"].id and a.bundle.incident.team_id == person["team"].id
        assert a.bundle.uploaded_by_id == person["user"].id
        got = [(f["runbook"], f["confidence"]) for f in a.result["findings"]]
        assert got == [(f["runbook"], f["confidence"]) for f in expected[person["slug"]]], person["slug"]
        assert list(a.findings.order_by("rank").values_list("slug", flat=True)) == [g[0] for g in got]
    observe("each analysis has exactly the findings of its own bundle (as analyzed in process), "
            "in its uploader's team")

    client = Client()
    seen = {}
    for viewer in people:
        for owner in people:
            status = api_get(client, viewer["token"], ids[owner["slug"]]).status_code
            assert status == (200 if viewer["team"] == owner["team"] else 404), (viewer["slug"], owner["slug"])
            seen[status] = seen.get(status, 0) + 1
    observe(f"every user asked for every analysis through the API: {seen} (200 = own team, 404 = the other)")

    from kb.models import Incident

    web = Client()
    web.force_login(people[0]["user"])
    listing = web.get("/incidents/").content.decode()
    for owner in people:
        title = Incident.objects.get(bundles__analyses__id=ids[owner["slug"]]).title
        assert (title in listing) == (owner["team"] == people[0]["team"]), title
        page = web.get(f"/analyses/{ids[owner['slug']]}/")
        assert page.status_code == (200 if owner["team"] == people[0]["team"] else 404)
    observe("the incident list and analysis pages of a Blue user show Blue's five uploads only")
