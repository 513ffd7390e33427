"""Team-work pages and partials through the Django test client: htmx and
plain requests, XSS in notes, team isolation (404) and CSRF."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from django.test import Client
from django.urls import reverse

from kb.models import Activity, Annotation, FindingFeedback, Follow, Notification, RunbookNote
from kb.services.activity import activity_record
from kb.services import collab
from tests.cast import DN_LOG, make_analysis

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
XSS_BODY = (
    "<script>alert(1)</script> [click](javascript:alert(2)) <img src=x onerror=alert(3)> "
    "[ok](https://example.org) <b>bold?</b>"
)


@pytest.fixture(autouse=True)
def _no_smtp(settings):
    settings.EMAIL_HOST = ""


class _Tags(HTMLParser):
    """The tags and attributes of an HTML fragment (what a browser would build)."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.feed(html)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def _assert_inert(html: str) -> None:
    for tag, attrs in _Tags(html).tags:
        assert tag not in ("script", "svg", "img", "iframe", "math", "style"), tag
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        href = (attrs.get("href") or "").strip().lower()
        assert not href.startswith(("javascript:", "data:", "vbscript:")), href


def _finding_url(analysis, slug="disk-full") -> str:
    return reverse("analysis_annotations", args=[analysis.pk]) + f"?slug={slug}"


def _line_url(analysis, line=12) -> str:
    return reverse("analysis_annotations", args=[analysis.pk]) + f"?path={DN_LOG}&line={line}"


# ---------------------------------------------------------------- annotations


def test_it_shows_and_adds_incident_notes_with_htmx(client_alice, incident):
    url = reverse("incident_annotations", args=[incident.pk])
    response = client_alice.get(url, **HX)
    assert response.status_code == 200 and 'id="notes-incident-%d"' % incident.pk in response.content.decode()

    response = client_alice.post(url, {"body": "First look: **disk** on dn1"}, **HX)

    html = response.content.decode()
    assert response.status_code == 200
    assert "<strong>disk</strong>" in html and "1 note" in html
    assert Annotation.objects.get().author.username == "alice"


def test_a_plain_post_redirects_to_the_note(client_alice, analysis):
    response = client_alice.post(_line_url(analysis), {"body": "the first failure"})

    a = Annotation.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"/analyses/{analysis.pk}/#{a.evidence_anchor}"
    assert (a.evidence_path, a.evidence_line, a.analysis) == (DN_LOG, 12, analysis)


def test_a_line_note_links_to_the_line_and_its_context(client_alice, analysis):
    client_alice.post(_line_url(analysis), {"body": "here"}, **HX)
    a = Annotation.objects.get()

    html = client_alice.get(_finding_url(analysis), **HX).content.decode()   # shown with its finding

    assert f'href="/analyses/{analysis.pk}/#{a.evidence_anchor}"' in html
    assert f"/analyses/{analysis.pk}/context/?path=dn1%2Fhadoop-hdfs-datanode.log&amp;line=12" in html
    permalink = client_alice.get(reverse("annotation_permalink", args=[a.pk]))
    assert permalink["Location"] == f"/analyses/{analysis.pk}/#{a.evidence_anchor}"


def test_finding_notes_go_on_the_finding(client_alice, analysis):
    response = client_alice.post(_finding_url(analysis, "jvm-long-gc-pause"), {"body": "GC?"}, **HX)
    assert response.status_code == 200
    a = Annotation.objects.get()
    assert a.finding_slug == "jvm-long-gc-pause"
    assert client_alice.get(reverse("annotation_permalink", args=[a.pk]))["Location"] == (
        f"/analyses/{analysis.pk}/#notes-a{analysis.pk}-jvm-long-gc-pause")


