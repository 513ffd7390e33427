"""Incident list, create and update; team isolation on every incident URL."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from kb.models import Incident, Membership
from tests.kb.test_incident_analysis import make_analysis, seed_staged  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db


@pytest.fixture
def incidents(team, other_team, alice, mallory):
    return {
        "disk": Incident.objects.create(team=team, title="DataNode disks full on dn3", severity="critical",
                                        status="investigating", created_by=alice),
        "hive": Incident.objects.create(team=team, title="Hive table misses rows", severity="high",
                                        status="open", created_by=alice),
        "old": Incident.objects.create(team=team, title="Kafka consumer lag", severity="low",
                                       status="resolved", created_by=alice),
        "theirs": Incident.objects.create(team=other_team, title="Their secret outage", severity="high",
                                          created_by=mallory),
    }


def _titles(response) -> list[str]:
    return re.findall(r'<a href="/incidents/\d+/">([^<]+)</a>', response.content.decode())


def test_it_lists_the_teams_incidents_newest_first(client_alice, incidents):
    response = client_alice.get(reverse("incident_list"))

    assert response.status_code == 200
    assert _titles(response) == ["Kafka consumer lag", "Hive table misses rows", "DataNode disks full on dn3"]
    assert b"Their secret outage" not in response.content


@pytest.mark.parametrize("query, titles", [
    ("?status=open", ["Hive table misses rows"]),
    ("?severity=critical", ["DataNode disks full on dn3"]),
    ("?q=hive", ["Hive table misses rows"]),
    ("?q=secret", []),
    ("?status=resolved&severity=low&q=kafka", ["Kafka consumer lag"]),
    ("?status=bogus", ["Kafka consumer lag", "Hive table misses rows", "DataNode disks full on dn3"]),
])
def test_it_filters_the_list(client_alice, incidents, query, titles):
    assert _titles(client_alice.get(reverse("incident_list") + query)) == titles


def test_it_shows_the_top_finding_of_the_latest_analysis(client_alice, seed_staged, team, alice):
    _, staged = seed_staged
    result = staged.result
    make_analysis(team=team, user=alice, result=result, title="Part file stuck OPENFORWRITE")

    html = client_alice.get(reverse("incident_list")).content.decode()
    assert "Part file stuck OPENFORWRITE" in html
    assert 'href="/runbooks/hdfs-openforwrite-after-interrupted-close/"' in html
    assert "90%" in html


def test_it_hides_other_teams_incidents(client, incidents, mallory, alice):
    client.force_login(mallory)
    mine = incidents["hive"]

    assert client.get(reverse("incident_detail", args=[mine.pk])).status_code == 404
    assert client.post(reverse("incident_update", args=[mine.pk]),
                       {"status": "resolved", "severity": "low", "owner": ""}).status_code == 404
    assert _titles(client.get(reverse("incident_list"))) == ["Their secret outage"]
    mine.refresh_from_db()
    assert mine.status == "open"


def test_it_creates_an_incident(client_alice, team):
    response = client_alice.post(reverse("incident_create"), {"title": "NameNode in safe mode",
                                                              "severity": "critical", "team": team.pk})

    incident = Incident.objects.get(title="NameNode in safe mode")
    assert response.status_code == 302
    assert response["Location"] == reverse("incident_detail", args=[incident.pk])
    assert (incident.team, incident.severity, incident.status) == (team, "critical", "open")
    page = client_alice.get(response["Location"])
    assert b"NameNode in safe mode" in page.content
    assert reverse("incident_upload", args=[incident.pk]).encode() in page.content


def test_it_lets_a_user_of_several_teams_choose(client_alice, alice, other_team):
    Membership.objects.create(user=alice, team=other_team)

    form = client_alice.get(reverse("incident_create")).content.decode()
    assert 'name="team"' in form and "Other" in form

    client_alice.post(reverse("incident_create"), {"title": "For Other", "severity": "low", "team": other_team.pk})
    assert Incident.objects.get(title="For Other").team == other_team


def test_it_refuses_to_create_in_someone_elses_team(client_alice, other_team):
    response = client_alice.post(reverse("incident_create"), {"title": "Sneaky", "severity": "low",
                                                              "team": other_team.pk})

    assert response.status_code == 400
    assert not Incident.objects.filter(title="Sneaky").exists()


def test_it_tells_a_user_without_team(client, db):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.create_user("loner", password="pw"))
    assert b"no team" in client.get(reverse("incident_create")).content
    assert client.post(reverse("incident_create"), {"title": "x", "severity": "low"}).status_code == 400
    assert not Incident.objects.exists()


def _csrf_client(user) -> Client:
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def test_it_updates_status_owner_and_severity_with_csrf(incidents, alice, bob):
    client = _csrf_client(alice)
    incident = incidents["hive"]
    url = reverse("incident_update", args=[incident.pk])
    data = {"status": "mitigated", "severity": "critical", "owner": bob.pk}

    assert client.post(url, data).status_code == 403   # no CSRF token
    page = client.get(reverse("incident_detail", args=[incident.pk]))
    token = client.cookies["csrftoken"].value
    assert b'name="owner"' in page.content and b"bob" in page.content

    response = client.post(url, {**data, "csrfmiddlewaretoken": token})
    assert response.status_code == 302
    incident.refresh_from_db()
    assert (incident.status, incident.severity, incident.owner) == ("mitigated", "critical", bob)
    assert b"Incident updated." in client.get(response["Location"]).content


def test_it_rejects_an_owner_outside_the_team(client_alice, incidents, mallory):
    incident = incidents["hive"]

    response = client_alice.post(reverse("incident_update", args=[incident.pk]),
                                 {"status": "resolved", "severity": "low", "owner": mallory.pk})

    assert response.status_code == 400
    assert b"owner" in response.content
    incident.refresh_from_db()
    assert (incident.status, incident.owner) == ("open", None)


def test_it_clears_the_owner(client_alice, incidents, alice):
    incident = incidents["hive"]
    incident.owner = alice
    incident.save()

    client_alice.post(reverse("incident_update", args=[incident.pk]),
                      {"status": "open", "severity": "high", "owner": ""})
    incident.refresh_from_db()
    assert incident.owner is None


def test_it_needs_a_login(client, incidents):
    for url in (reverse("incident_list"), reverse("incident_create"),
                reverse("incident_detail", args=[incidents["hive"].pk])):
        assert client.get(url).status_code == 302


def test_it_links_the_nav(client_alice, incidents):
    html = client_alice.get(reverse("incident_list")).content.decode()
    assert f'href="{reverse("incident_create")}"' in html
    assert 'href="/incidents/" aria-current="page"' in html


def test_it_offers_reanalyze_for_each_analysis(client_alice, seed_staged, team, alice):
    _, staged = seed_staged
    result = staged.result
    analysis = make_analysis(team=team, user=alice, result=result)

    html = client_alice.get(reverse("incident_detail", args=[analysis.bundle.incident.pk])).content.decode()
    assert f'action="{reverse("analysis_reanalyze", args=[analysis.pk])}"' in html

