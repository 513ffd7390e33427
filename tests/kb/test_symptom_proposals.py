"""Proposals for library symptoms (kb.services.symptom_proposals), like the runbooks': a team
admin's edit with "propose" is the team's own version AND an open proposal; only a maintainer
accepts it (the library's next revision, authored by the maintainer and naming the proposer,
followed by every runbook using it) or declines it; another team never sees the proposal.
Real DB and client (the symptom library of tests/conftest.py, synced)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from kb.models import Runbook, Symptom, SymptomOverlay, SymptomProposal

pytestmark = pytest.mark.django_db

SID = "no-space-left-on-device"
OLD, NEW = "Write failed, no space left on device", "A disk is full and writes fail with ENOSPC"


def _propose(client, user, message: str = "clearer title") -> SymptomProposal:
    client.force_login(user)
    edit = reverse("symptom_edit", args=[SID])
    text = client.get(edit).context["form"].initial["text"]
    assert f"title: {OLD}" in text
    response = client.post(edit, {"text": text.replace(f"title: {OLD}", f"title: {NEW}"), "message": message,
                                  "propose": "on"})
    assert response.status_code == 302, response.context["form"].errors
    return SymptomProposal.objects.get(message=message)


def test_a_team_admins_proposal_is_accepted_by_a_maintainer_for_every_team(client, bob, alice, carol, synced, team):
    proposal = _propose(client, bob)

    assert (proposal.team, proposal.author, proposal.status) == (team, bob, "open")
    assert SymptomOverlay.objects.get(symptom_id=SID, team=team).title == NEW      # Ops' own version meanwhile
    assert Symptom.objects.get(id=SID).title == OLD                                # the library unchanged
    page = reverse("symptom_proposal_detail", args=[proposal.pk])
    client.force_login(alice)                     # a member of Ops: sees it, may not decide
    assert client.get(page).status_code == 200
    assert client.post(page, {"decision": "accept"}).status_code == 403
    assert Symptom.objects.get(id=SID).title == OLD

    client.force_login(carol)
    html = client.get(page).content.decode()
    assert f"-title: {OLD}" in html and f"+title: {NEW}" in html and "Accept for every team" in html
    assert str(proposal.pk) in client.get(reverse("proposal_list")).content.decode()
    assert client.post(page, {"decision": "accept"}).status_code == 302

    symptom = Symptom.objects.get(id=SID)
    revision = symptom.revisions.order_by("-number").first()
    assert symptom.title == NEW and revision.author == carol and f"proposal {proposal.pk} by bob of Ops" in revision.message
    uses = Runbook.objects.get(slug="disk-full").meta["symptoms"]
    assert [s["title"] for s in uses if s["id"] == SID] == [NEW]                  # the runbooks follow
    proposal.refresh_from_db()
    assert (proposal.status, proposal.decided_by) == ("accepted", carol)
    revisions = symptom.revisions.count()
    response = client.post(page, {"decision": "decline"}, follow=True)             # decided already: said, no change
    assert "was accepted already" in response.content.decode() and symptom.revisions.count() == revisions
    proposal.refresh_from_db()
    assert proposal.status == "accepted"


def test_a_declined_proposal_changes_nothing_and_another_team_never_sees_it(client, bob, carol, mallory, synced):
    proposal = _propose(client, bob)
    page = reverse("symptom_proposal_detail", args=[proposal.pk])
    client.force_login(mallory)
    assert client.get(page).status_code == 404 and client.post(page, {"decision": "accept"}).status_code == 404
    assert page not in client.get(reverse("proposal_list")).content.decode()

    client.force_login(carol)
    client.post(page, {"decision": "decline"})

    proposal.refresh_from_db()
    assert proposal.status == "declined" and Symptom.objects.get(id=SID).title == OLD


def test_without_propose_no_proposal_is_filed(client, bob, synced):
    client.force_login(bob)
    edit = reverse("symptom_edit", args=[SID])
    text = client.get(edit).context["form"].initial["text"]
    assert client.post(edit, {"text": text.replace(f"title: {OLD}", f"title: {NEW}")}).status_code == 302
    assert SymptomOverlay.objects.filter(symptom_id=SID).exists() and not SymptomProposal.objects.exists()
