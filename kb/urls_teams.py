from __future__ import annotations

from django.urls import path

from kb.views import teams

urlpatterns = [
    path("teams/", teams.team_list, name="team_list"),
    path("switch-team/", teams.team_switch_view, name="team_switch"),
    path("teams/<slug:slug>/", teams.team_detail, name="team_detail"),
    path("teams/<slug:slug>/members/", teams.member_add, name="team_member_add"),
    path("teams/<slug:slug>/members/<int:user_id>/role/", teams.member_role, name="team_member_role"),
    path("teams/<slug:slug>/members/<int:user_id>/remove/", teams.member_remove, name="team_member_remove"),
]
