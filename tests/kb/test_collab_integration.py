"""Team work on the other pages: the incident, analysis and runbook pages load
the partials, incident updates and creation go into the activity stream, the
incident list filters by root cause, component and team, the nav counts
unread notifications."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kb.models import Activity, Membership, Team
from kb.services import collab
from tests.cast import make_analysis, make_incident

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_smtp(settings):
    settings.EMAIL_HOST = ""


def test_the_incident_page_loads_notes_activity_and_similar(client_alice, incident):
    html = client_alice.get(reverse("incident_detail", args=[incident.pk])).content.decode()
    for name in ("incident_annotations", "incident_activity", "incident_similar"):
        assert f'hx-get="{reverse(name, args=[incident.pk])}" hx-trigger="load"' in html


def test_the_analysis_page_loads_feedback_and_notes_per_finding_and_line_links(synced, client_alice, analysis):
    html = client_alice.get(reverse("analysis_detail", args=[analysis.pk])).content.decode()
    for slug in ("disk-full", "jvm-long-gc-pause"):
        assert f'hx-get="/analyses/{analysis.pk}/findings/{slug}/feedback/"' in html
        assert f'hx-get="/analyses/{analysis.pk}/annotations/?slug={slug}"' in html
    assert f"/analyses/{analysis.pk}/annotations/?path=dn1/hadoop-hdfs-datanode.log&amp;line=12" in html
    assert "Notes on this line" in html


def test_the_runbook_page_loads_field_notes(synced, client_alice):
    html = client_alice.get(reverse("runbook_detail", args=["disk-full"])).content.decode()
    assert 'hx-get="/runbooks/disk-full/notes/" hx-trigger="load"' in html and 'href="#field-notes"' in html


def test_creating_and_updating_an_incident_is_in_the_activity(client_bob, team, alice, bob):
    response = client_bob.post(reverse("incident_create"), {"title": "ZK sessions expire", "severity": "high",
                                                             "team": team.pk})
    incident_url = response["Location"]
    pk = int(incident_url.rstrip("/").rsplit("/", 1)[1])
    client_bob.post(reverse("incident_update", args=[pk]),
                    {"status": "investigating", "severity": "high", "owner": alice.pk})

    acts = {a.verb: a for a in Activity.objects.filter(incident_id=pk)}
    assert set(acts) == {"created", "status", "owner"}   # severity did not change
    assert acts["status"].data == {"from": "open", "to": "investigating"} and acts["status"].actor == bob
    assert acts["owner"].data == {"from": "bob", "to": "alice"}
    html = client_bob.get(reverse("incident_activity", args=[pk]), HTTP_HX_REQUEST="true").content.decode()
    assert "made <strong>alice</strong> the owner" in html and "opened the incident" in html


def test_the_incident_list_filters_by_confirmed_root_cause_component_and_team(synced, client_alice, alice, team):
    other_ops = Team.objects.create(name="Ops 2", slug="ops2")
    Membership.objects.create(user=alice, team=other_ops)
    confirmed = make_incident(team=team, user=alice, title="Confirmed disk")
    a = make_analysis(incident=confirmed, user=alice)
    collab.feedback_set(analysis=a, slug="disk-full", user=alice, verdict="confirm")
    matched = make_incident(team=other_ops, user=alice, title="Matched disk")
    make_analysis(incident=matched, user=alice)
    make_incident(team=team, user=alice, title="Quiet one")
    url = reverse("incident_list")

    def titles(**params) -> set[str]:
        html = client_alice.get(url, params).content.decode()
        return {t for t in ("Confirmed disk", "Matched disk", "Quiet one") if t in html}

    # Without a team filter the list is the current team's (kb.current_team): Ops, her first.
    assert titles() == {"Confirmed disk", "Quiet one"}
    assert titles(runbook="disk-full") == {"Confirmed disk"}
    assert titles(runbook="disk-full", confirmed="on") == {"Confirmed disk"}
    assert titles(component="hdfs") == {"Confirmed disk"}
    assert titles(team=other_ops.pk) == {"Matched disk"}
    assert titles(team=other_ops.pk, component="hdfs") == {"Matched disk"}
    assert titles(q="quiet") == {"Quiet one"}
    html = client_alice.get(url).content.decode()
    assert 'name="runbook"' in html and 'name="component"' in html and 'name="team"' in html


def test_the_list_refuses_another_teams_filter(synced, client_alice, other_team, other_incident, incident):
    html = client_alice.get(reverse("incident_list"), {"team": other_team.pk}).content.decode()
    # an invalid choice: the form is ignored, never another team's incidents
    assert "disk problem" not in html and incident.title in html
    html = client_alice.get(reverse("incident_list"), {"runbook": "disk-full"}).content.decode()
    assert "disk problem" not in html


def test_the_nav_counts_unread_notifications(client_bob, incident, alice):
    collab.annotation_create(incident=incident, author=alice, body="@bob have a look")
    html = client_bob.get(reverse("home")).content.decode()
    assert 'href="/notifications/"' in html and 'aria-label="1 unread"' in html


def test_a_failed_analysis_reaches_the_activity_and_the_owner(incident, alice):
    from kb.models import Notification
    from kb.services.leases import analysis_fail

    analysis = make_analysis(incident=incident, user=alice, status="queued")
    assert analysis_fail(analysis_id=analysis.pk, error="the archive is empty")

    assert Activity.objects.get(verb="analysis_failed").data == {"analysis": analysis.pk,
                                                                 "error": "the archive is empty"}
    n = Notification.objects.get(user=alice)
    assert n.verb == "analysis_failed" and "the archive is empty" in n.text
    assert not analysis_fail(analysis_id=analysis.pk, error="again")   # already failed: nothing new
    assert Notification.objects.count() == 1


def test_an_upload_is_in_the_activity(settings, tmp_path, incident, alice):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from kb.services.bundles import bundle_store

    settings.BUNDLES_DIR = tmp_path
    bundle = bundle_store(incident=incident, user=alice,
                          uploaded_file=SimpleUploadedFile("dn1 <logs>.tgz", b"x" * 2048))

    act = Activity.objects.get(verb="uploaded")
    assert (act.actor, act.target, act.data) == (alice, bundle.original_name, {"bundle": bundle.pk, "size": 2048})
