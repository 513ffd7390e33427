"""Incident and analysis pages: validate, call one selector or service, render.

Every object is fetched through kb.access, so another team's ids are 404s.
"""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers

from kb.access import get_visible_or_404
from kb.current_team import current_team
import kb.selectors.incidents
import kb.services.incidents
from kb.forms import IncidentCreateForm, IncidentFilterForm, IncidentUpdateForm
from kb.models import Analysis, Incident
from kb.selectors.incidents import user_teams
from kb.selectors.report import analysis_report, parse_zoom
from kb.services.baselines import healthy_choices
from kb.services.storage import incident_storage
from kb.views.pipeline import progress_context

LIST_LIMIT = 200


def _zoom(request: HttpRequest):
    """The timeline's time range from `tl_from` / `tl_to` (ISO timestamps), or None for all of it."""
    return parse_zoom(request.GET.get("tl_from"), request.GET.get("tl_to"))


def _get_incident(request: HttpRequest, pk: int) -> Incident:
    return get_visible_or_404(Incident.objects.select_related("team", "owner"), request.user, pk=pk)


def _get_analysis(request: HttpRequest, pk: int) -> Analysis:
    return get_visible_or_404(
        Analysis.objects.select_related("bundle__incident__team"), request.user, pk=pk
    )


@require_GET
@vary_on_headers("HX-Request")
def incident_list(request: HttpRequest) -> HttpResponse:
    teams = user_teams(user=request.user)
    form = IncidentFilterForm(request.GET, teams=teams)
    filters = form.cleaned_data if form.is_valid() else {}
    incidents = kb.selectors.incidents.incident_list(
        user=request.user, status=filters.get("status", ""), severity=filters.get("severity", ""),
        q=filters.get("q", ""), component=filters.get("component", ""), runbook=filters.get("runbook", ""),
        confirmed=filters.get("confirmed", False), team=filters.get("team") or current_team(request),
    )
    ctx = {"form": form, "incidents": incidents[:LIST_LIMIT], "limit": LIST_LIMIT,
           "filtered": any(filters.values()), "can_create": teams.exists(), "many_teams": teams.count() > 1}
    return render(request, "kb/incident_list.html", ctx)


@require_http_methods(["GET", "POST"])
def incident_create(request: HttpRequest) -> HttpResponse:
    teams = user_teams(user=request.user)
    current = current_team(request)
    form = IncidentCreateForm(request.POST or None, teams=teams,
                              initial={"team": current.pk} if current and current in teams else None)
    if request.method == "POST" and not teams:
        form.add_error(None, "You are in no team, so there is nowhere to file an incident.")
    elif request.method == "POST" and form.is_valid():
        try:
            incident = kb.services.incidents.incident_create(
                team=form.cleaned_data["team"], title=form.cleaned_data["title"],
                severity=form.cleaned_data["severity"], user=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            return redirect("incident_detail", pk=incident.pk)
    return render(request, "kb/incident_create.html", {"form": form, "teams": teams},
                  status=400 if form.errors else 200)


def _incident_page(request: HttpRequest, incident: Incident, form: IncidentUpdateForm,
                   status: int = 200) -> HttpResponse:
    detail = kb.selectors.incidents.incident_detail(incident=incident)
    latest = detail["latest_done"]
    ctx = {
        "incident": incident, "form": form, **detail,
        "in_flight": [progress_context(a) for a in detail["in_flight"]],
        "analysis": latest, "report": analysis_report(analysis=latest, zoom=_zoom(request)) if latest else None,
        "storage": incident_storage(incident=incident),
    }
    return render(request, "kb/incident_detail.html", ctx, status=status)


@require_GET
def incident_detail(request: HttpRequest, pk: int) -> HttpResponse:
    incident = _get_incident(request, pk)
    return _incident_page(request, incident, IncidentUpdateForm(incident=incident))


@require_POST
def incident_update(request: HttpRequest, pk: int) -> HttpResponse:
    incident = _get_incident(request, pk)
    form = IncidentUpdateForm(request.POST, incident=incident)
    if form.is_valid():
        try:
            kb.services.incidents.incident_update(
                incident=incident, status=form.cleaned_data["status"],
                severity=form.cleaned_data["severity"], owner=form.cleaned_data["owner"], set_owner=True,
                actor=request.user,
            )
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, "Incident updated.")
            return redirect("incident_detail", pk=incident.pk)
    incident.refresh_from_db()
    return _incident_page(request, incident, form, status=400)


QUICK_STATUSES = {"resolved": "Incident resolved.", "duplicate": "Incident marked as a duplicate.",
                  "open": "Incident reopened."}


@require_POST
def incident_quick_status(request: HttpRequest, pk: int) -> HttpResponse:
    """One click from the incident header: resolve, mark duplicate, reopen."""
    incident = _get_incident(request, pk)
    status = request.POST.get("status", "")
    if status not in QUICK_STATUSES:
        messages.error(request, "Unknown status.")
        return redirect("incident_detail", pk=incident.pk)
    kb.services.incidents.incident_update(incident=incident, status=status, actor=request.user)
    messages.success(request, QUICK_STATUSES[status])
    return redirect("incident_detail", pk=incident.pk)


@require_GET
def analysis_detail(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = _get_analysis(request, pk)
    done = analysis.status == Analysis.Status.DONE and analysis.result is not None
    ctx = {
        **progress_context(analysis), "incident": analysis.bundle.incident, "bundle": analysis.bundle,
        "report": analysis_report(analysis=analysis, zoom=_zoom(request)) if done else None,
        "healthy_choices": healthy_choices(analysis=analysis) if done else [],
    }
    return render(request, "kb/analysis_detail.html", ctx)


@require_GET
@vary_on_headers("HX-Request")
def analysis_context(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = _get_analysis(request, pk)
    try:
        line = int(request.GET.get("line", ""))
    except ValueError:
        raise Http404("No such line.") from None
    end = request.GET.get("end", "")
    context = kb.services.incidents.analysis_context(analysis=analysis, path=request.GET.get("path", ""), line=line,
                                                     end=int(end) if end.isdigit() else None)
    if context is None:
        raise Http404("No such file in this analysis.")
    ctx = {"analysis": analysis, "context": context}
    if request.htmx:
        return render(request, "kb/_evidence_context.html", ctx)
    return render(request, "kb/analysis_context.html", ctx)
