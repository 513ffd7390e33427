"""The main pages in Chromium, with XSS payloads in every place a user or a
log can put text: no alert() may fire (X1-X3), the payloads show as text.
Screenshots of the runbook list, search results and the pages with payloads
are kept in test-artifacts/screenshots/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login
from tests.cast import HTML_LINE, make_analysis, make_incident

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]

PAYLOAD = '<script>alert("note")</script><img src=x onerror=alert("img")> [click](javascript:alert("link"))'


@pytest.fixture
def real_runbooks(transactional_db):
    from tests.celery_harness import sync_real_runbooks

    sync_real_runbooks()


@pytest.fixture
def cast(transactional_db, real_runbooks, settings):
    """alice (Ops, owner of an incident with payloads everywhere) and bob (Ops)."""
    from django.contrib.auth import get_user_model

    from kb.models import Membership, Runbook, Team
    from kb.services import collab

    settings.EMAIL_HOST = ""
    User = get_user_model()
    team = Team.objects.create(name="Ops", slug="ops")
    alice = User.objects.create_user("alice", password="pw-alice-browser")
    bob = User.objects.create_user("bob", password="pw-bob-browser")
    for user in (alice, bob):
        Membership.objects.create(user=user, team=team)
    incident = make_incident(team=team, user=alice, title='Disk full <img src=x onerror=alert("title")>')
    analysis = make_analysis(incident=incident, user=alice, name='<svg onload=alert("name")>.tgz')
    collab.annotation_create(incident=incident, author=bob, body="@alice incident note " + PAYLOAD)
    collab.annotation_create(incident=incident, author=bob, body="finding note " + PAYLOAD, analysis=analysis,
                             finding_slug="disk-full")
    collab.annotation_create(incident=incident, author=bob, body="line note " + PAYLOAD, analysis=analysis,
                             evidence_path="dn1/hadoop-hdfs-datanode.log", evidence_line=12)
    collab.feedback_set(analysis=analysis, slug="disk-full", user=bob, verdict="confirm", reason=PAYLOAD)
    collab.runbook_note_create(runbook=Runbook.objects.get(slug="disk-full"), team=team, author=bob,
                               body="field note " + PAYLOAD)
    return {"alice": alice, "incident": incident, "analysis": analysis}


def _wait_for_partials(page) -> None:
    """htmx loads the team-work partials after the page: wait until none is left to load."""
    page.wait_for_load_state("networkidle")
    expect(page.locator("[hx-trigger='load']")).to_have_count(0)


def test_payloads_in_notes_feedback_and_log_lines_never_run(live_server, page, cast, dialogs, screenshot):
    base = live_server.url
    login(page, base, "alice", "pw-alice-browser")
    incident, analysis = cast["incident"], cast["analysis"]

    page.goto(f"{base}/incidents/{incident.pk}/")
    _wait_for_partials(page)
    expect(page.locator(".annotation-body").first).to_contain_text('<script>alert("note")</script>')
    expect(page.locator("h1")).to_contain_text('<img src=x onerror=alert("title")>')
    screenshot("xss-incident-page")

    page.goto(f"{base}/analyses/{analysis.pk}/")
    _wait_for_partials(page)
    expect(page.locator("code.logline").first).to_have_text(HTML_LINE)
    expect(page.locator(f"#notes-a{analysis.pk}-disk-full .annotation-body")).to_have_count(2)
    expect(page.locator(f"#feedback-a{analysis.pk}-disk-full")).to_contain_text('<script>alert("note")</script>')
    # the javascript: link became text or a harmless link
    for href in page.locator(".annotation-body a").evaluate_all("els => els.map(e => e.getAttribute('href'))"):
        assert not (href or "").strip().lower().startswith("javascript:"), href
    screenshot("xss-analysis-page")

    page.goto(f"{base}/runbooks/disk-full/")
    _wait_for_partials(page)
    expect(page.locator("#field-notes")).to_contain_text("field note")
    expect(page.locator("#field-notes")).to_contain_text("confirmed 1 time")

    page.goto(f"{base}/notifications/")
    expect(page.locator("ul.notifications")).to_contain_text("bob mentioned you")
    expect(page.locator("header .mainnav")).to_contain_text("Notifications")

    page.goto(f"{base}/search/?q=" + '<script>alert("q")</script>')
    page.wait_for_load_state("networkidle")

    assert dialogs == [], dialogs


def test_runbook_list_and_search_results(live_server, page, real_runbooks, transactional_db, screenshot, dialogs):
    from django.contrib.auth import get_user_model

    get_user_model().objects.create_user("reader", password="pw-reader-browser")
    base = live_server.url
    login(page, base, "reader", "pw-reader-browser")

    page.goto(base + "/runbooks/")
    expect(page.locator("main")).to_contain_text("hdfs-close-not-enough-replicas")
    screenshot("runbook-list")

    page.goto(base + "/search/?q=not+enough+replicas")
    expect(page.locator("main")).to_contain_text("HDFS")
    screenshot("search-results")
    assert dialogs == []
