"""The team a user works in now (the header's team switcher).

A user in several teams chooses one; the choice is kept in the session and every
page that shows one team's catalog or incidents reads it here: runbook and symptom
pages, search, the incident list, the new-incident form. Membership is checked on
every switch and on every read, so a user removed from the team falls back to their
first team (kb.selectors.catalog.viewer_team) and never keeps seeing its catalog.
Direct links to another of the user's teams' incidents still open: access is
membership (kb.access), the choice is what lists and catalogs show.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest

from kb.models import Membership, Team
from kb.selectors.catalog import viewer_team

SESSION_KEY = "kb_team"


def current_team(request: HttpRequest) -> Team | None:
    """The chosen team if the user is still a member of it, else their first team (None: no team)."""
    if not hasattr(request, "_kb_current_team"):
        user, chosen = request.user, request.session.get(SESSION_KEY)
        membership = _membership(user, chosen) if chosen is not None else None
        request._kb_current_team = membership.team if membership else viewer_team(user)
    return request._kb_current_team


def team_switch(request: HttpRequest, team_id: Any) -> Team:
    """Make `team_id` the user's current team; PermissionDenied (nothing changes) unless a member."""
    try:
        team_id = int(team_id)
    except (TypeError, ValueError):
        raise PermissionDenied("No such team of yours.") from None
    membership = _membership(request.user, team_id)
    if membership is None:
        raise PermissionDenied("You are not a member of that team.")
    request.session[SESSION_KEY] = membership.team_id
    request._kb_current_team = membership.team
    return membership.team


def team_context(request: HttpRequest) -> dict[str, Any]:
    """The header's switcher (a context processor): the current team and the user's teams."""
    if not getattr(request, "user", None) or not request.user.is_authenticated:
        return {}
    teams = list(Team.objects.filter(memberships__user=request.user).order_by("name").distinct())
    return {"current_team": current_team(request) if teams else None, "my_teams": teams}


def _membership(user: Any, team_id: Any) -> Membership | None:
    """The user's membership of that team, or None (not a member, or not logged in)."""
    if not user.is_authenticated:
        return None
    return Membership.objects.filter(user=user, team_id=team_id).select_related("team").first()
