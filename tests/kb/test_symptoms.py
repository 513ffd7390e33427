"""The symptom library in the app: a symptom's page lists the runbooks that
share it; one edit changes every one of them; the rules of runbook editing
are those of the shipped catalog: only a maintainer (staff) changes a library symptom."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kb.models import Runbook, Symptom

pytestmark = pytest.mark.django_db
HEARTBEAT = "flink-tm-heartbeat-timeout"


@pytest.fixture
def client_carol(client, carol):
    client.force_login(carol)
    return client


def _patterns_in(slug: str, sid: str = HEARTBEAT) -> list[str]:
    (use,) = [s for s in Runbook.objects.get(slug=slug).meta["symptoms"] if s["id"] == sid]
    return use["patterns"]


def test_a_symptom_page_lists_every_runbook_that_shares_it(client_alice, synced):
    response = client_alice.get(reverse("symptom_detail", args=[HEARTBEAT]))

    assert response.status_code == 200
    page = response.content.decode()
    assert "Runbooks that use it (2)" in page
    assert "jvm-long-gc-pause" in page and "kernel-soft-lockup-stalls-jvm" in page
    assert r"Heartbeat of TaskManager with id \S+ timed out" in page
    assert reverse("symptom_edit", args=[HEARTBEAT]) not in page  # alice may not edit


def test_one_edit_changes_the_symptom_in_every_runbook_that_uses_it(client_carol, synced, symptom_texts):
    text = symptom_texts[HEARTBEAT].replace(r"id \S+ timed out", r"id \S+ (?:has )?timed out")

    response = client_carol.post(reverse("symptom_edit", args=[HEARTBEAT]),
                               {"text": text, "message": "2.x wording", "base_revision": 1})

    assert response.status_code == 302
    want = [r"Heartbeat of TaskManager with id \S+ (?:has )?timed out"]
    assert _patterns_in("jvm-long-gc-pause") == want and _patterns_in("kernel-soft-lockup-stalls-jvm") == want
    rev = Symptom.objects.get(id=HEARTBEAT).revisions.first()
    assert (rev.number, rev.message, rev.author.username) == (2, "2.x wording", "carol")
    # The runbooks' files did not change, so they get no new revision.
    assert Runbook.objects.get(slug="jvm-long-gc-pause").revisions.count() == 1


def test_an_edit_that_breaks_a_runbook_using_it_is_refused_with_the_reason(client_carol, carol, synced, symptom_texts):
    from kb.services.export import runbook_text
    from kb.services.runbooks import runbook_update

    runbook = Runbook.objects.get(slug="jvm-long-gc-pause")
    runbook_update(runbook=runbook, author=carol, text=runbook_text(runbook=runbook).replace(
        "{id: jvm-pause-detected, role: required, weight: 0.6}",
        "{id: jvm-pause-detected, role: required, weight: 0.6, where: [{capture: pause_ms, op: '>=', value: 5000}]}"))
    text = symptom_texts["jvm-pause-detected"].replace("pause_ms", "paused_ms")

    response = client_carol.post(reverse("symptom_edit", args=["jvm-pause-detected"]), {"text": text, "base_revision": 1})

    assert response.status_code == 200
    assert b"breaks runbooks/jvm-long-gc-pause.md" in response.content and b"pause_ms" in response.content
    assert Symptom.objects.get(id="jvm-pause-detected").definition["captures"] == {"pause_ms": "ms"}


@pytest.mark.parametrize("change,reason", [
    (("title: ", "titel: "), b"unknown key(s) [&#x27;titel&#x27;]"),
    (("with id tm-1 timed out", "with id tm-1 is late"), b"examples[0]: is not matched by any of the patterns"),
    ((f"id: {HEARTBEAT}", "id: other-id"), b"does not match the file name"),
    (("patterns:", "patterns: ["), b"invalid YAML"),
])
def test_an_invalid_symptom_file_is_shown_and_nothing_saved(client_carol, synced, symptom_texts, change, reason):
    text = symptom_texts[HEARTBEAT].replace(*change)

    response = client_carol.post(reverse("symptom_edit", args=[HEARTBEAT]), {"text": text, "base_revision": 1})

    assert response.status_code == 200 and reason in response.content
    assert response.context["form"]["text"].value() == text
    assert Symptom.objects.get(id=HEARTBEAT).revisions.count() == 1


def test_a_stale_revision_is_refused(client_carol, carol, synced, symptom_texts):
    from kb.services.symptoms import symptom_update

    symptom_update(symptom=Symptom.objects.get(id=HEARTBEAT), author=carol, base_revision=1,
                   text=symptom_texts[HEARTBEAT].replace("title: Flink lost", "title: Flink has lost"))

    response = client_carol.post(reverse("symptom_edit", args=[HEARTBEAT]),
                               {"text": symptom_texts[HEARTBEAT] + "level: INFO\n", "base_revision": 1})

    assert b"reload the page" in response.content


def test_a_team_admins_symptom_edit_is_the_teams_own_version(client, alice, bob, carol, mallory, team, other_team,
                                                               synced, symptom_texts):
    """A symptom is part of every team's catalog: a team admin changing the library would
    change what every team's analyses match (issue 17, weakness 1: "signatures can be
    weakened the same way"). Their edit is their team's version; the library stays."""
    from kb.models import SymptomOverlay
    from kb.selectors.catalog import catalog_metas

    url = reverse("symptom_edit", args=[HEARTBEAT])
    client.force_login(alice)   # a member, not an admin
    assert client.get(url).status_code == 403
    assert client.post(url, {"text": "id: x\n"}).status_code == 403
    weakened = symptom_texts[HEARTBEAT].replace(r"id \S+ timed out", r"id never-matches timed out")
    weakened = weakened.replace("tm-1 timed out", "never-matches timed out")
    client.force_login(mallory)

    assert client.post(url, {"text": weakened, "message": "ours", "base_revision": 1}).status_code == 302

    library = [r"Heartbeat of TaskManager with id \S+ timed out"]
    assert Symptom.objects.get(id=HEARTBEAT).definition["patterns"] == library
    assert _patterns_in("jvm-long-gc-pause") == library
    overlay = SymptomOverlay.objects.get(symptom_id=HEARTBEAT, team=other_team)
    assert (overlay.revisions.get().author, overlay.definition["patterns"]) == (
        mallory, [r"Heartbeat of TaskManager with id never-matches timed out"])

    def patterns(team_, slug="jvm-long-gc-pause"):
        (meta,) = [m for m in catalog_metas(team=team_) if m["slug"] == slug]
        return [s["patterns"] for s in meta["symptoms"] if s["id"] == HEARTBEAT][0]

    assert patterns(team) == library
    assert patterns(other_team) == overlay.definition["patterns"]
    assert "never-matches" in client.get(reverse("symptom_detail", args=[HEARTBEAT])).content.decode()
    assert "never-matches" in client.get(reverse("runbook_detail", args=["jvm-long-gc-pause"])).content.decode()
    client.force_login(bob)
    assert "never-matches" not in client.get(reverse("symptom_detail", args=[HEARTBEAT])).content.decode()
    assert "never-matches" not in client.get(reverse("runbook_detail", args=["jvm-long-gc-pause"])).content.decode()

    client.force_login(mallory)
    assert client.post(reverse("symptom_overlay_drop", args=[HEARTBEAT])).status_code == 302
    assert patterns(other_team) == library
    assert "never-matches" not in client.get(reverse("symptom_detail", args=[HEARTBEAT])).content.decode()
    overlay.refresh_from_db()   # kept, dropped, with who went back in its history
    assert overlay.dropped is not None
    assert [(r.number, r.author, r.message) for r in overlay.revisions.order_by("number")] == [
        (1, mallory, "ours"), (2, mallory, "back to the library's symptom")]


