from __future__ import annotations

import pytest
from django.urls import reverse

from kb.models import Runbook, RunbookRevision, Symptom

pytestmark = pytest.mark.django_db


def _edit_url(slug: str = "disk-full") -> str:
    return reverse("runbook_edit", args=[slug])


@pytest.fixture
def client_carol(client, carol):
    """A maintainer (staff): her edits change the shipped runbook for everyone."""
    client.force_login(carol)
    return client


def test_it_prefills_the_editor_with_the_file(client, carol, synced, runbook_texts):
    client.force_login(carol)

    response = client.get(_edit_url())

    assert response.status_code == 200
    assert response.context["form"].initial["text"] == runbook_texts["disk-full"]
    assert response.context["form"].initial["base_revision"] == 1
    assert b"<title>Edit disk-full" in response.content


def test_it_saves_an_edit_as_a_new_revision(client_carol, carol, synced, runbook_texts):
    text = runbook_texts["disk-full"].replace("severity: high", "severity: critical")

    response = client_carol.post(
        _edit_url(), {"text": text.replace("\n", "\r\n"), "message": "worse than we thought", "base_revision": 1}
    )

    assert response.status_code == 302 and response["Location"] == reverse("runbook_detail", args=["disk-full"])
    runbook = Runbook.objects.get(slug="disk-full")
    assert runbook.severity == "critical"
    revision = runbook.revisions.get(number=2)
    # The browser's CRLF line endings are stored as the file's LF.
    assert revision.text == text
    assert revision.author == carol and revision.message == "worse than we thought"


def test_it_rebuilds_derived_rows_on_edit(client_carol, synced, runbook_texts):
    text = runbook_texts["disk-full"].replace("dfs.datanode.du.reserved", "dfs.datanode.du.reserved.pct")

    client_carol.post(_edit_url(), {"text": text, "base_revision": 1})

    assert list(Runbook.objects.get(slug="disk-full").knobs.values_list("key", flat=True)) == [
        "dfs.datanode.du.reserved.pct"
    ]


def test_it_does_not_record_a_revision_without_changes(client_bob, synced, runbook_texts):
    response = client_bob.post(_edit_url(), {"text": runbook_texts["disk-full"], "base_revision": 1}, follow=True)

    assert RunbookRevision.objects.filter(runbook__slug="disk-full").count() == 1
    assert b"No changes" in response.content


@pytest.mark.parametrize(
    "change, reason",
    [
        (("severity: high", "severity: apocalyptic"), b"severity: must be one of"),
        (("slug: disk-full", "slug: disk-empty"), b"does not match the file name"),
        (("    role: required\n    weight: 0.7", "    role: required\n    weight: 7"), b"weight must be a number"),
        (("components: [os, hdfs]", "components: [os, hdfs"), b"invalid YAML"),
    ],
)
def test_it_shows_validation_errors_inline_and_saves_nothing(client_bob, synced, runbook_texts, change, reason):
    text = runbook_texts["disk-full"].replace(*change)

    response = client_bob.post(_edit_url(), {"text": text, "base_revision": 1})

    assert response.status_code == 200
    assert reason in response.content
    assert b"runbooks/disk-full.md" in response.content
    # The rejected text stays in the editor so the author can fix it.
    assert response.context["form"]["text"].value() == text
    assert RunbookRevision.objects.filter(runbook__slug="disk-full").count() == 1
    assert Runbook.objects.get(slug="disk-full").severity == "high"


def test_it_refuses_a_symptom_defined_inside_a_runbook(client_bob, synced, runbook_texts):
    text = runbook_texts["jvm-long-gc-pause"].replace(
        "{id: flink-tm-heartbeat-timeout, role: supporting, weight: 0.1}",
        "{id: flink-tm-heartbeat-timeout, role: supporting, weight: 0.1, patterns: ['has timed out']}")

    response = client_bob.post(_edit_url("jvm-long-gc-pause"), {"text": text, "base_revision": 1})

    assert b"belong in runbooks/symptoms/flink-tm-heartbeat-timeout.yaml" in response.content
    assert Symptom.objects.get(id="flink-tm-heartbeat-timeout").definition["patterns"] == [
        r"Heartbeat of TaskManager with id \S+ timed out"
    ]


