"""Measured precision of runbooks: from confirm/reject feedback, else from the
fixture set (kb/data/fixture_precision.json, written by
`python -m scripts.calibration --write`), labelled as such.

Feedback counts verdicts of all teams, as the field notes' tally does: a
count and a ratio show no team's incidents, reasons or analyses.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from django.db.models import Count, OuterRef, Q, Subquery

from analyzers.calibration import Observation
from kb.models import Finding, FindingFeedback

FIXTURE_PRECISION = Path(__file__).resolve().parent.parent / "data" / "fixture_precision.json"


@lru_cache(maxsize=1)
def _fixture_table() -> dict[str, dict[str, Any]]:
    try:
        return json.loads(FIXTURE_PRECISION.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def runbook_precision(*, slug: str) -> dict[str, Any] | None:
    """{source: feedback | fixtures, precision (0-1), count, ...}, or None when neither measured it."""
    counts = FindingFeedback.objects.filter(slug=slug).aggregate(
        confirmed=Count("id", filter=Q(verdict=FindingFeedback.Verdict.CONFIRM)),
        rejected=Count("id", filter=Q(verdict=FindingFeedback.Verdict.REJECT)),
    )
    total = counts["confirmed"] + counts["rejected"]
    if total:
        return {"source": "feedback", "precision": counts["confirmed"] / total, "count": total, **counts}
    row = _fixture_table().get(slug)
    if not row or not row.get("findings"):
        return None
    return {"source": "fixtures", "precision": row["precision"], "count": row["findings"],
            "positive_cases": row["positive_cases"], "found_in_positive": row["found_in_positive"],
            "near_miss_cases": row["near_miss_cases"], "found_in_near_miss": row["found_in_near_miss"]}


def feedback_observations() -> list[Observation]:
    """Every verdict as an observation: the confidence its finding was shown
    with, and whether it was confirmed (for the reliability table)."""
    confidence = Finding.objects.filter(analysis=OuterRef("analysis"), slug=OuterRef("slug")).values("confidence")[:1]
    rows = FindingFeedback.objects.annotate(confidence=Subquery(confidence)).values_list("slug", "confidence", "verdict")
    return [Observation(slug, conf, verdict == FindingFeedback.Verdict.CONFIRM)
            for slug, conf, verdict in rows if conf is not None]
