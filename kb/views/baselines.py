"""Baselines on the web (kb/services/baselines.py): mark healthy, re-analyse against one."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from kb.access import get_visible_or_404
from kb.models import Analysis
from kb.services.baselines import BaselineError, analysis_mark_healthy, analysis_reanalyze_with_baseline
from kb.services.storage import QuotaExceeded


@require_POST
def analysis_healthy(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = get_visible_or_404(Analysis.objects.all(), request.user, pk=pk)
    try:
        analysis_mark_healthy(analysis=analysis, user=request.user, healthy=request.POST.get("healthy", "1") == "1")
    except BaselineError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Analysis {pk} is {'a healthy baseline' if analysis.healthy else 'no baseline'}.")
    return redirect("analysis_detail", pk=pk)


@require_POST
def analysis_reanalyze_baseline(request: HttpRequest, pk: int) -> HttpResponse:
    analysis = get_visible_or_404(Analysis.objects.select_related("bundle"), request.user, pk=pk)
    chosen = request.POST.get("baseline", "")
    # Another team's analysis is not found: its existence is not ours to learn.
    baseline = Analysis.objects.filter(pk=int(chosen), team_id=analysis.team_id).first() if chosen.isdigit() else None
    if baseline is None:
        raise Http404("No such healthy analysis of your team.")
    try:
        new = analysis_reanalyze_with_baseline(analysis=analysis, baseline=baseline, user=request.user)
    except (BaselineError, QuotaExceeded) as exc:   # QuotaExceeded: the team's analyses per hour
        messages.error(request, str(exc))
        return redirect("analysis_detail", pk=pk)
    return redirect("analysis_detail", pk=new.pk)
