"""A symptom drafted by a team is that team's (issue 12's leak, issue 17's governance): "Draft a
runbook from a lead" stores the runbook AND its new symptom as team A's, so team B never sees
the symptom's words (its page, its editor, search, the runbook editor's library, the API, its
analyses) until a maintainer publishes the runbook, which publishes the symptom with it.

Real DB, real client, the real catalog (sync_runbooks) and real analyses (analysis_run, the
worker's code path with the local engine) of a real incident log: tests/fixtures/leads/
hbase-master-npe-waiting-for-meta (provenance in its SOURCE.md), which no shipped runbook covers.
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from kb.models import Analysis, Incident, Runbook, Symptom
from kb.selectors.catalog import catalog_metas, symptom_catalog
from kb.services.analyses import analysis_run, analysis_upload
from kb.services.export import runbook_text
from kb.services.tokens import token_create
from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import FIXTURES

pytestmark = pytest.mark.django_db

SLUG = "hdfs-close-not-enough-replicas"
CASE = FIXTURES / "leads" / "hbase-master-npe-waiting-for-meta"


@pytest.fixture
def real_catalog(db):
    call_command("sync_runbooks", stdout=open(os.devnull, "w"))


@pytest.fixture
def local_engine(settings, tmp_path, no_broker):
    settings.KB_ENGINE = "local"
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.DRAFT_FIXTURES_DIR = tmp_path / "drafts"


@pytest.fixture
def upload() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(CASE / "hbase-master.log", arcname="hbase/hbase-master.log")
    return buf.getvalue()


def _analyse(user, team, data: bytes) -> Analysis:
    incident = Incident.objects.create(team=team, title="master down", created_by=user)
    analysis = analysis_upload(user=user, incident=incident,
                               uploaded_file=SimpleUploadedFile("hbase-master.tar.gz", data))
    assert analysis_run(analysis_id=analysis.id, owner="test")
    return Analysis.objects.get(pk=analysis.pk)


def _draft(client, admin, analysis: Analysis) -> tuple[Runbook, Symptom]:
    client.force_login(admin)
    url = reverse("lead_draft", args=[analysis.pk, 1])
    form = client.get(url).context["form"]
    response = client.post(url, {"symptom": form.initial["symptom"], "text": form.initial["text"]})
    assert response.status_code == 302, response.content[:2000]
    return Runbook.objects.get(team=analysis.team), Symptom.objects.get(team=analysis.team)


def _slugs(analysis: Analysis) -> list[str]:
    return [f["runbook"] for f in analysis.result["findings"]]


@pytest.fixture
def drafted(client, bob, team, real_catalog, local_engine, upload):
    """bob (an admin of Ops) drafts lead 1 of his analysis of the incident into a runbook."""
    first = _analyse(bob, team, upload)
    assert not first.result["findings"] and first.result["leads"]
    return _draft(client, bob, first)


def test_another_team_never_sees_or_matches_a_drafted_symptom(client, bob, mallory, team, other_team, drafted,
                                                              upload):
    runbook, symptom = drafted
    words = symptom.title
    assert runbook.team == team and symptom.team == team and not symptom.published
    assert symptom.uses.get().runbook == runbook

    client.force_login(mallory)
    for name in ("symptom_detail", "symptom_edit"):
        assert client.get(reverse(name, args=[symptom.id])).status_code == 404
    links = (reverse("symptom_detail", args=[symptom.id]), reverse("runbook_detail", args=[runbook.slug]))
    for query in (words, symptom.id, "HMaster"):   # the search page repeats the query: look for hits
        html = client.get(reverse("search"), {"q": query}).content.decode()
        assert not any(link in html for link in links)
    for page in (client.get(reverse("runbook_list")), client.get(reverse("home"))):
        html = page.content.decode()
        assert page.status_code == 200 and symptom.id not in html and words not in html and runbook.slug not in html
    # The runbook editor's library is the team's: naming the symptom copies nothing in.
    # A valid team runbook (a shipped one renamed) whose first symptom is team A's drafted one.
    shipped = Runbook.objects.get(slug=SLUG)
    first = shipped.meta["symptoms"][0]["id"]
    text = runbook_text(runbook=shipped).replace(f"slug: {SLUG}", "slug: other-copy", 1)
    assert f"id: {first}" in text
    response = client.post(reverse("runbook_new"), {"text": text.replace(f"id: {first}", f"id: {symptom.id}", 1),
                                                        "team": other_team.pk})
    assert response.status_code == 400 and "unknown symptom" in response.content.decode(), response.context["form"].errors
    assert not Runbook.objects.filter(slug="other-copy").exists()
    assert client.post(reverse("runbook_new"), {"text": text, "team": other_team.pk}).status_code == 302   # the same, with its own: saved
    assert symptom.id not in json.dumps(catalog_metas(team=other_team))

    theirs = _analyse(mallory, other_team, upload)
    token = token_create(user=mallory)[1]
    body = client.get(f"/api/v1/analyses/{theirs.pk}", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert body["status"] == "done" and symptom.id not in json.dumps(body["result"])
    assert runbook.slug not in _slugs(theirs)
    page = client.get(reverse("analysis_detail", args=[theirs.pk])).content.decode()
    assert symptom.id not in page and runbook.slug not in page

    # Team A (Ops) sees its own symptom and its re-analysis names the drafted runbook.
    client.force_login(bob)
    assert words in client.get(reverse("symptom_detail", args=[symptom.id])).content.decode()
    assert links[1] in client.get(reverse("search"), {"q": symptom.id}).content.decode()
    assert _slugs(_analyse(bob, team, upload)) == [runbook.slug]


def test_publishing_the_runbook_publishes_its_symptom_for_every_team(client, bob, carol, mallory, team, other_team,
                                                                     drafted, upload):
    runbook, symptom = drafted
    client.force_login(mallory)
    assert client.get(reverse("symptom_detail", args=[symptom.id])).status_code == 404

    client.force_login(carol)   # a maintainer reviews the team's symptom, then publishes the runbook
    assert client.get(reverse("symptom_detail", args=[symptom.id])).status_code == 200
    assert client.post(reverse("runbook_publish", args=[runbook.slug]), {"published": "1"}).status_code == 302
    symptom.refresh_from_db()
    assert symptom.published

    client.force_login(mallory)
    assert symptom.title in client.get(reverse("symptom_detail", args=[symptom.id])).content.decode()
    assert _slugs(_analyse(mallory, other_team, upload)) == [runbook.slug]
    assert _slugs(_analyse(bob, team, upload)) == [runbook.slug]

    client.force_login(carol)   # unpublished again: hidden again from the other team
    client.post(reverse("runbook_publish", args=[runbook.slug]), {"published": "0"})
    client.force_login(mallory)
    assert client.get(reverse("symptom_detail", args=[symptom.id])).status_code == 404


def test_the_team_admin_edits_its_own_symptom_in_place_another_team_cannot(client, bob, mallory, drafted):
    runbook, symptom = drafted
    client.force_login(bob)
    edit = reverse("symptom_edit", args=[symptom.id])
    text = client.get(edit).context["form"].initial["text"]
    new_title = "HMaster gives up becoming the active master"
    text = re.sub(r"^title: .*$", f"title: {new_title}", text, count=1, flags=re.M)
    assert new_title in text
    assert client.post(edit, {"text": text, "message": "clearer"}).status_code == 302
    symptom.refresh_from_db()
    assert symptom.title == new_title and not symptom.overlays.exists()
    client.force_login(mallory)
    assert client.post(edit, {"text": text}).status_code == 404


def test_a_sync_that_carries_the_drafted_symptom_makes_it_the_librarys(drafted, runbooks_dir):
    """Reviewed into runbooks/symptoms/ (export_runbooks writes the file), it is every team's."""
    from kb.services.symptoms import symptom_text
    from kb.services.sync import runbook_sync

    _, symptom = drafted
    (runbooks_dir / "symptoms" / f"{symptom.id}.yaml").write_text(symptom_text(symptom=symptom), encoding="utf-8")
    runbook_sync(directory=runbooks_dir)
    symptom.refresh_from_db()
    assert symptom.team is None and not symptom.published
    assert symptom_catalog(team=None).filter(id=symptom.id).exists()
