"""The teams screen (kb.services.teams holds the rules):

    GET  /teams/                                   your teams; POST creates one (staff, team admins)
    GET  /teams/<slug>/                            members, roles and recent changes (members only)
    POST /teams/<slug>/members/                    add a member (the team's admins)
    POST /teams/<slug>/members/<user_id>/role/     set a member's role (the team's admins)
    POST /teams/<slug>/members/<user_id>/remove/   remove a member (the team's admins)
    POST /switch-team/  team=<id>[, next=<path>]   work in another of your teams (kb.current_team);
                                                   403 and no change for a team you are not in

Plain forms, no JavaScript needed. Another team's page is a 404 (no existence
leak); a member who is not an admin gets 403 for a change; a refused change (the
last admin, an unknown user) re-renders the page with the reason and status 409
or 400. A successful change redirects back (POST/redirect/GET).
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

from kb.access import get_visible_or_404, require_team_admin, team_can_create, team_is_admin
from kb.current_team import team_switch
from kb.forms import MemberAddForm, MemberRoleForm, TeamCreateForm
from kb.models import Membership, Team
from kb.services import teams


def _team_or_404(request: HttpRequest, slug: str) -> Team:
    return get_visible_or_404(Team.objects.all(), request.user, team_field="pk", slug=slug)


def _errors(exc: ValidationError) -> list[str]:
    if hasattr(exc, "error_dict"):
        return [m for ms in exc.message_dict.values() for m in ms]
    return exc.messages


@require_http_methods(["GET", "POST"])
def team_list(request: HttpRequest) -> HttpResponse:
    form, status = TeamCreateForm(request.POST or None), 200
    if request.method == "POST":
        if not team_can_create(request.user):
            raise PermissionDenied("Only staff and team admins may create a team.")
        if form.is_valid():
            try:
                team = teams.team_create(actor=request.user, name=form.cleaned_data["name"])
            except ValidationError as exc:
                form.add_error("name", _errors(exc))
            else:
                messages.success(request, f"Team {team.name} created; you are its admin.")
                return redirect("team_detail", slug=team.slug)
        status = 400
    memberships = Membership.objects.filter(user=request.user).select_related("team").order_by("team__name")
    return render(request, "kb/team_list.html", {
        "memberships": memberships, "form": form, "can_create": team_can_create(request.user)}, status=status)


def _detail(request: HttpRequest, team: Team, *, status: int = 200, errors: list[str] | None = None,
            add_form: MemberAddForm | None = None) -> HttpResponse:
    members = list(team.memberships.select_related("user").order_by("user__username"))
    return render(request, "kb/team_detail.html", {
        "team": team, "members": members, "is_admin": team_is_admin(request.user, team),
        "admins": sum(m.role == Membership.Role.ADMIN for m in members),
        "add_form": add_form or MemberAddForm(), "roles": Membership.Role.choices,
        "changes": teams.team_changes(team=team), "errors": errors or [],
    }, status=status)


def team_detail(request: HttpRequest, slug: str) -> HttpResponse:
    return _detail(request, _team_or_404(request, slug))


@require_POST
def member_add(request: HttpRequest, slug: str) -> HttpResponse:
    team = _team_or_404(request, slug)
    form = MemberAddForm(request.POST)
    if not form.is_valid():
        require_team_admin(request.user, team)  # a non-admin learns nothing from a bad form
        return _detail(request, team, status=400, add_form=form)
    try:
        membership = teams.member_add(team=team, actor=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _detail(request, team, status=400, errors=_errors(exc), add_form=form)
    messages.success(request, f"{membership.user.get_username()} added as {membership.role}.")
    return redirect("team_detail", slug=team.slug)


@require_POST
def member_role(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    team = _team_or_404(request, slug)
    form = MemberRoleForm(request.POST)
    if not form.is_valid():
        require_team_admin(request.user, team)
        return _detail(request, team, status=400, errors=["Choose a role: admin or member."])
    try:
        membership = teams.member_set_role(team=team, actor=request.user, user_id=user_id, **form.cleaned_data)
    except ValidationError as exc:
        return _detail(request, team, status=409, errors=_errors(exc))
    messages.success(request, f"{membership.user.get_username()} is now {membership.role}.")
    return redirect("team_detail", slug=team.slug)


@require_POST
def member_remove(request: HttpRequest, slug: str, user_id: int) -> HttpResponse:
    team = _team_or_404(request, slug)
    try:
        teams.member_remove(team=team, actor=request.user, user_id=user_id)
    except ValidationError as exc:
        return _detail(request, team, status=409, errors=_errors(exc))
    messages.success(request, "Member removed.")
    if not Membership.objects.filter(team=team, user=request.user).exists():
        return redirect("team_list")  # an admin who removed themselves can no longer see the team
    return redirect("team_detail", slug=team.slug)


@require_POST
def team_switch_view(request: HttpRequest) -> HttpResponse:
    team = team_switch(request, request.POST.get("team"))   # PermissionDenied (403): not a member
    messages.success(request, f"You are working in {team.name}.")
    target = request.POST.get("next") or ""
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = "/"
    return redirect(target)
