"""A team's own version of a library symptom (kb/README.md "Runbook governance").

Library symptoms are in every team's catalog: a maintainer's (staff) edit
changes the library for everyone (kb.services.symptoms.symptom_update); a team
admin's edit is the team's SymptomOverlay, which the team's analyses, search
and pages use in every runbook naming the symptom (team_library,
catalog_resolve), and nobody else's. Each save is a SymptomOverlayRevision
with its author.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from analyzers.runbooks import Library, RunbookError, parse_symptom, resolve_symptoms, symptom_uses
from kb.access import admin_team_ids, is_maintainer, symptom_team_edits_row
from kb.models import Runbook, Symptom, SymptomOverlay, SymptomOverlayRevision, SymptomRevision, Team
from kb.services.symptom_proposals import symptom_proposal_create
from kb.services.symptoms import (
    db_library, revision_check_base, symptom_file_path, symptom_update, symptom_users_check,
)


@dataclass
class SymptomAsSeen:
    """What a page shows of a symptom: the library's, or the viewer team's overlay."""
    id: str
    title: str
    definition: dict[str, Any]
    overlay: SymptomOverlay | None = None


def symptom_as_seen(*, symptom: Symptom, team: Team | int | None) -> SymptomAsSeen:
    team_id = team.pk if isinstance(team, Team) else team
    overlay = (SymptomOverlay.objects.filter(symptom=symptom, team_id=team_id, dropped__isnull=True).first()
               if team_id else None)
    source = overlay or symptom
    return SymptomAsSeen(symptom.id, source.title, source.definition, overlay)


def team_overlays(team_id: int | None) -> dict[str, dict[str, Any]]:
    if team_id is None:
        return {}
    return {o.symptom_id: {"id": o.symptom_id, "title": o.title, **o.definition}
            for o in SymptomOverlay.objects.filter(team_id=team_id, dropped__isnull=True)}


def team_library(team_id: int | None) -> Library:
    """The symptom library as `team_id` sees it: the library with its overlays in place."""
    from kb.selectors.catalog import symptom_catalog

    return {**db_library(symptom_catalog(team=team_id)), **team_overlays(team_id)}


def catalog_resolve(metas: list[dict[str, Any]], team_id: int | None) -> list[dict[str, Any]]:
    """Runbook metas with the team's symptom overlays resolved into the symptoms they name."""
    overlays = team_overlays(team_id)
    if not overlays:
        return metas
    library = team_library(team_id)
    out = []
    for meta in metas:
        if any(s.get("id") in overlays for s in meta.get("symptoms") or []):
            meta = {**meta, "symptoms": resolve_symptoms(symptom_uses(meta)["symptoms"], library)}
        out.append(meta)
    return out


def symptom_edit_save(*, symptom: Symptom, team: Team | None, user: Any, text: str, message: str = "",
                      base_revision: int | None = None,
                      propose: bool = False) -> SymptomRevision | SymptomOverlayRevision | None:
    """A maintainer's edit changes the library; a team admin's is the team's overlay (plus a
    proposal to the maintainers with `propose`), or the symptom itself when it is the team's
    own and not yet published (no one else sees it)."""
    own = symptom_team_edits_row(symptom=symptom, team=team) and team.pk in admin_team_ids(user)
    if is_maintainer(user) or own:
        return symptom_update(symptom=symptom, text=text, author=user, message=message, base_revision=base_revision)
    if team is None or team.pk not in admin_team_ids(user):
        raise PermissionDenied("Only maintainers change the symptom library, and team admins their team's version.")
    with transaction.atomic():   # the overlay and its proposal (kb.services.symptom_proposals), or neither
        revision = symptom_overlay_save(symptom=symptom, team=team, user=user, text=text, message=message,
                                        base_revision=base_revision)
        if propose:
            symptom_proposal_create(symptom=symptom, team=team, user=user, text=text, message=message)
    return revision


def symptom_overlay_save(*, symptom: Symptom, team: Team, user: Any, text: str, message: str = "",
                         base_revision: int | None = None) -> SymptomOverlayRevision | None:
    """Save `team`'s version of `symptom`; every runbook the team sees that names
    it must stay valid with it. None when nothing changed. Raises RunbookError."""
    from kb.selectors.catalog import runbook_catalog

    text = text.replace("\r\n", "\n")
    path = symptom_file_path(symptom.id)
    definition = parse_symptom(text, path, expected_id=symptom.id)
    library = team_library(team.pk)
    library[symptom.id] = definition
    symptom_users_check(runbook_catalog(team=team).filter(symptom_uses__symptom=symptom).distinct(), library, path)
    rest = {k: v for k, v in definition.items() if k not in ("id", "title")}
    with transaction.atomic():
        overlay = SymptomOverlay.objects.select_for_update().filter(symptom=symptom, team=team).first()
        last = overlay.revisions.order_by("-number").first() if overlay else None
        live = overlay is not None and overlay.dropped is None
        if not live and (symptom.title, symptom.definition) == (definition["title"], rest):
            return None   # the library's own definition: nothing of the team's to keep
        if live and last is not None and last.text == text:
            return None
        number = revision_check_base(last=last, base_revision=base_revision if live else None, path=path)
        overlay = overlay or SymptomOverlay(symptom=symptom, team=team)
        overlay.title, overlay.definition, overlay.dropped = definition["title"], rest, None
        overlay.save()
        return SymptomOverlayRevision.objects.create(overlay=overlay, number=number + 1, text=text, author=user,
                                                     message=message[:200])


def symptom_overlay_drop(*, overlay: SymptomOverlay, user: Any) -> None:
    """The team uses the library's symptom again. The overlay stays, dropped, with a
    last revision (by `user`) holding the library's file: the history keeps who went back."""
    from kb.services.symptoms import symptom_text

    if overlay.team_id not in admin_team_ids(user):
        raise PermissionDenied("Only the team's admins drop its version of a symptom.")
    with transaction.atomic():
        last = overlay.revisions.order_by("-number").first()
        SymptomOverlayRevision.objects.create(overlay=overlay, number=(last.number if last else 0) + 1,
                                              text=symptom_text(symptom=overlay.symptom), author=user,
                                              message="back to the library's symptom")
        SymptomOverlay.objects.filter(pk=overlay.pk).update(dropped=timezone.now())


def runbooks_using(*, symptom: Symptom, team: Team | None):
    """The runbooks naming the symptom, as far as `team` sees them."""
    from kb.selectors.catalog import runbook_catalog

    return Runbook.objects.filter(pk__in=runbook_catalog(team=team), symptom_uses__symptom=symptom).distinct()
