"""Who may see and change what: the one home of membership and edit rules.

- Team isolation: every incident, bundle, analysis and annotation belongs to a
  team, and only that team's members see it. Another team's id is a 404, never
  a 403 (no existence leak).
- Annotations and runbook field notes are edited or deleted by their author or
  an admin of their team.
- Runbooks (kb/README.md "Runbook governance"): the shipped catalog changes
  only through its files or by a site maintainer (staff); a team admin's edit
  of a shipped runbook becomes the team's overlay, seen by that team alone.
  A team's own runbooks and overlays are edited by its admins (and staff for
  team runbooks). Library symptoms likewise: staff change the library, a
  team admin's edit is the team's own version of the symptom.
- Teams: a team's page is its members'; only its admins add or remove members
  and set roles; a team always keeps one admin (kb.services.teams). Staff and
  team admins may create a team.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404

from kb.models import Annotation, Membership, Runbook, RunbookNote, Symptom, Team


def team_ids(user) -> list[int]:
    if not user.is_authenticated:
        return []
    return list(user.memberships.values_list("team_id", flat=True))


def visible(qs: QuerySet, user, team_field: str = "team") -> QuerySet:
    """The rows of `qs` whose team the user belongs to."""
    return qs.filter(**{f"{team_field}__in": team_ids(user)})


def get_visible_or_404(qs: QuerySet, user, team_field: str = "team", **lookup) -> Model:
    try:
        return visible(qs, user, team_field).get(**lookup)
    except (qs.model.DoesNotExist, ValueError, TypeError):
        raise Http404("No such object.") from None


def is_member(user: Any, team: Team | int) -> bool:
    team_id = team if isinstance(team, int) else team.pk
    return bool(getattr(user, "is_authenticated", False)) and Membership.objects.filter(
        user=user, team_id=team_id).exists()


def require_member(user: Any, team: Team | int) -> None:
    if not is_member(user, team):
        raise PermissionDenied("Only members of the team may do this.")


def admin_team_ids(user: Any) -> set[int]:
    if not getattr(user, "is_authenticated", False):
        return set()
    return set(Membership.objects.filter(user=user, role=Membership.Role.ADMIN).values_list("team_id", flat=True))


def authored_can_edit(obj: Annotation | RunbookNote, user: Any, admin_of: set[int]) -> bool:
    """The edit rule of annotations and field notes: their author, or an admin of
    their team. For many rows at once, with admin_of = admin_team_ids(user); the
    rows must be of the user's teams (kb.access.visible)."""
    return obj.author_id == user.pk or obj.team_id in admin_of


def annotation_can_edit(*, annotation: Annotation, user: Any) -> bool:
    return is_member(user, annotation.team_id) and authored_can_edit(annotation, user, admin_team_ids(user))


def runbook_note_can_edit(*, note: RunbookNote, user: Any) -> bool:
    return is_member(user, note.team_id) and authored_can_edit(note, user, admin_team_ids(user))


def is_maintainer(user: Any) -> bool:
    """A site maintainer: may change what every team sees (the shipped catalog, publishing)."""
    return bool(getattr(user, "is_authenticated", False) and user.is_active
                and (user.is_staff or user.is_superuser))


def runbook_edits_for_everyone(*, user: Any, runbook: Runbook) -> bool:
    """Whether saving this row changes the shipped runbook every team sees."""
    return runbook.is_shipped and is_maintainer(user)


def runbook_can_edit(*, user: Any, runbook: Runbook, team: Team | None = None) -> bool:
    """Whether the user may save an edit of the row `team`'s catalog shows them:
    a shipped runbook (maintainers: for everyone; an admin of `team`: as the
    team's overlay), the team's overlay or own runbook (its admins; staff too
    for a team runbook)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if runbook.is_shipped:
        return is_maintainer(user) or (team is not None and team.pk in admin_team_ids(user))
    if runbook.overlay_of_id is None and is_maintainer(user):
        return True
    return runbook.team_id in admin_team_ids(user)


def symptom_can_edit(*, user: Any, symptom: Symptom, team: Team | None = None) -> bool:
    """A library symptom is part of every team's catalog (each runbook using it
    carries its definition): a maintainer changes it for everyone, an admin of
    `team` saves the team's own version (kb.services.symptom_overlays)."""
    return is_maintainer(user) or (team is not None and team.pk in admin_team_ids(user))


def symptom_team_edits_row(*, symptom: Symptom, team: Team | None) -> bool:
    """A team's own symptom, not yet published, is edited in place by the team's admins
    (nobody else sees it); once published it is in every team's catalog, like the library."""
    return (team is not None and symptom.team_id == team.pk and not symptom.published)


def team_is_admin(user: Any, team: Team | int) -> bool:
    team_id = team if isinstance(team, int) else team.pk
    return team_id in admin_team_ids(user)


def require_team_admin(user: Any, team: Team) -> None:
    """Changing a team's members is for that team's admins only (staff included:
    staff manage teams in the Django admin, not as a back door here)."""
    if not team_is_admin(user, team):
        raise PermissionDenied("Only an admin of the team may change its members.")


def team_can_create(user: Any) -> bool:
    """Staff, and anyone who is already an admin of a team, may create a team
    (and become its first admin)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    return bool(user.is_staff or user.is_superuser or admin_team_ids(user))
