"""The teams screen in Chromium, without JavaScript tricks: a team admin creates a
team from the menu, adds a member, makes them admin, steps down, and is refused
when the last admin would go. Screenshot: test-artifacts/screenshots/team-page.png."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import login

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.timeout(180)]


@pytest.fixture
def people(transactional_db):
    from django.contrib.auth import get_user_model

    from kb.models import Membership, Team

    User = get_user_model()
    lead = User.objects.create_user("lead", password="pw-lead-browser")
    User.objects.create_user("newcomer", password="pw-newcomer-browser")
    Membership.objects.create(user=lead, team=Team.objects.create(name="Ops", slug="ops"),
                              role=Membership.Role.ADMIN)


def test_a_team_admin_builds_a_team_from_the_teams_screen(live_server, page, people, screenshot, dialogs):
    base = live_server.url
    login(page, base, "lead", "pw-lead-browser")

    page.click("summary:has-text('lead')")
    page.click("a:has-text('Teams')")
    page.fill("input[name=name]", "Storage")
    page.click("button:has-text('Create team')")
    expect(page.locator("h1")).to_have_text("Storage")
    expect(page.locator(".messages")).to_contain_text("Team Storage created; you are its admin.")

    page.fill("input[name=username]", "newcomer")
    page.click("button:has-text('Add member')")
    row = page.locator("#member-newcomer")
    expect(row).to_contain_text("member")

    row.locator("select[name=role]").select_option("admin")
    row.locator("button:has-text('Set role')").click()
    expect(page.locator("#member-newcomer td").nth(1)).to_have_text("admin")
    screenshot("team-page-admin")

    # lead steps down (newcomer is admin now), so the page no longer offers changes.
    page.locator("#member-lead select[name=role]").select_option("member")
    page.locator("#member-lead button:has-text('Set role')").click()
    expect(page.locator("#member-lead td").nth(1)).to_have_text("member")
    expect(page.locator("#add-member")).to_have_count(0)
    expect(page.locator("#team-changes")).to_contain_text("lead made lead member (was admin)")
    screenshot("team-page")

    # newcomer, now the only admin, cannot remove themselves.
    page.click("summary:has-text('lead')")
    page.click("button:has-text('Log out')")
    login(page, base, "newcomer", "pw-newcomer-browser")
    page.goto(base + "/teams/storage/")
    page.click("button[aria-label='Remove newcomer']")
    expect(page.locator(".messages")).to_contain_text("newcomer is the team's only admin")
    expect(page.locator("#member-newcomer")).to_be_visible()
    assert dialogs == []
