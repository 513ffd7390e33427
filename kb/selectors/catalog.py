"""The catalog as one team sees it: the shipped runbooks, with the team's own
overlays in place of the shipped rows they change, plus the team's own
runbooks and the runbooks other teams published, and the team's own versions
of library symptoms (kb.services.symptom_overlays); symptoms a team drafted
are its own until published (symptom_catalog). Pages, search and every
analysis of the team read runbooks through here, so one team's edits never
reach another team (kb/README.md "Runbook governance").
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from django.http import Http404

from kb.models import Membership, Runbook, Symptom, Team


def _team_id(team: Team | int | None) -> int | None:
    return team.pk if isinstance(team, Team) else team


def viewer_team(user: Any) -> Team | None:
    """The team whose catalog a user's pages show: their first team (the one an
    upload without an incident goes to), or None (the shipped catalog only)."""
    if not getattr(user, "is_authenticated", False):
        return None
    membership = (Membership.objects.filter(user=user).select_related("team")
                  .order_by("created", "id").first())
    return membership.team if membership else None


def runbook_catalog(*, team: Team | int | None) -> QuerySet[Runbook]:
    """Every runbook `team` sees, one row per slug (None: the shipped and published ones)."""
    team_id = _team_id(team)
    shared = Q(overlay_of__isnull=True) & (Q(team__isnull=True) | Q(published=True))
    if team_id is None:
        return Runbook.objects.filter(shared)
    live_overlay = Q(overlay_of__isnull=False, team_id=team_id, overlay_dropped__isnull=True)
    overlaid = Runbook.objects.filter(live_overlay).values("overlay_of_id")
    own = Q(overlay_of__isnull=True, team_id=team_id)
    return Runbook.objects.filter(((shared | own) & ~Q(pk__in=overlaid)) | live_overlay)


def symptom_catalog(*, team: Team | int | None) -> QuerySet[Symptom]:
    """The symptoms `team` sees (and may name in its runbooks): the library, the published
    team symptoms and its own (None: the library and the published ones)."""
    shared = Q(team__isnull=True) | Q(published=True)
    team_id = _team_id(team)
    return Symptom.objects.filter(shared if team_id is None else shared | Q(team_id=team_id))


def catalog_symptom_or_404(*, team: Team | int | None, symptom_id: str, maintainer: bool = False) -> Symptom:
    """A symptom as the team may reach it; a maintainer reaches every team's (to review it)."""
    rows = Symptom.objects.all() if maintainer else symptom_catalog(team=team)
    symptom = rows.filter(id=symptom_id).first()
    if symptom is None:
        raise Http404("No such symptom.")
    return symptom


def catalog_runbook_or_404(*, team: Team | int | None, slug: str, maintainer: bool = False) -> Runbook:
    """The runbook `slug` as `team` sees it; a maintainer also reaches every team's
    own runbook (to review it before publishing), never another team's overlay."""
    rows = Runbook.objects.select_related("overlay_of", "team")
    runbook = rows.filter(pk__in=runbook_catalog(team=team), slug=slug).first()
    if runbook is None and maintainer:
        runbook = rows.filter(slug=slug, overlay_of__isnull=True).first()
    if runbook is None:
        raise Http404("No such runbook.")
    return runbook


def unpublished_team_runbooks() -> QuerySet[Runbook]:
    """Team runbooks no other team sees yet (the maintainers' review list)."""
    return (Runbook.objects.filter(team__isnull=False, overlay_of__isnull=True, published=False)
            .select_related("team").order_by("-updated"))


def catalog_metas(*, team: Team | int | None) -> list[dict[str, Any]]:
    """The runbooks an analysis of `team` runs, in slug order (the engine's input),
    with the team's own versions of library symptoms in the runbooks naming them."""
    from kb.services.symptom_overlays import catalog_resolve

    return catalog_resolve(list(runbook_catalog(team=team).order_by("slug").values_list("meta", flat=True)),
                           _team_id(team))


def shipped_runbook(*, slug: str) -> Runbook | None:
    return Runbook.objects.filter(slug=slug, team__isnull=True, overlay_of__isnull=True).first()


def catalog_symptoms(*, ids: set[str | None], team: Team | int | None) -> dict[str, tuple[str, dict[str, Any]]]:
    """id -> (title, definition) of these library symptoms as `team` sees them:
    its own versions (kb.services.symptom_overlays) in place of the library's."""
    from kb.models import Symptom, SymptomOverlay

    ids = set(ids) - {None}
    found = {i: (t, d) for i, t, d in Symptom.objects.filter(id__in=ids).values_list("id", "title", "definition")}
    if _team_id(team) is not None:
        found.update({i: (t, d) for i, t, d in SymptomOverlay.objects.filter(
            team_id=_team_id(team), dropped__isnull=True, symptom_id__in=ids).values_list(
            "symptom_id", "title", "definition")})
    return found