def test_the_runbook_editor_shows_which_runbooks_share_each_symptom(client_bob, synced):
    page = client_bob.get(reverse("runbook_edit", args=["jvm-long-gc-pause"])).content.decode()

    assert reverse("symptom_detail", args=[HEARTBEAT]) in page
    assert "kernel-soft-lockup-stalls-jvm</a> (supporting)" in page



def test_a_runbook_page_says_when_a_symptom_counts_only_as_a_burst(client_alice, runbooks_dir):
    from kb.services.sync import runbook_sync
    from tests.conftest import SOFT_LOCKUP

    path = runbooks_dir / "kernel-soft-lockup-stalls-jvm.md"
    path.write_text(SOFT_LOCKUP.replace("{id: kernel-soft-lockup, role: required, weight: 0.6}",
                                        "{id: kernel-soft-lockup, role: required, weight: 0.6, "
                                        "burst: {count: 3, within: 1m, hosts: same}}"), encoding="utf-8")
    runbook_sync(directory=runbooks_dir)
    page = client_alice.get(reverse("runbook_detail", args=["kernel-soft-lockup-stalls-jvm"])).content.decode()
    assert "Only as a burst: at least <strong>3</strong> within <code>1m</code> on one host" in page
    other = client_alice.get(reverse("runbook_detail", args=["jvm-long-gc-pause"])).content.decode()
    assert "Only as a burst" not in other
