"""A runbook drafted from a lead of an analysis (issue 12): analyzers/draft.py writes the files,
here they get the database's names (slugs and symptom ids in use) and are stored as a runbook
of the team (kb.services.governance.team_runbook_create) with a new symptom of the team.

Both are seen (pages, search, the editor's library) and matched by that team alone until a
maintainer publishes the runbook, which publishes its team symptoms too (runbook_publish).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction

from analyzers.draft import Draft, DraftError, draft_runbook
from analyzers.runbooks import RunbookError, parse_symptom
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


def draft_save(*, analysis: Analysis, rank: int, team: Team, author: Any, runbook_text: str | None = None,
               symptom_text: str | None = None) -> Runbook:
    """Lead `rank` of `analysis` drafted: its symptom into the library, its runbook (as the author
    edited them, or as drafted) as a runbook of `team` (both or neither), and the incident's lines
    as the runbook's positive fixture. Raises RunbookError, DraftError."""
    from kb.services.governance import team_runbook_create   # the governance branch's service

    draft = lead_draft(analysis=analysis, rank=rank)
    symptom_text = symptom_text or draft.symptom_text
    definition = parse_symptom(symptom_text, symptom_file_path("new"))
    if Symptom.objects.filter(id=definition["id"]).exists():
        raise RunbookError(f"{symptom_file_path(definition['id'])}: a symptom named '{definition['id']}' exists "
                           "already; choose another id")
    with transaction.atomic():
        symptom_save(definition=definition, text=symptom_text, author=author, message="drafted from a lead",
                     team=team)
        runbook = team_runbook_create(team=team, text=runbook_text or draft.runbook_text, author=author,
                                      message=f"drafted from lead {rank} of {incident_label(analysis)}")
    fixture_store(runbook=runbook, analysis=analysis, lead=analysis_lead(analysis=analysis, rank=rank))
    return runbook


# --- the positive fixture: the lead's record and its context, in the fixture cases' layout ----

def fixture_dir(slug: str) -> Path:
    return Path(settings.DRAFT_FIXTURES_DIR) / slug


def fixture_store(*, runbook: Runbook, analysis: Analysis, lead: dict[str, Any]) -> Path:
    """<DRAFT_FIXTURES_DIR>/<slug>/positive/<host>/<file> with the record and the lines around
    it (as the incident page shows them; the record alone when the bundle's file is gone), and
    SOURCE.md + expected.json as tests/fixtures/cases/<slug>/positive/ has them."""
    from kb.services.incidents import analysis_context

    record = lead["text"].split("\n")
    context = analysis_context(analysis=analysis, path=lead["path"], line=lead["line"],
                               end=lead["line"] + len(record) - 1)
    lines = [item["text"] for item in context["lines"]] if context and context.get("lines") else record
    root = fixture_dir(runbook.slug) / "positive"
    if root.exists():
        shutil.rmtree(root)
    target = root / _safe(lead.get("host") or "bundle") / _safe(Path(lead["path"]).name)
    target.parent.mkdir(parents=True)
    target.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (root / "SOURCE.md").write_text(
        f"# {runbook.slug} / positive\n\nLines of {incident_label(analysis)} in team {analysis.team.name}:\n"
        f"`{lead['path']}` line {lead['line']} (lead {lead.get('rank')}, {lead.get('reason') or 'a lead'}) and the "
        f"lines around it, as uploaded. Drafted in the app; review the provenance before it goes into runbooks/.\n",
        encoding="utf-8")
    (root / "expected.json").write_text(json.dumps(
        {"expected": [runbook.slug], "acceptable": [],
         "notes": f"drafted from lead {lead.get('rank')} of {incident_label(analysis)}"}, indent=2) + "\n",
        encoding="utf-8")
    return root


def _safe(name: str) -> str:
    """A path part from bundle data: no separators, no dot-dot."""
    cleaned = re.sub(r"[^\w.\-]", "_", name).lstrip(".")
    return cleaned or "file"


def fixture_export(*, slug: str, cases_dir: str | Path) -> Path | None:
    """Copy a drafted runbook's fixture to cases_dir/<slug>/ (tests/fixtures/cases layout)."""
    source = fixture_dir(slug)
    if not source.is_dir():
        return None
    target = Path(cases_dir) / slug
    shutil.copytree(source, target, dirs_exist_ok=True)
    return target