def test_an_invalid_note_shows_the_error_in_the_panel(client_alice, analysis):
    response = client_alice.post(_finding_url(analysis, "not-a-finding"), {"body": "x"}, **HX)
    assert "No such finding" in response.content.decode()
    response = client_alice.post(_finding_url(analysis), {"body": ""}, **HX)
    assert "errorlist" in response.content.decode()
    assert not Annotation.objects.exists()


def test_a_plain_get_of_a_panel_redirects_to_its_page(client_alice, analysis):
    assert client_alice.get(_finding_url(analysis))["Location"] == (
        f"/analyses/{analysis.pk}/#notes-a{analysis.pk}-disk-full")
    incident = analysis.bundle.incident
    assert client_alice.get(reverse("incident_annotations", args=[incident.pk]))["Location"] == (
        f"/incidents/{incident.pk}/#notes")


def test_a_panel_needs_a_finding_or_a_line(client_alice, analysis):
    assert client_alice.get(reverse("analysis_annotations", args=[analysis.pk]), **HX).status_code == 404
    bad_line = reverse("analysis_annotations", args=[analysis.pk]) + f"?path={DN_LOG}&line=abc"
    assert client_alice.get(bad_line, **HX).status_code == 404


@pytest.mark.parametrize("body", [
    XSS_BODY,
    "<svg><script>alert(1)</script></svg>",
    "[x](JaVaScRiPt:alert(1))",
    "<javascript:alert(1)>",
    "![x](x\"onerror=\"alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "`<script>alert(1)</script>`",
])
def test_notes_are_sanitised(client_alice, incident, body):
    url = reverse("incident_annotations", args=[incident.pk])
    html = client_alice.post(url, {"body": body}, **HX).content.decode()
    notes = html[html.index('class="plain annotation-list"'):html.index('class="annotation-form')]

    _assert_inert(notes)
    assert "<script" not in notes


def test_markdown_links_keep_safe_schemes_and_raw_html_shows_as_text(client_alice, incident):
    url = reverse("incident_annotations", args=[incident.pk])
    html = client_alice.post(url, {"body": XSS_BODY}, **HX).content.decode()
    assert 'href="https://example.org"' in html and 'rel="noopener noreferrer"' in html
    assert "&lt;b&gt;bold?&lt;/b&gt;" in html   # raw HTML is text, not markup


def test_it_edits_and_deletes_a_note(client_alice, incident, alice):
    a = collab.annotation_create(incident=incident, author=alice, body="draft")
    edit = reverse("annotation_edit", args=[a.pk])

    form = client_alice.get(edit, **HX).content.decode()
    assert "draft</textarea>" in form
    html = client_alice.post(edit, {"body": "final"}, **HX).content.decode()
    assert "final" in html and "edited" in html
    assert client_alice.get(edit).status_code == 200   # the no-JS page

    response = client_alice.post(reverse("annotation_delete", args=[a.pk]), **HX)
    assert response.status_code == 200 and response.content == b""
    assert not Annotation.objects.exists()


def test_a_plain_member_cannot_edit_someone_elses_note(client, incident, bob, alice):
    a = collab.annotation_create(incident=incident, author=bob, body="bob's")
    client.force_login(alice)
    assert client.get(reverse("annotation_edit", args=[a.pk])).status_code == 403
    assert client.post(reverse("annotation_edit", args=[a.pk]), {"body": "hacked"}).status_code == 403
    assert client.post(reverse("annotation_delete", args=[a.pk])).status_code == 403
    a.refresh_from_db()
    assert a.body == "bob's"


def test_edit_buttons_show_only_to_who_may_edit(client, incident, bob, alice):
    collab.annotation_create(incident=incident, author=bob, body="bob's")
    client.force_login(alice)
    url = reverse("incident_annotations", args=[incident.pk])
    assert "/edit/" not in client.get(url, **HX).content.decode()
    client.force_login(bob)
    assert "/edit/" in client.get(url, **HX).content.decode()


# ---------------------------------------------------------------- feedback


