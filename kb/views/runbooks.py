from __future__ import annotations

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods
from django.views.decorators.vary import vary_on_headers

from kb.access import is_maintainer, runbook_can_edit, runbook_edits_for_everyone
from kb.current_team import current_team
from kb.forms import RunbookEditForm, RunbookFilterForm, WordSearchForm
from kb.selectors.catalog import catalog_runbook_or_404
from kb.selectors.runbooks import (
    revision_compare,
    revision_latest,
    revision_list,
    runbook_detail as runbook_detail_selector,
    runbook_list as runbook_list_selector,
    runbook_recent,
)
from kb.services.export import runbook_text
from kb.services.governance import runbook_edit_save
from kb.views.editing import file_edit


def _int_or_none(value: str | None) -> int | None:
    try:
        return int(value) if value else None
    except ValueError:
        return None


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    ctx = {
        "form": WordSearchForm(),
        "recent": runbook_recent(team=current_team(request), limit=10),
        "runbook_count": runbook_list_selector(team=current_team(request)).count(),
    }
    return render(request, "kb/home.html", ctx)


@require_GET
@vary_on_headers("HX-Request")
def runbook_list(request: HttpRequest) -> HttpResponse:
    form = RunbookFilterForm(request.GET)
    filters = form.cleaned_data if form.is_valid() else {}
    runbooks = runbook_list_selector(
        team=current_team(request), component=filters.get("component", ""), severity=filters.get("severity", "")
    )
    ctx = {"form": form, "runbooks": runbooks, "filtered": any(filters.values())}
    # htmx filtering swaps only the table; a history restore wants the whole page.
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "kb/_runbook_table.html", ctx)
    return render(request, "kb/runbook_list.html", ctx)


@require_GET
def runbook_detail(request: HttpRequest, slug: str) -> HttpResponse:
    team = current_team(request)
    runbook = catalog_runbook_or_404(team=team, slug=slug, maintainer=is_maintainer(request.user))
    ctx = {
        "runbook": runbook, "viewer_team": team,
        "can_edit": runbook_can_edit(user=request.user, runbook=runbook, team=team),
        **runbook_detail_selector(runbook=runbook, team=team),
    }
    return render(request, "kb/runbook_detail.html", ctx)


@require_http_methods(["GET", "POST"])
def runbook_edit(request: HttpRequest, slug: str) -> HttpResponse:
    team = current_team(request)
    runbook = catalog_runbook_or_404(team=team, slug=slug)
    if not runbook_can_edit(user=request.user, runbook=runbook, team=team):
        raise PermissionDenied("Only maintainers change the shipped runbooks, and team admins their team's.")

    def save(*, text: str, author, message: str, base_revision: int | None):
        return runbook_edit_save(runbook=runbook, team=team, user=author, text=text, message=message,
                                 base_revision=base_revision, propose=bool(request.POST.get("propose")))

    form, response = file_edit(
        request, RunbookEditForm, text=lambda: runbook_text(runbook=runbook), last=revision_latest(runbook=runbook),
        save=save, done=reverse("runbook_detail", args=[runbook.slug]))
    if response is not None:
        return response
    symptoms = runbook_detail_selector(runbook=runbook, team=team)["symptoms"]
    ctx = {"runbook": runbook, "form": form, "symptoms": symptoms, "viewer_team": team,
           "for_everyone": runbook_edits_for_everyone(user=request.user, runbook=runbook)}
    return render(request, "kb/runbook_edit.html", ctx)


@require_GET
def runbook_history(request: HttpRequest, slug: str) -> HttpResponse:
    team = current_team(request)
    runbook = catalog_runbook_or_404(team=team, slug=slug, maintainer=is_maintainer(request.user))
    old, new, diff = revision_compare(
        runbook=runbook, a=_int_or_none(request.GET.get("a")), b=_int_or_none(request.GET.get("b"))
    )
    ctx = {
        "runbook": runbook,
        "revisions": revision_list(runbook=runbook),
        "old": old,
        "new": new,
        "diff": diff,
        "can_edit": runbook_can_edit(user=request.user, runbook=runbook, team=team),
    }
    return render(request, "kb/runbook_history.html", ctx)


@require_GET
def runbook_raw(request: HttpRequest, slug: str) -> HttpResponse:
    runbook = catalog_runbook_or_404(team=current_team(request), slug=slug,
                                     maintainer=is_maintainer(request.user))
    response = HttpResponse(runbook_text(runbook=runbook), content_type="text/markdown; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{runbook.slug}.md"'
    return response
