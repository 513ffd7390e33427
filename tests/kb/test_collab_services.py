"""Team-work services: annotations, field notes, feedback, activity, follows,
notifications, and the incident filters and similar incidents."""

from __future__ import annotations

import pytest
from django.core import mail
from django.core.exceptions import PermissionDenied, ValidationError

from kb.models import Activity, Annotation, FindingFeedback, Follow, Membership, Notification, RunbookNote
from kb.selectors.collab import (
    annotation_for_finding,
    feedback_for_finding,
    incident_filter,
    is_following,
    runbook_feedback_stats,
    runbook_note_list,
    similar_incidents,
)
from kb.services import collab
from kb.services.activity import activity_record
from kb.services.notifications import (
    collab_analysis_finished,
    mentioned_users,
    notification_mark_read,
    notification_open,
    notification_unread_count,
)
from tests.cast import DN_LOG, make_analysis, make_incident

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _no_smtp(settings):
    settings.EMAIL_HOST = ""   # tests that want mail set it


# ---------------------------------------------------------------- annotations


def test_it_annotates_an_incident_and_records_activity(incident, alice):
    a = collab.annotation_create(incident=incident, author=alice, body="  Looks like **disk**  ")

    assert a.team_id == incident.team_id and a.kind == "incident"
    assert a.body == "Looks like **disk**"   # stripped, stored raw
    act = Activity.objects.get(incident=incident)
    assert (act.verb, act.actor, act.data["annotation"]) == ("annotated", alice, a.pk)


def test_it_annotates_a_finding_and_an_evidence_line(analysis, alice):
    incident = analysis.bundle.incident
    on_finding = collab.annotation_create(incident=incident, author=alice, body="yes", analysis=analysis,
                                          finding_slug="disk-full")
    on_line = collab.annotation_create(incident=incident, author=alice, body="this one", analysis=analysis,
                                       evidence_path=DN_LOG, evidence_line=12)

    assert on_finding.kind == "finding" and on_line.kind == "evidence"
    assert on_line.evidence_anchor.startswith("ev-") and on_line.evidence_anchor.endswith("-12")
    # the finding's notes include the notes on its evidence lines, not another finding's
    collab.annotation_create(incident=incident, author=alice, body="gc", analysis=analysis,
                             finding_slug="jvm-long-gc-pause")
    assert list(annotation_for_finding(analysis=analysis, slug="disk-full")) == [on_finding, on_line]


def test_it_accepts_any_line_of_an_analysed_file(analysis, alice):
    a = collab.annotation_create(incident=analysis.bundle.incident, author=alice, body="context line",
                                 analysis=analysis, evidence_path=DN_LOG, evidence_line=5)
    assert a.evidence_line == 5


@pytest.mark.parametrize("kwargs, message", [
    ({"finding_slug": "no-such-runbook"}, "No such finding"),
    ({"evidence_path": "etc/passwd", "evidence_line": 1}, "No such file"),
    ({"evidence_path": DN_LOG, "evidence_line": 0}, "needs a file and a line"),
    ({"evidence_path": DN_LOG}, "needs a file and a line"),
])
def test_it_refuses_targets_outside_the_analysis(analysis, alice, kwargs, message):
    with pytest.raises(ValidationError, match=message):
        collab.annotation_create(incident=analysis.bundle.incident, author=alice, body="x", analysis=analysis,
                                 **kwargs)
    assert not Annotation.objects.exists()


def test_it_refuses_an_analysis_of_another_incident(analysis, alice, team):
    elsewhere = make_incident(team=team, user=alice, title="another")
    with pytest.raises(ValidationError, match="another incident"):
        collab.annotation_create(incident=elsewhere, author=alice, body="x", analysis=analysis,
                                 finding_slug="disk-full")


def test_it_refuses_empty_notes_and_outsiders(incident, alice, mallory):
    with pytest.raises(ValidationError):
        collab.annotation_create(incident=incident, author=alice, body="   ")
    with pytest.raises(PermissionDenied):
        collab.annotation_create(incident=incident, author=mallory, body="hi")
    assert not Annotation.objects.exists()


