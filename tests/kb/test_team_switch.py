"""The current team (kb.current_team): a user in several teams chooses one in the header, and the
incident list, the runbook catalog, search, the new-incident and new-runbook forms and API
uploads follow it; a switch to a team the user is not in is refused (403) and changes nothing.
Real DB, real client, session and middleware."""

from __future__ import annotations

import io

import pytest
from django.urls import reverse

from kb.models import Bundle, Incident, Membership, Team
from kb.services.governance import team_runbook_create
from kb.services.tokens import token_create
from tests.cast import make_incident
from tests.celery_harness import no_broker  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_teams(alice, team, other_team, mallory):
    """alice: Ops (her first team) and, later, Other; each team has an incident and Other a runbook of its own."""
    Membership.objects.create(user=alice, team=other_team, role=Membership.Role.MEMBER)
    make_incident(team=team, user=alice, title="Ops outage")
    make_incident(team=other_team, user=mallory, title="Other outage")


def _titles(client) -> set[str]:
    html = client.get(reverse("incident_list")).content.decode()
    return {t for t in ("Ops outage", "Other outage") if t in html}


def _switch(client, team_id, next_url: str = "/incidents/"):
    return client.post(reverse("team_switch"), {"team": team_id, "next": next_url})


def test_a_user_in_two_teams_switches_and_sees_the_chosen_teams_incidents_only(client_alice, two_teams, team,
                                                                               other_team):
    assert _titles(client_alice) == {"Ops outage"}          # the first team until she chooses
    header = client_alice.get(reverse("home")).content.decode()
    assert 'action="/switch-team/"' in header and f'<option value="{other_team.pk}">Other</option>' in header

    response = _switch(client_alice, other_team.pk)

    assert response.status_code == 302 and response["Location"] == "/incidents/"
    assert _titles(client_alice) == {"Other outage"}
    header = client_alice.get(reverse("home")).content.decode()
    assert f'<option value="{other_team.pk}" selected>Other</option>' in header
    form = client_alice.get(reverse("incident_create")).context["form"]
    assert form["team"].value() == other_team.pk
    _switch(client_alice, team.pk)
    assert _titles(client_alice) == {"Ops outage"}


def test_the_catalog_and_search_follow_the_chosen_team(client_alice, two_teams, synced, runbook_texts, other_team,
                                                       mallory):
    text = runbook_texts["disk-full"].replace("slug: disk-full", "slug: other-disk-full", 1)
    team_runbook_create(team=other_team, text=text, author=mallory)
    page = reverse("runbook_detail", args=["other-disk-full"])
    assert client_alice.get(page).status_code == 404
    assert page not in client_alice.get(reverse("search"), {"q": "other-disk-full"}).content.decode()

    _switch(client_alice, other_team.pk)

    assert client_alice.get(page).status_code == 200
    assert page in client_alice.get(reverse("runbook_list")).content.decode()
    assert page in client_alice.get(reverse("search"), {"q": "other-disk-full"}).content.decode()


def test_a_switch_to_a_team_she_is_not_in_is_refused_and_changes_nothing(client_alice, two_teams, other_team):
    third = Team.objects.create(name="Third", slug="third")
    _switch(client_alice, other_team.pk)
    session_before = client_alice.session.get("kb_team")

    for value in (third.pk, 999999, "x", ""):
        assert _switch(client_alice, value).status_code == 403

    assert client_alice.session.get("kb_team") == session_before == other_team.pk
    assert _titles(client_alice) == {"Other outage"}
    assert client_alice.get(reverse("team_switch")).status_code == 405


def test_removed_from_the_chosen_team_she_falls_back_to_her_first(client_alice, alice, two_teams, other_team):
    _switch(client_alice, other_team.pk)
    Membership.objects.filter(user=alice, team=other_team).delete()
    assert _titles(client_alice) == {"Ops outage"}


def test_an_api_upload_goes_to_the_named_team_only_if_a_member(client, alice, two_teams, team, other_team,
                                                               no_broker, settings, tmp_path):
    settings.BUNDLES_DIR = tmp_path / "bundles"
    token = token_create(user=alice)[1]
    third = Team.objects.create(name="Third", slug="third")

    def upload(**fields):
        f = io.BytesIO(b"2024-01-01 00:00:00,000 INFO one line\n")
        f.name = "host.log"
        return client.post("/api/v1/analyses", {"file": f, **fields}, HTTP_AUTHORIZATION=f"Bearer {token}")

    assert upload(team="other").status_code == 202
    assert upload(team="third").status_code == 403 and upload(team="nope").status_code == 403
    assert upload().status_code == 202
    assert sorted(Bundle.objects.values_list("team__slug", flat=True)) == ["ops", "other"]
    assert not Incident.objects.filter(team=third).exists()
