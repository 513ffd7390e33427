"""Teams and their members, as the teams screen changes them (kb/views/teams.py).

Who may (kb.access): staff and team admins create a team, and become its first
admin; only a team's admins add members, set roles and remove members. A team
never loses its last admin: demoting or removing the only one is refused, and
the check runs with the team's admin rows locked, so two admins demoting each
other at once cannot both succeed.

Every change is recorded in Django's admin log (LogEntry) against the team: the
team page lists it, and so does the team's history in the admin. Incidents have
their own activity stream (kb.services.activity); a team change belongs to no
incident.
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils.text import slugify

from kb.access import require_team_admin, team_can_create
from kb.models import Membership, Team

Role = Membership.Role
MAX_LOG_ENTRIES = 20


def _record(*, team: Team, actor: Any, message: str, flag: int = CHANGE) -> None:
    LogEntry.objects.log_actions(user_id=actor.pk, queryset=[team], action_flag=flag, change_message=message,
                                 single_object=True)


def team_changes(*, team: Team, limit: int = MAX_LOG_ENTRIES) -> list[LogEntry]:
    """The newest recorded changes of a team (its members see them)."""
    kind = ContentType.objects.get_for_model(Team)
    return list(LogEntry.objects.filter(content_type=kind, object_id=str(team.pk))
                .select_related("user").order_by("-action_time", "-id")[:limit])


def team_create(*, actor: Any, name: str) -> Team:
    if not team_can_create(actor):
        raise PermissionDenied("Only staff and team admins may create a team.")
    name = " ".join((name or "").split())
    slug = slugify(name)
    if not slug:
        raise ValidationError({"name": "A team name needs letters or digits."})
    if Team.objects.filter(name__iexact=name).exists() or Team.objects.filter(slug=slug).exists():
        raise ValidationError({"name": f"A team named “{name}” exists already."})
    try:
        with transaction.atomic():
            team = Team.objects.create(name=name, slug=slug)
            Membership.objects.create(user=actor, team=team, role=Role.ADMIN)
            _record(team=team, actor=actor, message=f"created the team with {actor.get_username()} as admin",
                    flag=ADDITION)
    except IntegrityError:  # created by someone else between the check and the insert
        raise ValidationError({"name": f"A team named “{name}” exists already."}) from None
    return team


def member_add(*, team: Team, actor: Any, username: str, role: str) -> Membership:
    require_team_admin(actor, team)
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    user = get_user_model().objects.filter(username=(username or "").strip(), is_active=True).first()
    if user is None:
        raise ValidationError({"username": f"No active user is named “{username.strip()}”."})
    try:
        with transaction.atomic():
            membership = Membership.objects.create(user=user, team=team, role=role)
            _record(team=team, actor=actor, message=f"added {user.get_username()} as {role}")
    except IntegrityError:
        raise ValidationError({"username": f"{user.get_username()} is a member already."}) from None
    return membership


def _membership(team: Team, user_id: int) -> Membership:
    membership = Membership.objects.select_related("user").filter(team=team, user_id=user_id).first()
    if membership is None:
        raise ValidationError("That user is not a member of this team.")
    return membership


def _keep_an_admin(team: Team, leaving: Membership) -> None:
    """Refuse to take away the team's last admin. Locks the team's admin rows
    (PostgreSQL; SQLite transactions here are IMMEDIATE, so serial already)."""
    admins = list(Membership.objects.select_for_update().filter(team=team, role=Role.ADMIN)
                  .values_list("pk", flat=True))
    if leaving.role == Role.ADMIN and admins == [leaving.pk]:
        raise ValidationError(
            f"{leaving.user.get_username()} is the team's only admin: make someone else admin first.")


def member_set_role(*, team: Team, actor: Any, user_id: int, role: str) -> Membership:
    require_team_admin(actor, team)
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    with transaction.atomic():
        membership = _membership(team, user_id)
        if membership.role == role:
            return membership
        if role != Role.ADMIN:
            _keep_an_admin(team, membership)
        old = membership.role
        membership.role = role
        membership.save(update_fields=["role"])
        _record(team=team, actor=actor, message=f"made {membership.user.get_username()} {role} (was {old})")
    return membership


def member_remove(*, team: Team, actor: Any, user_id: int) -> None:
    require_team_admin(actor, team)
    with transaction.atomic():
        membership = _membership(team, user_id)
        _keep_an_admin(team, membership)
        membership.delete()
        _record(team=team, actor=actor, message=f"removed {membership.user.get_username()} ({membership.role})")