def test_only_the_author_or_a_team_admin_edits_and_deletes(incident, alice, bob, team):
    from django.contrib.auth import get_user_model

    dave = get_user_model().objects.create_user("dave")
    Membership.objects.create(user=dave, team=team)
    a = collab.annotation_create(incident=incident, author=alice, body="first")

    with pytest.raises(PermissionDenied):
        collab.annotation_edit(annotation=a, user=dave, body="mine now")
    with pytest.raises(PermissionDenied):
        collab.annotation_delete(annotation=a, user=dave)

    collab.annotation_edit(annotation=a, user=alice, body="second")
    a.refresh_from_db()
    assert a.body == "second" and a.edited is not None
    collab.annotation_edit(annotation=a, user=bob, body="third (admin)")   # bob is an Ops admin
    collab.annotation_delete(annotation=a, user=bob)
    assert not Annotation.objects.exists()
    verbs = list(Activity.objects.filter(incident=incident).order_by("created", "id").values_list("verb", flat=True))
    assert verbs == ["annotated", "annotation_edited", "annotation_edited", "annotation_deleted"]


# ---------------------------------------------------------------- mentions


def test_it_notifies_mentioned_team_members_only(incident, alice, bob, mallory):
    collab.annotation_create(incident=incident, author=alice,
                             body="@bob please check; @mallory too. mail alice@example.com, @alice, @nobody")

    assert [n.user for n in Notification.objects.all()] == [bob]   # not mallory (Other), not alice herself
    n = Notification.objects.get()
    assert n.verb == "mention" and "alice mentioned you" in n.text and n.url.startswith("/annotations/")


def test_mentions_end_at_punctuation(team, alice, bob):
    assert mentioned_users(text="Thanks @bob.", team=team) == [bob]
    assert mentioned_users(text="(@bob) and @bob again", team=team) == [bob]
    assert mentioned_users(text="bob@example.org", team=team) == []


def test_an_edit_notifies_only_newly_mentioned_users(incident, alice, bob, carol, team):
    Membership.objects.create(user=carol, team=team)
    a = collab.annotation_create(incident=incident, author=alice, body="@bob look")
    collab.annotation_edit(annotation=a, user=alice, body="@bob look, @carol too")

    assert sorted(n.user.username for n in Notification.objects.all()) == ["bob", "carol"]


def test_it_mails_mentions_when_smtp_is_configured(settings, incident, alice, bob, django_capture_on_commit_callbacks):
    settings.EMAIL_HOST = "smtp.example.org"
    bob.email = "bob@example.org"
    bob.save()
    with django_capture_on_commit_callbacks(execute=True):
        collab.annotation_create(incident=incident, author=alice, body="@bob see the DataNode")

    assert len(mail.outbox) == 1
    assert mail.outbox[0].to == ["bob@example.org"] and "see the DataNode" in mail.outbox[0].body
    assert "/annotations/" in mail.outbox[0].body


def test_it_does_not_mail_without_smtp(incident, alice, bob, django_capture_on_commit_callbacks):
    bob.email = "bob@example.org"
    bob.save()
    with django_capture_on_commit_callbacks(execute=True):
        collab.annotation_create(incident=incident, author=alice, body="@bob in-app only")

    assert mail.outbox == [] and Notification.objects.filter(user=bob).count() == 1


def test_a_failing_smtp_server_does_not_fail_the_note(settings, incident, alice, bob, monkeypatch,
                                                     django_capture_on_commit_callbacks):
    settings.EMAIL_HOST = "smtp.example.org"
    bob.email = "bob@example.org"
    bob.save()

    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("no SMTP here")

    monkeypatch.setattr("kb.services.notifications.send_mail", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        collab.annotation_create(incident=incident, author=alice, body="@bob hello")
    assert Annotation.objects.count() == 1 and Notification.objects.count() == 1


# ---------------------------------------------------------------- feedback


def test_feedback_is_one_per_user_and_editable(analysis, alice, bob):
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm")
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="reject", reason="disk had room")
    collab.feedback_set(analysis=analysis, slug="disk-full", user=bob, verdict="confirm", reason="df showed 100%")

    rows = FindingFeedback.objects.filter(analysis=analysis, slug="disk-full")
    assert rows.count() == 2
    assert rows.get(user=alice).verdict == "reject" and rows.get(user=alice).reason == "disk had room"
    data = feedback_for_finding(analysis=analysis, slug="disk-full", user=alice)
    assert (data["confirms"], data["rejects"], data["mine"].verdict) == (1, 1, "reject")
    feedback = Activity.objects.filter(verb="feedback")
    assert feedback.count() == 3
    assert feedback.filter(data__verdict="reject", data__reason="disk had room").exists()


def test_the_same_verdict_twice_records_one_activity(analysis, alice):
    for _ in range(2):
        collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm", reason="yes")
    assert Activity.objects.filter(verb="feedback").count() == 1


def test_a_rejection_needs_a_reason(analysis, alice):
    with pytest.raises(ValidationError, match="why"):
        collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="reject", reason=" ")


