"""Proposals for library symptoms (kb/README.md "Runbook governance"), like the runbooks':
a team admin's edit of a library symptom is the team's overlay (kb.services.symptom_overlays);
with "propose" the text is also filed as a SymptomProposal, which a maintainer (staff) accepts,
with the diff shown, as the library symptom's next revision for every team (authored by the
maintainer, naming the proposer; every runbook using it follows), or declines.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from analyzers.runbooks import RunbookError, parse_symptom
from kb.access import admin_team_ids
from kb.lib.revisions import DiffLine, revision_diff
from kb.models import Symptom, SymptomProposal, SymptomRevision, Team
from kb.services.governance import proposal_settle
from kb.services.symptoms import symptom_file_path, symptom_text, symptom_update


def symptom_proposal_create(*, symptom: Symptom, team: Team, user: Any, text: str,
                            message: str = "") -> SymptomProposal:
    """File `text` as a change of library `symptom` (one every team sees) for the maintainers."""
    if symptom.team_id is not None and not symptom.published:
        raise RunbookError(f"{symptom_file_path(symptom.id)}: a team's own symptom is its admins' to edit")
    if team.pk not in admin_team_ids(user):
        raise PermissionDenied("Only a team's admins propose changes in its name.")
    text = text.replace("\r\n", "\n")
    parse_symptom(text, symptom_file_path(symptom.id), expected_id=symptom.id)   # RunbookError: refused
    last = symptom.revisions.order_by("-number").first()
    return SymptomProposal.objects.create(symptom=symptom, team=team, author=user, text=text, message=message[:200],
                                          base_revision=last.number if last else 0)


def symptom_proposal_diff(*, proposal: SymptomProposal) -> list[DiffLine]:
    """The library symptom as it is now against the proposed file."""
    last = proposal.symptom.revisions.order_by("-number").first()
    return revision_diff(old=symptom_text(symptom=proposal.symptom), new=proposal.text,
                         old_label=f"r{last.number if last else 0} (library)", new_label=f"proposal {proposal.pk}")


def symptom_proposal_decide(*, proposal: SymptomProposal, user: Any, accept: bool) -> SymptomRevision | None:
    """A maintainer accepts (the library's next revision; RunbookError if a runbook using the
    symptom would break) or declines an open proposal."""
    return proposal_settle(proposal=proposal, user=user, accept=accept,
                           apply=lambda **kw: symptom_update(symptom=proposal.symptom, **kw))
