"""Issue 12, "Draft a runbook from a lead", in Chromium: a real incident no runbook covers
(tests/fixtures/leads/hbase-master-npe-waiting-for-meta, provenance in its SOURCE.md), staged and
analysed by the real engine over the shipped runbooks as the pipeline does; its top lead's
"Draft a runbook" button opens the editor pre-filled with the lead's line as a symptom and a
runbook of the team. Saving and re-analysing through the real pipeline: test_lead_draft_e2e.py."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login
from tests.helpers import FIXTURES, runbook_metas

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(240)]

PASSWORD = "pw-oncall-browser"
CASE = FIXTURES / "leads" / "hbase-master-npe-waiting-for-meta"


@pytest.fixture
def admin(transactional_db, settings, tmp_path):
    from django.contrib.auth import get_user_model

    from kb.models import Membership, Team
    from tests.celery_harness import sync_real_runbooks

    settings.BUNDLES_DIR = tmp_path / "bundles"
    settings.DRAFT_FIXTURES_DIR = tmp_path / "draft-fixtures"
    sync_real_runbooks()
    team = Team.objects.create(name="On call", slug="on-call")
    user = get_user_model().objects.create_user("oncall", password=PASSWORD)
    Membership.objects.create(user=user, team=team, role=Membership.Role.ADMIN)
    return user


def _analysis_of_the_case(user):
    """The bundle staged and analysed as the pipeline does (BUNDLES_DIR/<code>/staged/, its manifest)."""
    import shutil
    import uuid
    from pathlib import Path

    from django.conf import settings

    from analyzers.engine import analyze_staged
    from analyzers.staging import stage_logs
    from kb.models import Analysis, Bundle, Incident
    from kb.services.staged import staged_manifest_write

    code = uuid.uuid4()
    root = Path(settings.BUNDLES_DIR) / str(code)
    upload = root / "upload"
    shutil.copytree(CASE, upload, ignore=shutil.ignore_patterns("SOURCE.md", "expected.json"))
    workdir = root / "staged" / "case"
    workdir.mkdir(parents=True)
    staged = stage_logs([str(upload)], str(workdir))
    result = analyze_staged(staged, runbook_metas())
    team = user.memberships.get().team
    incident = Incident.objects.create(team=team, title="HMaster does not start", created_by=user)
    bundle = Bundle.objects.create(code=code, team=team, incident=incident, uploaded_by=user,
                                   original_name="hbase-master.tgz", stored_path="")
    analysis = Analysis.objects.create(team=team, bundle=bundle, status="done", progress=100, engine="local",
                                       result=result)
    staged_manifest_write(bundle=bundle, analysis_id=analysis.id, files=staged.files)
    return analysis, result, staged


def test_the_top_lead_drafts_a_runbook_in_the_editor(live_server, page, admin):
    analysis, result, _ = _analysis_of_the_case(admin)
    assert not result["findings"] and result["leads"]
    login(page, live_server.url, "oncall", PASSWORD)
    page.goto(f"{live_server.url}/analyses/{analysis.pk}/")
    page.locator("details#leads > summary").click()       # the leads fold, closed at first
    page.locator(".lead .draft-runbook").first.click()
    expect(page.locator("h1")).to_have_text("Draft a runbook from lead 1")
    symptom = page.locator("textarea[name=symptom]")
    expect(symptom).to_contain_text("Failed to become active master")
    expect(page.locator("textarea[name=text]")).to_contain_text("TODO")

