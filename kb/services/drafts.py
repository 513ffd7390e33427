"""A runbook drafted from a lead of an analysis (issue 12): analyzers/draft.py writes the files,
here they get the database's names (slugs and symptom ids in use) and are stored as a runbook
of the team (kb.services.governance.team_runbook_create) with a new library symptom.

The new symptom is used by the new runbook alone, so no other team's analyses change; the
runbook is seen by its team until a maintainer publishes it.
"""

from __future__ import annotations

from typing import Any

from django.db import transaction

from analyzers.draft import Draft, DraftError, draft_runbook
from analyzers.runbooks import parse_symptom
from kb.models import Analysis, Runbook, Symptom, Team
from kb.services.symptoms import symptom_file_path, symptom_save


def analysis_lead(*, analysis: Analysis, rank: int) -> dict[str, Any]:
    """The lead of `analysis` at `rank` (1 = first, as the page numbers them)."""
    leads = (analysis.result or {}).get("leads") or []
    for lead in leads:
        if lead.get("rank") == rank:
            return lead
    raise DraftError(f"analysis {analysis.pk} has no lead {rank} (it has {len(leads)})")


def incident_label(analysis: Analysis) -> str:
    incident = analysis.bundle.incident
    return f"incident {incident.pk} \"{incident.title}\" (analysis {analysis.pk}, {analysis.bundle.original_name})"


def lead_draft(*, analysis: Analysis, rank: int) -> Draft:
    """The draft of lead `rank` of `analysis`, named apart from every runbook and symptom."""
    return draft_runbook(analysis_lead(analysis=analysis, rank=rank), incident=incident_label(analysis),
                         taken=set(Runbook.objects.values_list("slug", flat=True)),
                         taken_symptoms=set(Symptom.objects.values_list("id", flat=True)))


def draft_save(*, draft: Draft, team: Team, author: Any, runbook_text: str | None = None) -> Runbook:
    """The draft's symptom into the library and its runbook (as the author edited it, or as
    drafted) as a runbook of `team`; both or neither. Raises RunbookError."""
    from kb.services.governance import team_runbook_create   # the governance branch's service

    definition = parse_symptom(draft.symptom_text, symptom_file_path(draft.symptom_id), draft.symptom_id)
    with transaction.atomic():
        symptom_save(definition=definition, text=draft.symptom_text, author=author,
                     message=f"drafted for {draft.slug}")
        return team_runbook_create(team=team, text=runbook_text or draft.runbook_text, author=author,
                                   message="drafted from a lead")
