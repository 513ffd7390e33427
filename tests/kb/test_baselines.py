"""Baselines on the web (issue 12): an analysis marked healthy by a team member is the baseline a
re-analysis of an incident takes; its bundle's templates drop out of the leads. The bundles are
real incident logs (tests/fixtures/leads/*, provenance in their SOURCE.md), stored as uploads
and analysed in-process by the pipeline's own code (the real engine). Another team's analysis is
never a baseline, and nobody outside the team marks an analysis healthy."""

from __future__ import annotations

import io
import tarfile

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from kb.models import Analysis
from kb.services.analyses import analysis_run
from kb.services.baselines import BaselineError, analysis_mark_healthy, analysis_reanalyze_with_baseline
from kb.services.bundles import bundle_store
from tests.cast import make_incident
from tests.celery_harness import no_broker  # noqa: F401  (fixture)
from tests.helpers import FIXTURES

HBASE = FIXTURES / "leads" / "hbase-master-npe-waiting-for-meta" / "hbase-master.log"
ZOOKEEPER = FIXTURES / "leads" / "zookeeper-leader-cannot-bind-quorum-port" / "zookeeper.log"


@pytest.fixture
def bundles(settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.KB_ENGINE = "local"
    return settings.BUNDLES_DIR


def _tar(*paths) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for p in paths:
            tar.add(str(p), arcname=p.name)
    return out.getvalue()


def _analysed(incident, name: str, data: bytes, baseline: Analysis | None = None) -> Analysis:
    bundle = bundle_store(incident=incident, user=incident.created_by, uploaded_file=SimpleUploadedFile(name, data))
    analysis = Analysis.objects.create(team=bundle.team, bundle=bundle, baseline=baseline)
    assert analysis_run(analysis_id=analysis.id, owner="h:1:t")
    analysis.refresh_from_db()
    assert analysis.status == "done", analysis.error
    return analysis


def _lead_paths(analysis: Analysis) -> set[str]:
    return {lead["path"] for lead in analysis.result["leads"]}


@pytest.fixture
def healthy(team, alice, bundles, synced):
    calm = make_incident(team=team, user=alice, title="A healthy HBase master")
    analysis = _analysed(calm, "hbase-master.log", HBASE.read_bytes())
    return analysis_mark_healthy(analysis=analysis, user=alice)


def test_a_reanalysis_against_a_healthy_analysis_drops_its_templates_from_the_leads(incident, alice, healthy):
    first = _analysed(incident, "bundle.tgz", _tar(HBASE, ZOOKEEPER))
    assert _lead_paths(first) == {"hbase-master.log", "zookeeper.log"}
    queued = analysis_reanalyze_with_baseline(analysis=first, baseline=healthy, user=alice)
    assert queued.baseline_id == healthy.pk and queued.bundle_id == first.bundle_id
    assert analysis_run(analysis_id=queued.id, owner="h:2:t")
    queued.refresh_from_db()
    assert _lead_paths(queued) == {"zookeeper.log"}
    assert queued.result["baseline"]["path"] == f"analysis {healthy.pk} (hbase-master.log)"
    assert queued.result["baseline"]["dropped"] >= 1


def test_another_teams_analysis_is_never_a_baseline(incident, alice, mallory, other_incident, bundles, synced, client):
    theirs = _analysed(other_incident, "hbase-master.log", HBASE.read_bytes())
    analysis_mark_healthy(analysis=theirs, user=mallory)
    ours = _analysed(incident, "bundle.tgz", _tar(HBASE, ZOOKEEPER))
    with pytest.raises(BaselineError, match="another team"):
        analysis_reanalyze_with_baseline(analysis=ours, baseline=theirs, user=alice)
    client.force_login(alice)
    response = client.post(reverse("analysis_reanalyze_baseline", args=[ours.pk]), {"baseline": theirs.pk})
    assert response.status_code == 404
    page = client.get(reverse("analysis_detail", args=[ours.pk])).content.decode()
    assert f'value="{theirs.pk}"' not in page
    assert Analysis.objects.filter(baseline__isnull=False).count() == 0
    # Even set behind the services' back, the pipeline does not read another team's bundle.
    queued = Analysis.objects.create(team=ours.team, bundle=ours.bundle, baseline=theirs)
    assert analysis_run(analysis_id=queued.id, owner="h:3:t")
    queued.refresh_from_db()
    assert "baseline" not in queued.result and "hbase-master.log" in _lead_paths(queued)


def test_only_team_members_mark_an_analysis_healthy(incident, alice, mallory, bundles, synced, client):
    ours = _analysed(incident, "hbase-master.log", HBASE.read_bytes())
    with pytest.raises(PermissionDenied):
        analysis_mark_healthy(analysis=ours, user=mallory)
    client.force_login(mallory)
    assert client.post(reverse("analysis_healthy", args=[ours.pk])).status_code == 404
    client.force_login(alice)
    assert client.post(reverse("analysis_healthy", args=[ours.pk])).status_code == 302
    ours.refresh_from_db()
    assert ours.healthy


def test_the_page_offers_the_teams_healthy_analyses_and_reanalyses_with_one(incident, alice, healthy, client,
                                                                            no_broker):
    ours = _analysed(incident, "bundle.tgz", _tar(HBASE, ZOOKEEPER))
    client.force_login(alice)
    page = client.get(reverse("analysis_detail", args=[ours.pk])).content.decode()
    assert f'<option value="{healthy.pk}">' in page and "Mark as healthy" in page
    response = client.post(reverse("analysis_reanalyze_baseline", args=[ours.pk]), {"baseline": healthy.pk})
    new = Analysis.objects.get(baseline=healthy)
    assert response.status_code == 302 and response["Location"] == reverse("analysis_detail", args=[new.pk])


def test_an_upload_to_the_healthy_slot_is_a_baseline_once_analysed(client, alice, incident, bundles, synced,
                                                                   no_broker):
    client.force_login(alice)
    response = client.post(reverse("incident_upload", args=[incident.pk]),
                           {"file": SimpleUploadedFile("hbase-master.log", HBASE.read_bytes()), "healthy": "on"})
    assert response.status_code == 302
    calm = Analysis.objects.get()
    assert calm.healthy and calm.status == "queued"
    ours = _analysed(incident, "bundle.tgz", _tar(HBASE, ZOOKEEPER))
    with pytest.raises(BaselineError, match="finished"):     # not analysed yet: not offered, refused
        analysis_reanalyze_with_baseline(analysis=ours, baseline=calm, user=alice)
    assert analysis_run(analysis_id=calm.id, owner="h:4:t")
    page = client.get(reverse("analysis_detail", args=[ours.pk])).content.decode()
    assert f'<option value="{calm.pk}">' in page
