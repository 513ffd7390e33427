"""The runbook editor checks `leads_to` against the runbooks the editor's team sees,
and a runbook page shows links only among the runbooks its viewer's team sees.

bob is an admin of team Ops (not staff): his edit of a shipped runbook is Ops's
overlay (kb/README.md "Runbook governance"); mallory is of another team."""

from __future__ import annotations

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db


def _with_link(text: str, slug: str, kind: str = "cause") -> str:
    return text.replace("\nfixes:", f"\nleads_to:\n  - {{slug: {slug}, as: {kind}, why: the test says so}}\nfixes:", 1)


def _post(client, slug, text):
    return client.post(reverse("runbook_edit", args=[slug]), {"text": text, "base_revision": 1})


def test_it_saves_a_link_to_a_known_runbook_in_the_teams_overlay(client_bob, synced, runbook_texts):
    from kb.models import Runbook

    response = _post(client_bob, "kernel-soft-lockup-stalls-jvm",
                     _with_link(runbook_texts["kernel-soft-lockup-stalls-jvm"], "disk-full"))

    assert response.status_code == 302
    overlay = Runbook.objects.get(slug="kernel-soft-lockup-stalls-jvm", overlay_of__isnull=False)
    assert overlay.meta["leads_to"][0]["slug"] == "disk-full"
    shipped = Runbook.objects.get(slug="kernel-soft-lockup-stalls-jvm", overlay_of__isnull=True)
    assert "disk-full" not in [link["slug"] for link in shipped.meta.get("leads_to") or []]


def test_it_refuses_a_link_to_an_unknown_runbook(client_bob, synced, runbook_texts):
    response = _post(client_bob, "jvm-long-gc-pause", _with_link(runbook_texts["jvm-long-gc-pause"], "no-such-runbook"))

    assert b"leads_to names unknown runbook &#x27;no-such-runbook&#x27;" in response.content


def test_it_refuses_a_link_that_ranks_a_runbook_above_itself(client_bob, synced, runbook_texts):
    _post(client_bob, "kernel-soft-lockup-stalls-jvm",
          _with_link(runbook_texts["kernel-soft-lockup-stalls-jvm"], "jvm-long-gc-pause"))

    # The lockup causes the pause already; the pause causing the lockup closes a cycle.
    response = _post(client_bob, "jvm-long-gc-pause",
                     _with_link(runbook_texts["jvm-long-gc-pause"], "kernel-soft-lockup-stalls-jvm"))

    assert b"leads_to ranks runbooks in a cycle" in response.content


def test_both_runbook_pages_show_the_link(client_bob, synced, runbook_texts):
    _post(client_bob, "kernel-soft-lockup-stalls-jvm", _with_link(runbook_texts["kernel-soft-lockup-stalls-jvm"], "disk-full"))

    cause = client_bob.get(reverse("runbook_detail", args=["kernel-soft-lockup-stalls-jvm"])).content.decode()
    consequence = client_bob.get(reverse("runbook_detail", args=["disk-full"])).content.decode()

    assert 'Causes\n        <a href="/runbooks/disk-full/">disk-full</a>: the test says so' in cause
    assert ('A consequence of\n        <a href="/runbooks/kernel-soft-lockup-stalls-jvm/">kernel-soft-lockup-stalls-jvm</a>: '
            'the test says so') in consequence


def test_another_team_never_sees_a_teams_link(client, bob, mallory, synced, runbook_texts):
    client.force_login(bob)
    _post(client, "kernel-soft-lockup-stalls-jvm", _with_link(runbook_texts["kernel-soft-lockup-stalls-jvm"], "disk-full"))
    client.force_login(mallory)

    cause = client.get(reverse("runbook_detail", args=["kernel-soft-lockup-stalls-jvm"])).content.decode()
    consequence = client.get(reverse("runbook_detail", args=["disk-full"])).content.decode()

    assert "the test says so" not in cause and "the test says so" not in consequence
