"""Reads for the incident pages (HackSoft selectors).

Every query that starts from a user goes through kb.access, so another
team's rows never reach a page. The analysis report (a stored result turned
into what the templates show) is kb.selectors.report.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import F, OuterRef, QuerySet, Subquery
from django.db.models.fields.json import KT

from kb.access import visible
from kb.models import Analysis, Bundle, Incident, Team
from kb.selectors.collab import incident_filter



# -- incidents ---------------------------------------------------------------

def user_teams(*, user: Any) -> QuerySet[Team]:
    return Team.objects.filter(memberships__user=user).order_by("name").distinct()


def team_members(*, team: Team) -> QuerySet:
    return get_user_model().objects.filter(memberships__team=team).order_by("username").distinct()


def incident_list(*, user: Any, status: str = "", severity: str = "", q: str = "", component: str = "",
                  runbook: str = "", confirmed: bool = False, team: Team | None = None) -> QuerySet[Incident]:
    """The user's teams' incidents, newest first, each annotated with the top
    finding of its latest done analysis (`top_runbook`, `top_title`,
    `top_confidence`) and the status of its latest analysis (`latest_status`).
    `q` searches titles, notes and matched runbooks; runbook/component/confirmed/team
    as in kb.selectors.collab.incident_filter."""
    qs = visible(Incident.objects.select_related("team", "owner"), user)
    if status:
        qs = qs.filter(status=status)
    if severity:
        qs = qs.filter(severity=severity)
    qs = incident_filter(qs, component=component, runbook=runbook, confirmed=confirmed, team=team, q=q)
    analyses = Analysis.objects.filter(bundle__incident=OuterRef("pk")).order_by("-created", "-pk")
    done = analyses.filter(status=Analysis.Status.DONE).order_by(F("finished").desc(nulls_last=True), "-created", "-pk")
    def top(key: str) -> Subquery:
        # KT: the value as text (->> / json_extract), the same on PostgreSQL and SQLite.
        return Subquery(done.annotate(v=KT(f"result__findings__0__{key}")).values("v")[:1])

    return qs.annotate(
        latest_status=Subquery(analyses.values("status")[:1]),
        top_runbook=top("runbook"), top_title=top("title"), top_confidence=top("confidence"),
    ).order_by("-created", "-pk")


def incident_detail(*, incident: Incident) -> dict[str, Any]:
    """Bundles with their analyses (newest first), the analyses still queued or
    running, and the latest done analysis."""
    bundles = list(
        Bundle.objects.filter(incident=incident).select_related("uploaded_by").prefetch_related("analyses")
    )
    latest_done = (
        Analysis.objects.filter(bundle__incident=incident, status=Analysis.Status.DONE)
        .select_related("bundle")
        .order_by(F("finished").desc(nulls_last=True), "-created", "-pk")
        .first()
    )
    in_flight = [a for b in bundles for a in b.analyses.all()
                 if a.status in (Analysis.Status.QUEUED, Analysis.Status.RUNNING)]
    return {"bundles": bundles, "latest_done": latest_done, "in_flight": in_flight,
            "members": team_members(team=incident.team)}
