"""The templates of an analysis's baseline (issue 12): what the worker passes to the engine
as `baseline=`. Apart from kb/services/baselines.py, which chooses baselines and starts
analyses, so that the analysis service imports it without a cycle."""

from __future__ import annotations

from analyzers.baseline import baseline_of
from analyzers.leads import Baseline
from kb.models import Analysis


def analysis_baseline(analysis: Analysis, runbooks, runner, limits):
    """The templates of the baseline analysis's bundle (same team: checked when it was chosen,
    and again here), or None. Named in the result by the baseline's upload name, never its path."""
    base = analysis.baseline
    if base is None or base.team_id != analysis.team_id:
        return None
    found = baseline_of([base.bundle.stored_path], runbooks, limits=limits, runner=runner.run,
                        range_bytes=runner.range_bytes)
    return Baseline(path=f"analysis {base.pk} ({base.bundle.original_name})", templates=found.templates)
