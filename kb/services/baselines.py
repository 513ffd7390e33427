"""Baselines on the web (issue 12): a team member marks an analysis of a healthy cluster; an
incident's analysis re-runs with one of the team's healthy analyses as its baseline, whose
bundle's templates drop out of leads and unmatched lines (analyzers/leads.py `Baseline`).

Another team's analysis is never a baseline: its bundle would leak into our result (what it
holds, by what drops out) and their marking would change what we see.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction

from kb.access import is_member
from kb.models import Analysis
from kb.services.analyses import analysis_start
from kb.services.storage import quota_admit


class BaselineError(ValueError):
    """The analysis cannot be the baseline (said why)."""


def analysis_mark_healthy(*, analysis: Analysis, user: Any, healthy: bool = True) -> Analysis:
    """Mark (or unmark) `analysis` as one of a healthy cluster: team members only."""
    if not is_member(user, analysis.team_id):
        raise PermissionDenied("Only the team's members mark its analyses healthy.")
    if healthy and analysis.status != Analysis.Status.DONE:
        raise BaselineError(f"analysis {analysis.pk} is {analysis.status}: only a finished analysis is a baseline")
    Analysis.objects.filter(pk=analysis.pk).update(healthy=healthy)
    analysis.healthy = healthy
    return analysis


def healthy_choices(*, analysis: Analysis) -> list[Analysis]:
    """The team's healthy analyses another analysis may take as its baseline."""
    return list(Analysis.objects.filter(team_id=analysis.team_id, healthy=True, status=Analysis.Status.DONE)
                .exclude(bundle_id=analysis.bundle_id).select_related("bundle__incident"))


def analysis_reanalyze_with_baseline(*, analysis: Analysis, baseline: Analysis, user: Any) -> Analysis:
    """A fresh analysis of `analysis`'s bundle against `baseline`'s (same team, marked healthy)."""
    if not is_member(user, analysis.team_id):
        raise PermissionDenied("Only the team's members re-analyse its incidents.")
    if baseline.team_id != analysis.team_id:
        raise BaselineError("another team's analysis is never a baseline")
    if not baseline.healthy or baseline.status != Analysis.Status.DONE:
        raise BaselineError(f"analysis {baseline.pk} is not a finished analysis marked healthy")
    with transaction.atomic():   # another analysis of the team: its hourly limit holds (QuotaExceeded, 429)
        quota_admit(team_id=analysis.team_id)
        return analysis_start(bundle=analysis.bundle, baseline=baseline)
