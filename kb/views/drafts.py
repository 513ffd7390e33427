"""Draft a runbook from a lead of an analysis (issue 12): the editor pre-filled with the draft
(kb/services/drafts.py); saving validates it and stores it as a runbook of the analysis' team."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from analyzers.draft import DraftError
from analyzers.runbooks import RunbookError
from kb.access import get_visible_or_404, team_is_admin
from kb.forms import LeadDraftForm
from kb.models import Analysis
from kb.services.drafts import draft_save, lead_draft


@require_http_methods(["GET", "POST"])
def lead_draft_edit(request: HttpRequest, pk: int, rank: int) -> HttpResponse:
    analysis = get_visible_or_404(Analysis.objects.select_related("bundle__incident__team", "team"),
                                  request.user, pk=pk)
    if not team_is_admin(request.user, analysis.team):
        raise PermissionDenied("Only the team's admins write its runbooks.")
    try:
        draft = lead_draft(analysis=analysis, rank=rank)
    except DraftError as exc:
        if "has no lead" in str(exc):
            raise Http404(str(exc)) from None
        messages.error(request, f"This lead cannot be drafted: {exc}")
        return redirect("analysis_detail", pk=analysis.pk)
    form = LeadDraftForm(request.POST or None, initial={"symptom": draft.symptom_text, "text": draft.runbook_text})
    if request.method == "POST" and form.is_valid():
        try:
            runbook = draft_save(analysis=analysis, rank=rank, team=analysis.team, author=request.user,
                                 runbook_text=form.cleaned_data["text"].replace("\r\n", "\n"),
                                 symptom_text=form.cleaned_data["symptom"].replace("\r\n", "\n"))
        except (RunbookError, DraftError) as exc:
            form.add_error("text", str(exc))
        else:
            messages.success(request, f"Created {runbook.slug} for {analysis.team.name}, with the incident's lines "
                                      "as its positive fixture. Re-analyse the incident to see it as a finding.")
            return redirect("runbook_detail", slug=runbook.slug)
    return render(request, "kb/lead_draft.html", {"form": form, "analysis": analysis, "rank": rank, "draft": draft},
                  status=400 if form.errors else 200)
