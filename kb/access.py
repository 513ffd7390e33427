"""Team isolation: every incident, bundle, analysis and annotation belongs to a team,
and only that team's members see it. Another team's id is a 404, never a 403
(no existence leak)."""

from __future__ import annotations

from django.db.models import Model, QuerySet
from django.http import Http404


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
