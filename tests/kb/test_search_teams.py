"""Search reads the catalog the searcher's team sees (kb.selectors.catalog), so a
team's runbook overlays, own unpublished runbooks and versions of library
symptoms never reach another team's word or pasted-log search results, nor
move BM25's word statistics there (kb.services.search_index keeps one index
per team catalog).

Ops (alice a member, bob its admin) edits; mallory is the admin of another
team; carol is a maintainer (staff)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kb.models import Runbook, Symptom
from kb.services.governance import runbook_overlay_drop, runbook_publish, team_runbook_create
from kb.services.search import runbook_search_log, word_search
from kb.services.symptom_overlays import symptom_overlay_save
from tests.kb.test_search import STACK_TRACE

pytestmark = pytest.mark.django_db

# A word no shipped test runbook holds, written by Ops into its own versions.
WORD = "quarantine"


def _slugs(found) -> list[str]:
    return [h.runbook.slug for h in found.hits]


def _ops_overlay(client, bob, runbook_texts) -> Runbook:
    text = runbook_texts["disk-full"].replace("## Summary", f"## Summary\n\nOps puts the node in {WORD} first.")
    client.force_login(bob)
    assert client.post(reverse("runbook_edit", args=["disk-full"]), {"text": text, "message": "ours"}).status_code == 302
    return Runbook.objects.get(slug="disk-full", overlay_of__isnull=False)


def _ops_runbook(team, bob, runbook_texts) -> Runbook:
    text = (runbook_texts["disk-full"].replace("slug: disk-full", "slug: ops-disk-full")
            .replace("title: A disk filled up", f"title: Ops disk {WORD} procedure"))
    return team_runbook_create(team=team, text=text, author=bob)


def test_a_teams_overlay_is_found_by_that_team_only(client, alice, bob, mallory, team, other_team, synced,
                                                    runbook_texts):
    overlay = _ops_overlay(client, bob, runbook_texts)

    ours = word_search(q=WORD, team=team)
    assert [h.runbook.pk for h in ours.hits] == [overlay.pk]
    assert f"<mark>{WORD}</mark>" in ours.hits[0].snippet_html
    assert word_search(q=WORD, team=other_team).hits == []
    assert word_search(q=WORD, team=None).hits == []
    # The other team finds the shipped row under the same slug, never the overlay.
    (theirs,) = [h for h in word_search(q="disk", team=other_team).hits if h.runbook.slug == "disk-full"]
    assert theirs.runbook.overlay_of_id is None and WORD not in theirs.snippet_html

    # The page searches the viewer's team's catalog.
    client.force_login(mallory)
    response = client.get(reverse("search"), {"q": WORD})
    assert response.context["hits"] == [] and f"<mark>{WORD}</mark>" not in response.content.decode()
    client.force_login(alice)
    response = client.get(reverse("search"), {"q": WORD})
    assert [h.runbook.pk for h in response.context["hits"]] == [overlay.pk]


def test_a_dropped_overlay_leaves_the_teams_index(client, bob, team, synced, runbook_texts):
    overlay = _ops_overlay(client, bob, runbook_texts)
    assert _slugs(word_search(q=WORD, team=team)) == ["disk-full"]

    runbook_overlay_drop(overlay=overlay, user=bob)

    assert word_search(q=WORD, team=team).hits == []


def test_an_unpublished_team_runbook_is_found_by_its_team_only_until_published(
        bob, carol, team, other_team, synced, runbook_texts):
    runbook = _ops_runbook(team, bob, runbook_texts)

    assert _slugs(word_search(q=WORD, team=team)) == ["ops-disk-full"]
    assert word_search(q=WORD, team=other_team).hits == []
    assert word_search(q=WORD, team=None).hits == []

    runbook_publish(runbook=runbook, user=carol)

    assert _slugs(word_search(q=WORD, team=other_team)) == ["ops-disk-full"]


def test_another_teams_runbooks_do_not_move_our_ranking(bob, team, other_team, synced, runbook_texts):
    before = {h.runbook.slug: h.score for h in word_search(q="disk space", team=other_team).hits}

    _ops_runbook(team, bob, runbook_texts)  # says "disk" and "space" as often as disk-full

    # One index over every row would count Ops's runbook in BM25's document
    # frequencies and change the other team's scores; in Ops's own catalog it does.
    assert {h.runbook.slug: h.score for h in word_search(q="disk space", team=other_team).hits} == before
    ours = {h.runbook.slug: h.score for h in word_search(q="disk space", team=team).hits}
    assert "ops-disk-full" in ours and ours["disk-full"] != before["disk-full"]


def test_a_teams_version_of_a_symptom_is_searched_by_that_team_only(bob, team, other_team, synced, symptom_texts):
    text = symptom_texts["no-space-left-on-device"].replace(
        "title: Write failed, no space left on device", f"title: Volume full, node to {WORD}")

    symptom_overlay_save(symptom=Symptom.objects.get(id="no-space-left-on-device"), team=team, user=bob, text=text)

    (hit,) = word_search(q=WORD, team=team).hits
    assert (hit.runbook.slug, hit.fields) == ("disk-full", ["symptoms"])
    assert word_search(q=WORD, team=other_team).hits == []


def test_a_pasted_log_matches_an_unpublished_team_runbook_for_its_team_only(bob, team, other_team, synced,
                                                                           runbook_texts):
    _ops_runbook(team, bob, runbook_texts)

    ours = runbook_search_log(text=STACK_TRACE, team=team)
    theirs = runbook_search_log(text=STACK_TRACE, team=other_team)

    # In Ops's catalog two runbooks share the symptom: candidates, no finding alone.
    assert ours["findings"] == []
    assert sorted(c["runbook"] for c in ours["candidates"]) == ["disk-full", "ops-disk-full"]
    assert [f["runbook"] for f in theirs["findings"]] == ["disk-full"]
    assert "ops-disk-full" not in [c["runbook"] for c in theirs["candidates"]]
    assert all("ops-disk-full" not in s.get("candidate_runbooks", []) for s in theirs["symptoms"])