@pytest.mark.parametrize("slug, verdict", [("no-such", "confirm"), ("disk-full", "maybe")])
def test_feedback_needs_a_finding_and_a_verdict(analysis, alice, slug, verdict):
    with pytest.raises(ValidationError):
        collab.feedback_set(analysis=analysis, slug=slug, user=alice, verdict=verdict, reason="r")


def test_outsiders_give_no_feedback(analysis, mallory):
    with pytest.raises(PermissionDenied):
        collab.feedback_set(analysis=analysis, slug="disk-full", user=mallory, verdict="confirm")


def test_feedback_can_be_withdrawn(analysis, alice):
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm")
    assert collab.feedback_clear(analysis=analysis, slug="disk-full", user=alice)
    assert not FindingFeedback.objects.exists()
    assert Activity.objects.filter(verb="feedback", data__verdict="withdrawn").exists()


def test_runbook_stats_count_all_teams_but_list_only_own_reasons(analysis, alice, bob, other_incident, mallory):
    other_analysis = other_incident.bundles.get().analyses.get()
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm", reason="ours")
    collab.feedback_set(analysis=analysis, slug="disk-full", user=bob, verdict="reject", reason="not it")
    collab.feedback_set(analysis=other_analysis, slug="disk-full", user=mallory, verdict="confirm",
                        reason="secret host db-7")

    stats = runbook_feedback_stats(slug="disk-full", user=alice)
    assert (stats["confirmed"], stats["rejected"], stats["total"]) == (2, 1, 3)
    assert (stats["confirmed_incidents"], stats["rejected_incidents"]) == (2, 1)
    assert {f.reason for f in stats["recent"]} == {"ours", "not it"}   # not mallory's


# ---------------------------------------------------------------- runbook notes


def test_runbook_notes_are_team_scoped(synced, team, other_team, alice, bob, mallory):
    from kb.models import Runbook

    runbook = Runbook.objects.get(slug="disk-full")
    ours = collab.runbook_note_create(runbook=runbook, team=team, author=alice, body="On prod-3 clean /data/tmp")
    collab.runbook_note_create(runbook=runbook, team=other_team, author=mallory, body="theirs")

    assert list(runbook_note_list(runbook=runbook, user=bob)) == [ours]
    with pytest.raises(PermissionDenied):
        collab.runbook_note_create(runbook=runbook, team=team, author=mallory, body="sneaky")
    with pytest.raises(PermissionDenied):
        collab.runbook_note_edit(note=ours, user=mallory, body="x")
    collab.runbook_note_edit(note=ours, user=bob, body="admin edit")   # bob is Ops admin
    collab.runbook_note_delete(note=ours, user=alice)
    assert list(RunbookNote.objects.values_list("body", flat=True)) == ["theirs"]


# ---------------------------------------------------------------- activity, follows


def test_activity_record_rejects_unknown_verbs(incident, alice):
    with pytest.raises(ValueError):
        activity_record(incident=incident, actor=alice, verb="exploded")
    act = activity_record(incident=incident, actor=alice, verb="status", target="status",
                                 **{"from": "open", "to": "investigating"})
    assert act.data == {"from": "open", "to": "investigating"} and act.team_id == incident.team_id


def test_follow_and_unfollow(incident, bob, mallory):
    collab.follow_set(incident=incident, user=bob)
    collab.follow_set(incident=incident, user=bob)
    assert is_following(incident=incident, user=bob) and Follow.objects.count() == 1
    collab.follow_set(incident=incident, user=bob, follow=False)
    assert not Follow.objects.exists()
    with pytest.raises(PermissionDenied):
        collab.follow_set(incident=incident, user=mallory)


# ---------------------------------------------------------------- analysis finished


def test_owner_and_followers_hear_when_an_analysis_finishes(incident, alice, bob, carol, team, mallory):
    collab.follow_set(incident=incident, user=bob)
    Membership.objects.create(user=carol, team=team)
    collab.follow_set(incident=incident, user=carol)
    Membership.objects.filter(user=carol).delete()   # carol left the team: she hears nothing
    analysis = make_analysis(incident=incident, user=alice)

    assert collab_analysis_finished(analysis_id=analysis.pk)

    notes = Notification.objects.order_by("user__username")
    assert [n.user.username for n in notes] == ["alice", "bob"]   # alice owns it
    assert "top finding disk-full (91%)" in notes[0].text and notes[0].url == f"/analyses/{analysis.pk}/"
    act = Activity.objects.get(verb="analysis_done")
    assert act.actor is None and act.data["findings"] == ["disk-full", "jvm-long-gc-pause"]