def test_it_refuses_a_symptom_the_library_does_not_have(client_bob, synced, runbook_texts):
    text = runbook_texts["jvm-long-gc-pause"].replace("id: flink-tm-heartbeat-timeout", "id: tm-gone")

    response = client_bob.post(_edit_url("jvm-long-gc-pause"), {"text": text, "base_revision": 1})

    assert b"unknown symptom: no runbooks/symptoms/tm-gone.yaml" in response.content


def test_it_refuses_a_differential_to_an_unknown_runbook(client_bob, synced, runbook_texts):
    text = runbook_texts["jvm-long-gc-pause"].replace("slug: kernel-soft-lockup-stalls-jvm", "slug: no-such-runbook")

    response = client_bob.post(_edit_url("jvm-long-gc-pause"), {"text": text, "base_revision": 1})

    assert b"differential names unknown runbook" in response.content


def test_it_refuses_an_edit_of_a_stale_revision(client_carol, carol, synced, runbook_texts):
    from kb.services.runbooks import runbook_update

    runbook = Runbook.objects.get(slug="disk-full")
    runbook_update(runbook=runbook, text=runbook_texts["disk-full"] + "\nMore.\n", author=carol, base_revision=1)

    response = client_carol.post(_edit_url(), {"text": runbook_texts["disk-full"] + "\nOther.\n", "base_revision": 1})

    assert b"reload the page" in response.content
    assert runbook.revisions.count() == 2


def test_it_lets_only_staff_and_team_admins_edit(client, alice, bob, carol, mallory, team, synced, runbook_texts):
    url = _edit_url()
    client.force_login(alice)
    assert client.get(url).status_code == 403
    assert client.post(url, {"text": runbook_texts["disk-full"] + "x\n"}).status_code == 403
    assert b">Edit<" not in client.get(reverse("runbook_detail", args=["disk-full"])).content

    # Team admins may edit (their save is their team's overlay: tests/kb/test_governance.py), staff too.
    for user in (bob, carol, mallory):
        client.force_login(user)
        assert client.get(url).status_code == 200, user


def test_it_lists_revisions_and_shows_a_diff(client_carol, carol, synced, runbook_texts):
    text = runbook_texts["disk-full"].replace("severity: high", "severity: critical")
    client_carol.post(_edit_url(), {"text": text, "message": "raise severity", "base_revision": 1})

    response = client_carol.get(reverse("runbook_history", args=["disk-full"]))

    assert response.status_code == 200
    content = response.content.decode()
    assert "r2" in content and "r1" in content
    assert "carol" in content and "raise severity" in content and "file sync" in content
    assert '<span class="diff-del">-severity: high</span>' in content
    assert '<span class="diff-add">+severity: critical</span>' in content


def test_it_diffs_two_chosen_revisions(client_bob, bob, synced, runbook_texts):
    from kb.services.runbooks import runbook_update

    runbook = Runbook.objects.get(slug="disk-full")
    base = runbook_texts["disk-full"]
    runbook_update(runbook=runbook, text=base + "\nTwo.\n", author=bob)
    runbook_update(runbook=runbook, text=base + "\nTwo.\n\nThree.\n", author=bob)

    response = client_bob.get(reverse("runbook_history", args=["disk-full"]), {"a": 1, "b": 3})

    content = response.content.decode()
    assert "Changes from r1 to r3" in content
    assert '<span class="diff-add">+Two.</span>' in content and '<span class="diff-add">+Three.</span>' in content


def test_it_downloads_the_markdown_file(client_alice, synced, runbook_texts):
    response = client_alice.get(reverse("runbook_raw", args=["disk-full"]))

    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="disk-full.md"'
    assert response.content.decode() == runbook_texts["disk-full"]
