"""The teams screen (kb/views/teams.py, kb.services.teams): a team admin creates a
team, adds and removes members and sets roles; members see their team; others
are refused; a team never loses its last admin; each change is recorded.

The cast (tests/conftest.py): bob is Ops' only admin, alice an Ops member,
mallory the admin of Other, carol staff in no team."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import LogEntry
from django.urls import reverse

from kb.models import Membership, Team

pytestmark = pytest.mark.django_db


def _role(user, team) -> str | None:
    m = Membership.objects.filter(user=user, team=team).first()
    return m.role if m else None


def _add(client, team, username, role="member"):
    return client.post(reverse("team_member_add", args=[team.slug]), {"username": username, "role": role})


def _set_role(client, team, user, role):
    return client.post(reverse("team_member_role", args=[team.slug, user.pk]), {"role": role})


def _remove(client, team, user):
    return client.post(reverse("team_member_remove", args=[team.slug, user.pk]))


def test_an_admin_adds_a_member_sets_a_role_and_removes_them(client_bob, team, bob, alice, carol):
    response = _add(client_bob, team, "carol")
    assert response.status_code == 302 and response["Location"] == reverse("team_detail", args=["ops"])
    assert _role(carol, team) == "member"

    assert _set_role(client_bob, team, carol, "admin").status_code == 302
    assert _role(carol, team) == "admin"

    assert _remove(client_bob, team, carol).status_code == 302
    assert _role(carol, team) is None

    page = client_bob.get(reverse("team_detail", args=["ops"])).content.decode()
    for change in ("bob added carol as member", "bob made carol admin (was member)", "bob removed carol (admin)"):
        assert change in " ".join(page.split())
    assert LogEntry.objects.filter(object_id=str(team.pk)).count() == 3


def test_a_member_sees_the_team_but_changes_nothing(client_alice, team, alice, bob, carol):
    page = client_alice.get(reverse("team_detail", args=["ops"]))
    assert page.status_code == 200
    assert "bob" in page.content.decode() and "Add a member" not in page.content.decode()

    assert _add(client_alice, team, "carol").status_code == 403
    assert _add(client_alice, team, "", role="nonsense").status_code == 403  # not a 400 that tells more
    assert _set_role(client_alice, team, alice, "admin").status_code == 403
    assert _remove(client_alice, team, bob).status_code == 403
    assert (_role(carol, team), _role(alice, team), _role(bob, team)) == (None, "member", "admin")
    assert not LogEntry.objects.exists()


def test_another_teams_admin_cannot_see_or_change_the_team(client, mallory, other_team, team, alice, bob):
    client.force_login(mallory)

    assert client.get(reverse("team_detail", args=["ops"])).status_code == 404
    assert _add(client, team, "mallory", role="admin").status_code == 404
    assert _set_role(client, team, alice, "admin").status_code == 404
    assert _remove(client, team, bob).status_code == 404
    # Her own team's URLs with an Ops member's id do not reach the Ops membership.
    assert _set_role(client, other_team, alice, "admin").status_code == 409
    assert _remove(client, other_team, bob).status_code == 409
    assert (_role(mallory, team), _role(alice, team), _role(bob, team)) == (None, "member", "admin")


def test_a_team_never_loses_its_last_admin(client_bob, team, bob, alice):
    response = _set_role(client_bob, team, bob, "member")
    assert response.status_code == 409
    assert "bob is the team&#x27;s only admin" in response.content.decode()
    assert _remove(client_bob, team, bob).status_code == 409
    assert _role(bob, team) == "admin"

    # With a second admin, bob may step down, and then alice is the last one.
    assert _set_role(client_bob, team, alice, "admin").status_code == 302
    assert _set_role(client_bob, team, bob, "member").status_code == 302
    assert _role(bob, team) == "member"
    assert _set_role(client_bob, team, bob, "admin").status_code == 403  # no longer an admin


def test_an_admin_who_removes_themselves_leaves_the_team(client_bob, team, bob, alice):
    _set_role(client_bob, team, alice, "admin")

    response = _remove(client_bob, team, bob)

    assert response.status_code == 302 and response["Location"] == reverse("team_list")
    assert _role(bob, team) is None
    assert client_bob.get(reverse("team_detail", args=["ops"])).status_code == 404


def test_adding_an_unknown_user_or_a_member_again_is_refused_with_the_reason(client_bob, team, alice):
    response = _add(client_bob, team, "nobody")
    assert response.status_code == 400
    assert "No active user is named “nobody”" in response.content.decode()

    response = _add(client_bob, team, "alice", role="admin")
    assert response.status_code == 400
    assert "alice is a member already" in response.content.decode()
    assert _role(alice, team) == "member"

    assert _add(client_bob, team, "alice", role="owner").status_code == 400


def test_a_team_admin_creates_a_team_and_becomes_its_admin(client_bob, bob, team):
    response = client_bob.post(reverse("team_list"), {"name": "  Storage   SRE "})

    created = Team.objects.get(slug="storage-sre")
    assert response.status_code == 302 and response["Location"] == reverse("team_detail", args=["storage-sre"])
    assert created.name == "Storage SRE" and _role(bob, created) == "admin"
    assert "created the team with bob as admin" in client_bob.get(response["Location"]).content.decode()

    response = client_bob.post(reverse("team_list"), {"name": "storage sre"})
    assert response.status_code == 400
    assert "exists already" in response.content.decode()
    assert Team.objects.filter(slug__startswith="storage").count() == 1


def test_a_plain_member_may_not_create_a_team(client_alice, alice):
    page = client_alice.get(reverse("team_list"))
    assert page.status_code == 200 and "Create a team" not in page.content.decode()

    assert client_alice.post(reverse("team_list"), {"name": "Shadow"}).status_code == 403
    assert not Team.objects.filter(name="Shadow").exists()


def test_staff_may_create_a_team(client, carol):
    client.force_login(carol)

    assert client.post(reverse("team_list"), {"name": "Platform"}).status_code == 302
    assert _role(carol, Team.objects.get(slug="platform")) == "admin"


def test_the_team_list_shows_only_the_users_teams(client_bob, team, other_team):
    page = client_bob.get(reverse("team_list")).content.decode()

    assert reverse("team_detail", args=["ops"]) in page
    assert reverse("team_detail", args=["other"]) not in page


def test_teams_need_a_login(client, team):
    response = client.get(reverse("team_detail", args=["ops"]))

    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