def test_it_confirms_and_rejects_a_finding(client_alice, analysis):
    url = reverse("finding_feedback", args=[analysis.pk, "disk-full"])
    assert 'id="feedback-a%d-disk-full"' % analysis.pk in client_alice.get(url, **HX).content.decode()

    html = client_alice.post(url, {"verdict": "confirm", "reason": "df said 100%"}, **HX).content.decode()
    assert "1 confirmed" in html and "you confirmed it" in html and "df said 100%" in html

    html = client_alice.post(url, {"verdict": "reject", "reason": ""}, **HX).content.decode()
    assert "Say why" in html
    assert FindingFeedback.objects.get().verdict == "confirm"

    client_alice.post(url, {"verdict": "reject", "reason": "it was the GC"}, **HX)
    assert FindingFeedback.objects.get().verdict == "reject"
    client_alice.post(url, {"verdict": "clear"}, **HX)
    assert not FindingFeedback.objects.exists()


def test_feedback_without_htmx_redirects_back(client_alice, analysis):
    url = reverse("finding_feedback", args=[analysis.pk, "disk-full"])
    response = client_alice.post(url, {"verdict": "confirm"})
    assert response.status_code == 302 and response["Location"].endswith(f"#feedback-a{analysis.pk}-disk-full")
    assert FindingFeedback.objects.get().verdict == "confirm"


def test_feedback_on_a_slug_that_is_no_finding_is_404(client_alice, analysis):
    assert client_alice.get(reverse("finding_feedback", args=[analysis.pk, "kernel-soft-lockup-stalls-jvm"]),
                            **HX).status_code == 404


# ---------------------------------------------------------------- activity, follow, similar


def test_the_activity_stream_lists_who_did_what(client_alice, analysis, alice):
    incident = analysis.bundle.incident
    activity_record(incident=incident, actor=alice, verb="uploaded", target="<b>logs</b>.tgz", size=2048)
    activity_record(incident=incident, actor=alice, verb="status", **{"from": "open", "to": "mitigated"})
    activity_record(incident=incident, actor=alice, verb="owner", **{"from": "alice", "to": "bob"})
    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm", reason="yes")
    client_alice.post(_line_url(analysis), {"body": "note"}, **HX)
    from kb.services.notifications import collab_analysis_finished
    collab_analysis_finished(analysis_id=analysis.pk)

    html = client_alice.get(reverse("incident_activity", args=[incident.pk]), **HX).content.decode()

    assert "uploaded <strong>&lt;b&gt;logs&lt;/b&gt;.tgz</strong>" in html
    assert "from <strong>open</strong> to <strong>mitigated</strong>" in html
    assert "made <strong>bob</strong> the owner" in html
    assert "confirmed <code>disk-full</code>" in html
    assert "added <a href=\"/annotations/" in html and "dn1/hadoop-hdfs-datanode.log:12" in html
    assert f"analysis #{analysis.pk}</a> finished" in html


def test_follow_toggles(client_bob, incident, bob):
    url = reverse("incident_follow", args=[incident.pk])
    html = client_bob.post(url, {"follow": "1"}, **HX).content.decode()
    assert Follow.objects.filter(user=bob).exists() and "Unfollow" in html
    client_bob.post(url, {"follow": "0"})
    assert not Follow.objects.exists()


def test_similar_incidents_partial(client_alice, analysis, alice, team):
    from tests.cast import make_incident

    twin = make_incident(team=team, user=alice, title="Disk full again")
    make_analysis(incident=twin, user=alice)
    html = client_alice.get(reverse("incident_similar", args=[analysis.bundle.incident.pk]), **HX).content.decode()
    assert "Disk full again" in html and "disk-full" in html


# ---------------------------------------------------------------- runbook field notes