def test_the_hook_runs_once_per_outcome(incident, alice):
    analysis = make_analysis(incident=incident, user=alice)
    assert collab_analysis_finished(analysis_id=analysis.pk)
    assert not collab_analysis_finished(analysis_id=analysis.pk)   # a redelivered task
    assert Notification.objects.count() == 1 and Activity.objects.filter(verb="analysis_done").count() == 1


def test_a_failed_analysis_notifies_with_its_error(incident, alice):
    analysis = make_analysis(incident=incident, user=alice, status="failed")
    collab_analysis_finished(analysis_id=analysis.pk)
    n = Notification.objects.get()
    assert n.verb == "analysis_failed" and "bundle is not an archive" in n.text


def test_the_hook_ignores_unfinished_analyses_and_never_raises(incident, alice):
    analysis = make_analysis(incident=incident, user=alice, status="running")
    assert not collab_analysis_finished(analysis_id=analysis.pk)
    assert not collab_analysis_finished(analysis_id=999999)
    assert not Notification.objects.exists()


def test_it_marks_notifications_read(incident, alice, bob):
    collab.annotation_create(incident=incident, author=alice, body="@bob one")
    collab.annotation_create(incident=incident, author=alice, body="@bob two")
    first, second = Notification.objects.order_by("id")
    assert notification_unread_count(user=bob) == 2
    assert notification_open(user=bob, pk=first.pk) == first.url
    assert notification_open(user=alice, pk=second.pk) is None   # not hers
    assert notification_unread_count(user=bob) == 1
    notification_mark_read(user=bob)
    assert notification_unread_count(user=bob) == 0


# ---------------------------------------------------------------- lists and similar incidents


def test_incident_filter_by_runbook_component_and_confirmation(synced, team, alice):
    from kb.models import Incident

    matched = make_incident(team=team, user=alice, title="matched only")
    make_analysis(incident=matched, user=alice)
    confirmed = make_incident(team=team, user=alice, title="confirmed disk")
    a = make_analysis(incident=confirmed, user=alice)
    collab.feedback_set(analysis=a, slug="disk-full", user=alice, verdict="confirm")
    make_incident(team=team, user=alice, title="nothing yet")
    qs = Incident.objects.filter(team=team)

    assert set(incident_filter(qs, runbook="disk-full")) == {matched, confirmed}
    assert list(incident_filter(qs, runbook="disk-full", confirmed=True)) == [confirmed]
    assert list(incident_filter(qs, confirmed=True)) == [confirmed]
    # disk-full is an os/hdfs runbook; the GC one is jvm/flink
    assert set(incident_filter(qs, component="hdfs")) == {matched, confirmed}
    assert set(incident_filter(qs, component="kernel")) == set()
    assert list(incident_filter(qs, q="nothing")) == [qs.get(title="nothing yet")]


def test_incident_search_finds_words_in_annotations(incident, alice, team):
    from kb.models import Incident

    collab.annotation_create(incident=incident, author=alice, body="The NameNode was in safemode")
    assert list(incident_filter(Incident.objects.all(), q="safemode")) == [incident]


def test_similar_incidents_share_confirmed_or_matched_runbooks(team, alice, other_incident, bob):
    here = make_incident(team=team, user=alice, title="here")
    a_here = make_analysis(incident=here, user=alice)
    collab.feedback_set(analysis=a_here, slug="disk-full", user=alice, verdict="confirm")

    same_confirmed = make_incident(team=team, user=alice, title="same confirmed")
    a1 = make_analysis(incident=same_confirmed, user=alice)
    collab.feedback_set(analysis=a1, slug="disk-full", user=bob, verdict="confirm")

    gc_only = make_incident(team=team, user=alice, title="gc only")
    result = {"findings": [{"runbook": "jvm-long-gc-pause", "confidence": 0.5, "evidence": []}], "files": []}
    make_analysis(incident=gc_only, user=alice, result=result)

    rejected = make_incident(team=team, user=alice, title="disk rejected there")
    a3 = make_analysis(incident=rejected, user=alice, result={
        "findings": [{"runbook": "disk-full", "confidence": 0.5, "evidence": []}], "files": []})
    collab.feedback_set(analysis=a3, slug="disk-full", user=alice, verdict="reject", reason="was GC")

    make_incident(team=team, user=alice, title="unrelated")

    similar = similar_incidents(incident=here, user=alice)
    titles = [s["incident"].title for s in similar]
    assert titles == ["same confirmed", "gc only"]   # other team's never; a rejected match is no match
    assert similar[0]["shared"][0] == {"slug": "disk-full", "confirmed": True, "confirmed_here": True}