def test_field_notes_and_feedback_counts_on_the_runbook(synced, client_alice, analysis, alice, bob, other_team,
                                                        mallory):
    from kb.models import Runbook

    collab.feedback_set(analysis=analysis, slug="disk-full", user=alice, verdict="confirm", reason="yes")
    collab.feedback_set(analysis=analysis, slug="disk-full", user=bob, verdict="reject", reason="nope")
    collab.runbook_note_create(runbook=Runbook.objects.get(slug="disk-full"), team=other_team, author=mallory,
                               body="Other team's secret")
    url = reverse("runbook_notes", args=["disk-full"])

    html = client_alice.post(url, {"body": "Clean **/data/tmp** first"}, **HX).content.decode()

    assert "confirmed 1 time" in html and "rejected 1 time" in html
    assert "<strong>/data/tmp</strong>" in html
    assert "Other team" not in html   # notes are per team
    assert RunbookNote.objects.filter(author=alice).count() == 1


def test_field_notes_plain_requests(synced, client_alice):
    url = reverse("runbook_notes", args=["disk-full"])
    assert client_alice.get(url)["Location"] == "/runbooks/disk-full/#field-notes"
    response = client_alice.post(url, {"body": "note"})
    assert response.status_code == 302 and RunbookNote.objects.count() == 1
    assert client_alice.get(reverse("runbook_notes", args=["no-such"]), **HX).status_code == 404


def test_field_note_edit_and_delete(synced, client_alice, alice, team):
    from kb.models import Runbook

    note = collab.runbook_note_create(runbook=Runbook.objects.get(slug="disk-full"), team=team, author=alice,
                                      body="v1")
    edit = reverse("runbook_note_edit", args=[note.pk])
    assert "v1</textarea>" in client_alice.get(edit, **HX).content.decode()
    assert "v2" in client_alice.post(edit, {"body": "v2"}, **HX).content.decode()
    client_alice.post(reverse("runbook_note_delete", args=[note.pk]), **HX)
    assert not RunbookNote.objects.exists()


def test_a_user_without_a_team_sees_counts_but_no_form(synced, client, carol):
    client.force_login(carol)
    html = client.get(reverse("runbook_notes", args=["disk-full"]), **HX).content.decode()
    assert "Nobody has confirmed" in html and "<textarea" not in html
    assert client.post(reverse("runbook_notes", args=["disk-full"]), {"body": "x"}, **HX).status_code == 200
    assert not RunbookNote.objects.exists()


# ---------------------------------------------------------------- notifications


def test_notifications_page_opens_and_marks_read(client_bob, incident, alice, bob):
    collab.annotation_create(incident=incident, author=alice, body="@bob <script>alert(1)</script> look")
    n = Notification.objects.get(user=bob)

    html = client_bob.get(reverse("notification_list")).content.decode()
    assert "alice mentioned you" in html and "<script>alert" not in html and "new" in html

    response = client_bob.get(reverse("notification_go", args=[n.pk]))
    a = Annotation.objects.get()
    assert response["Location"] == f"/annotations/{a.pk}/"
    n.refresh_from_db()
    assert n.read

    collab.annotation_create(incident=incident, author=alice, body="@bob again")
    client_bob.post(reverse("notification_read"))
    assert not Notification.objects.filter(user=bob, read=False).exists()


def test_the_unread_count_tag(rf, incident, alice, bob):
    from django.template import Context, Template

    collab.annotation_create(incident=incident, author=alice, body="@bob hi")
    request = rf.get("/")
    request.user = bob
    out = Template("{% load kb_collab %}{% unread_notifications as n %}[{{ n }}]").render(
        Context({"request": request}))
    assert out == "[1]"


def test_someone_elses_notification_is_404(client_alice, incident, alice, bob):
    collab.annotation_create(incident=incident, author=alice, body="@bob hi")
    n = Notification.objects.get()
    assert client_alice.get(reverse("notification_go", args=[n.pk])).status_code == 404


# ---------------------------------------------------------------- isolation, login, CSRF


def _urls(analysis, annotation, note) -> list[tuple[str, str, dict]]:
    incident = analysis.bundle.incident
    return [
        ("get", reverse("incident_annotations", args=[incident.pk]), {}),
        ("post", reverse("incident_annotations", args=[incident.pk]), {"body": "x"}),
        ("get", _finding_url(analysis), {}),
        ("post", _finding_url(analysis), {"body": "x"}),
        ("post", _line_url(analysis), {"body": "x"}),
        ("get", reverse("annotation_permalink", args=[annotation.pk]), {}),
        ("get", reverse("annotation_edit", args=[annotation.pk]), {}),
        ("post", reverse("annotation_edit", args=[annotation.pk]), {"body": "x"}),
        ("post", reverse("annotation_delete", args=[annotation.pk]), {}),
        ("get", reverse("finding_feedback", args=[analysis.pk, "disk-full"]), {}),
        ("post", reverse("finding_feedback", args=[analysis.pk, "disk-full"]), {"verdict": "confirm"}),
        ("get", reverse("incident_activity", args=[incident.pk]), {}),
        ("post", reverse("incident_follow", args=[incident.pk]), {"follow": "1"}),
        ("get", reverse("incident_similar", args=[incident.pk]), {}),
        ("get", reverse("runbook_note_edit", args=[note.pk]), {}),
        ("post", reverse("runbook_note_edit", args=[note.pk]), {"body": "x"}),
        ("post", reverse("runbook_note_delete", args=[note.pk]), {}),
    ]


@pytest.fixture
def ops_objects(synced, analysis, alice, team):
    from kb.models import Runbook

    annotation = collab.annotation_create(incident=analysis.bundle.incident, author=alice, body="ours")
    note = collab.runbook_note_create(runbook=Runbook.objects.get(slug="disk-full"), team=team, author=alice,
                                      body="ours")
    return analysis, annotation, note


@pytest.mark.parametrize("htmx", [False, True])
def test_another_team_gets_404_everywhere_and_changes_nothing(client, ops_objects, mallory, htmx):
    client.force_login(mallory)
    before = (Annotation.objects.count(), FindingFeedback.objects.count(), Follow.objects.count(),
              RunbookNote.objects.count(), Activity.objects.count())
    for method, url, data in _urls(*ops_objects):
        response = getattr(client, method)(url, data, **(HX if htmx else {}))
        assert response.status_code == 404, (method, url, response.status_code)
    after = (Annotation.objects.count(), FindingFeedback.objects.count(), Follow.objects.count(),
             RunbookNote.objects.count(), Activity.objects.count())
    assert after == before
    assert Annotation.objects.get().body == "ours" and RunbookNote.objects.get().body == "ours"


def test_anonymous_users_are_sent_to_login(ops_objects):
    client = Client()
    urls = _urls(*ops_objects) + [("get", reverse("notification_list"), {}),
                                  ("get", reverse("runbook_notes", args=["disk-full"]), {})]
    for method, url, data in urls:
        response = getattr(client, method)(url, data)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/"), url
    assert Annotation.objects.count() == 1


def test_posts_need_a_csrf_token(ops_objects, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    analysis, annotation, note = ops_objects
    for method, url, data in _urls(*ops_objects):
        if method == "post":
            assert client.post(url, data, **HX).status_code == 403, url
    assert client.post(reverse("runbook_notes", args=["disk-full"]), {"body": "x"}).status_code == 403
    assert client.post(reverse("notification_read")).status_code == 403
    assert Annotation.objects.count() == 1 and not FindingFeedback.objects.exists()


def test_a_form_with_its_token_passes_csrf(ops_objects, alice):
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    analysis = ops_objects[0]
    url = reverse("incident_annotations", args=[analysis.bundle.incident.pk])
    html = client.get(url, **HX).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    assert client.post(url, {"body": "with token", "csrfmiddlewaretoken": token}, **HX).status_code == 200
    assert Annotation.objects.filter(body="with token").exists()
